"""The builder's dedup helpers: the batch's stored fingerprints, pair decisions, groups and the embedding tier."""
