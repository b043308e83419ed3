"""The publishing wing: reports and the site, submissions, MTEB, Hub cards."""
