"""Pair the queries of two per-query tables for a paired test."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from lookbench.errors import ResultError


def _keys(table: pa.Table, column: str) -> list[str]:
    return [f"{s}\0{v}" for s, v in zip(table["subset"].to_pylist(), table[column].to_pylist(), strict=True)]


def pair_queries(a: pa.Table, b: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of A and of B that score the same query, and A's cluster ids (kept whole when resampling)."""
    index_b = {key: i for i, key in enumerate(_keys(b, "query_row"))}
    pairs = [(i, index_b[key]) for i, key in enumerate(_keys(a, "query_row")) if key in index_b]
    if not pairs:
        raise ResultError("the two runs share no queries")
    ia = np.array([p[0] for p in pairs], dtype=np.int64)
    ib = np.array([p[1] for p in pairs], dtype=np.int64)
    clusters = np.asarray(_keys(a, "cluster"), dtype=object)[ia].astype(str)
    _, dense = np.unique(clusters, return_inverse=True)
    return ia, ib, dense
