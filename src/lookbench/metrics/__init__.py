"""LookBench metrics: relevance from labels, per-query ranking metrics, aggregation and bootstrap."""
