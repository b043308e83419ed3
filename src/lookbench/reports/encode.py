"""Compact, columnar per-query data for the browser: first-match ranks instead of one column per K."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.contamination.window import query_dates
from lookbench.errors import ResultError
from lookbench.metrics.definitions import metric_name
from lookbench.results.per_query import metric_columns

FLAG_COLUMNS = {"fine": "fine_recall", "coarse": "coarse_recall", "item": "item_recall"}
NDCG_SCALE = 1_000_000
"""nDCG values are embedded as integers in millionths."""


class Vocab:
    """Strings to small integer codes, in first-seen order."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def code(self, value: str | None) -> int:
        """The code of a value; -1 for None."""
        return -1 if value is None else self.codes.setdefault(value, len(self.codes))

    @property
    def values(self) -> list[str]:
        """Every value, by code."""
        return list(self.codes)


def first_ranks(column: pa.ChunkedArray, rows: int) -> np.ndarray:
    """Per query, the 1-based rank of the first True flag, 0 when none is in the list."""
    flags = np.asarray(column.combine_chunks().flatten().to_numpy(zero_copy_only=False), dtype=bool).reshape(rows, -1)
    return np.where(flags.any(axis=1), flags.argmax(axis=1) + 1, 0)


def fine_at_1(per_query: pa.Table) -> np.ndarray:
    """1.0 where the rank-1 result is a fine match (from the flags, whatever the cut-offs), else 0.0."""
    return (first_ranks(per_query["fine"], per_query.num_rows) == 1).astype(np.float64)


def ks_of(per_query: pa.Table) -> list[int]:
    """The cut-offs a per-query table carries metric columns for."""
    return sorted({int(c.split("@")[1]) for c in metric_columns(per_query) if c.startswith("fine_recall@")})


def _check(per_query: pa.Table, ranks: dict[str, np.ndarray], ks: list[int]) -> None:
    for flag, family in FLAG_COLUMNS.items():
        for k in ks:
            derived = ((ranks[flag] > 0) & (ranks[flag] <= k)).astype(float)
            if not np.array_equal(derived, per_query[metric_name(family, k)].to_numpy()):
                raise ResultError(f"per-query {metric_name(family, k)} disagrees with the stored {flag} flags")
    for k in ks:
        fine = ranks["fine"]
        derived = np.where((fine > 0) & (fine <= k), 1.0 / np.maximum(fine, 1), 0.0)
        if not np.allclose(derived, per_query[metric_name("mrr", k)].to_numpy()):
            raise ResultError(f"per-query {metric_name('mrr', k)} disagrees with the stored fine flags")


def protocol_ranks(per_query: pa.Table, item_ranks: np.ndarray, ks: list[int]) -> np.ndarray | None:
    """First rank of a correct item under a legacy protocol (its `recall@K` columns), 0 for none; None when the
    run has no protocol.

    It is the item rank, except that a query the protocol fails at every K (a detector miss) has none.
    """
    names = [metric_name("recall", k) for k in ks]
    if not ks or any(n not in per_query.column_names or per_query[n].null_count for n in names):
        return None
    ranks = np.where(per_query[names[-1]].to_numpy() > 0, item_ranks, 0)
    for k, name in zip(ks, names, strict=True):
        derived = ((ranks > 0) & (ranks <= k)).astype(float)
        if not np.array_equal(derived, per_query[name].to_numpy()):
            raise ResultError(f"per-query {name} disagrees with the stored item flags and the protocol's misses")
    return ranks


def encode_queries(
    per_query: pa.Table,
    snapshot_id: str,
    subsets: Vocab,
    categories: Vocab,
    attributes: Vocab,
    main_attribute: dict[tuple[str, int], str] | None,
) -> dict[str, Any]:
    """Columnar arrays: subset, row, cluster, category, attribute codes, day number and first-match ranks."""
    n = per_query.num_rows
    ks = ks_of(per_query)
    ranks = {flag: first_ranks(per_query[flag], n) for flag in FLAG_COLUMNS}
    _check(per_query, ranks, ks)
    official = protocol_ranks(per_query, ranks["item"], ks)
    subset_names = per_query["subset"].to_pylist()
    rows = per_query["query_row"].to_pylist()
    dates = query_dates(per_query, snapshot_id)
    day_numbers = dates.astype("datetime64[D]").astype(np.int64)
    days = [None if np.isnat(d) else int(v) for d, v in zip(dates, day_numbers, strict=True)]
    attrs = [
        attributes.code(main_attribute.get((s, r))) if main_attribute is not None else -1
        for s, r in zip(subset_names, rows, strict=True)
    ]
    return {
        "s": [subsets.code(s) for s in subset_names],
        "r": rows,
        "c": per_query["cluster"].to_pylist(),
        "g": [categories.code(c) for c in per_query["category"].to_pylist()],
        "a": attrs,
        "d": days,
        "fine": ranks["fine"].tolist(),
        "coarse": ranks["coarse"].tolist(),
        "item": ranks["item"].tolist(),
        **({} if official is None else {"recall": official.tolist()}),
        "ndcg": {
            str(k): np.rint(per_query[metric_name("ndcg", k)].to_numpy() * NDCG_SCALE).astype(int).tolist() for k in ks
        },
    }


QUERY_COLUMNS = ("s", "r", "c", "g", "a", "d")
"""Columns that describe the queries rather than the run; runs that scored the same queries share them."""


def share_query_columns(encoded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Move identical query columns out of each run's arrays into a shared list; runs point at it with `shared`."""
    shared: list[dict[str, Any]] = []
    keys: dict[str, int] = {}
    for q in encoded:
        columns = {name: q.pop(name) for name in QUERY_COLUMNS}
        key = json.dumps(columns, separators=(",", ":"))
        if key not in keys:
            keys[key] = len(shared)
            shared.append(columns)
        q["shared"] = keys[key]
    return shared
