"""Recall of an approximate search against exact search, on a sample of the queries."""

from __future__ import annotations

import numpy as np

from lookbench.search.backend import CorpusLike, SearchResult
from lookbench.search.exact import ExactSearch


def measured_recall(
    queries: np.ndarray,
    query_ties: np.ndarray | None,
    corpus: CorpusLike,
    found: SearchResult,
    ks: tuple[int, ...],
    exclude: np.ndarray | None,
    sample: int,
) -> dict[str, float]:
    """`{"recall@K": value}`: over up to `sample` evenly spread queries, the mean fraction of each query's exact
    top K that `found` also has in its top K."""
    picked = np.unique(np.linspace(0, len(queries) - 1, min(sample, len(queries))).round().astype(np.int64))
    ties = None if query_ties is None else query_ties[picked]
    truth = ExactSearch().search(queries[picked], corpus, max(ks), exclude=exclude, query_ties=ties).indices
    got = found.indices[picked]
    out: dict[str, float] = {}
    for k in ks:
        per_query = []
        for exact_rows, backend_rows in zip(truth[:, :k], got[:, :k], strict=True):
            wanted = exact_rows[exact_rows >= 0]
            per_query.append(len(np.intersect1d(wanted, backend_rows)) / max(1, len(wanted)))
        out[f"recall@{k}"] = round(float(np.mean(per_query)), 6)
    return out
