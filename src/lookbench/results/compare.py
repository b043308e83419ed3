"""Pair the queries of two per-query tables for a paired test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from lookbench._util.limits import MAX_RESAMPLES, check_count
from lookbench.errors import ResultError
from lookbench.metrics.bootstrap import PairedTest, paired_bootstrap
from lookbench.results.io import load_with_per_query
from lookbench.results.per_query import metric_columns
from lookbench.results.query_sets import QuerySelection
from lookbench.results.schema import ResultFile


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


def _run_with_per_query(path: Path) -> tuple[ResultFile, pa.Table]:
    result, per_query = load_with_per_query(path)
    if per_query is None:
        raise ResultError(f"{path}: the result has no per-query file; a paired test needs one")
    return result, per_query


def selected_pairs(
    ta: pa.Table, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], selection: QuerySelection, content_hash: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs whose query the selection keeps; each kept query keeps its cluster (an outfit's remaining queries
    are still resampled together)."""
    ia, ib, clusters = pairs
    keys = list(zip(ta["subset"].to_pylist(), ta["query_row"].to_pylist(), strict=True))
    kept = np.asarray(selection.keep([keys[i] for i in ia], content_hash), dtype=bool)
    return ia[kept], ib[kept], clusters[kept]


def compare_results(
    path_a: Path,
    path_b: Path,
    metrics: list[str],
    resamples: int = 1000,
    seed: int = 0,
    selection: QuerySelection | None = None,
) -> tuple[ResultFile, ResultFile, list[PairedTest]]:
    """Paired bootstrap tests of A - B on the queries both result files scored (same snapshot required), or on
    those of them `selection` keeps."""
    check_count("--resamples", resamples, MAX_RESAMPLES)
    a, ta = _run_with_per_query(path_a)
    b, tb = _run_with_per_query(path_b)
    if a.snapshot.content_hash != b.snapshot.content_hash:
        raise ResultError(f"{path_a} and {path_b} were computed on different snapshots; a paired test needs one")
    ia, ib, clusters = pair_queries(ta, tb)
    if selection is not None:
        ia, ib, clusters = selected_pairs(ta, (ia, ib, clusters), selection, a.snapshot.content_hash)
    available = set(metric_columns(ta)) & set(metric_columns(tb))
    tests = []
    for metric in metrics:
        if metric not in available:
            raise ResultError(f"metric {metric!r} is not in both per-query files")
        values_a = ta[metric].to_numpy(zero_copy_only=False)[ia].astype(np.float64)
        values_b = tb[metric].to_numpy(zero_copy_only=False)[ib].astype(np.float64)
        both = ~(np.isnan(values_a) | np.isnan(values_b))  # composed and image subsets fill different metrics
        if not both.any():
            raise ResultError(f"metric {metric!r}: no query has a value in both runs")
        _, dense = np.unique(clusters[both], return_inverse=True)
        tests.append(paired_bootstrap(values_a[both], values_b[both], dense, metric, resamples, seed))
    return a, b, tests
