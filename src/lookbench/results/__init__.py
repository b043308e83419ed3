"""Result files: the versioned JSON summary and the per-query parquet file of a run."""
