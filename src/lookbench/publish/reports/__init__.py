"""Static views of result files: the leaderboard site and the visual retrieval report."""
