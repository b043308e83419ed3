"""Compact, columnar per-query data for the browser: first-match ranks instead of one column per K."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.errors import ResultError
from lookbench.evaluation.window import query_dates
from lookbench.metrics.aggregate import COMPOSED_OVERALL, OVERALL
from lookbench.metrics.definitions import DISTRACTOR_METRIC, metric_name
from lookbench.results.per_query import metric_columns
from lookbench.results.tables import composed_scopes

FLAG_COLUMNS = {"fine": "fine_recall", "coarse": "coarse_recall", "item": "item_recall"}
NDCG_SCALE = 1_000_000
"""nDCG and mAP values are embedded as integers in millionths."""


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


def scope_mask(subsets: list[str], scope: str) -> np.ndarray:
    """Which queries a scope holds: `overall` the image subsets', `composed_overall` the composed subsets', any
    other scope its own subset's."""
    names = set(composed_scopes(subsets))
    composed = np.array([s in names for s in subsets], dtype=bool)
    if scope == OVERALL:
        return ~composed
    if scope == COMPOSED_OVERALL:
        return composed
    return np.array([s == scope for s in subsets], dtype=bool)


def first_ranks(column: pa.ChunkedArray, rows: int) -> np.ndarray:
    """Per query, the 1-based rank of the first True flag, 0 when none is in the list (or the list is null)."""
    lists = column.combine_chunks()
    if lists.null_count:
        width = max((len(v) for v in lists.to_pylist() if v is not None), default=0)
        lists = pa.array([v if v is not None else [False] * width for v in lists.to_pylist()], pa.list_(pa.bool_()))
    flags = np.asarray(lists.flatten().to_numpy(zero_copy_only=False), dtype=bool).reshape(rows, -1)
    return np.where(flags.any(axis=1), flags.argmax(axis=1) + 1, 0)


def _values(per_query: pa.Table, name: str) -> np.ndarray:
    """A metric column as floats, NaN where a query has no value (an image query's mAP, a composed query's nDCG;
    a column no query has a value for is left out of the page's tables)."""
    if name not in per_query.column_names:
        return np.full(per_query.num_rows, np.nan)
    return np.asarray(per_query[name].to_numpy(zero_copy_only=False), dtype=np.float64)


def _nullable(ranks: np.ndarray, known: np.ndarray) -> list[int | None]:
    return [int(r) if ok else None for r, ok in zip(ranks, known, strict=True)]


def fine_at_1(per_query: pa.Table) -> np.ndarray:
    """1.0 where the rank-1 result is a fine match (from the flags, whatever the cut-offs), else 0.0."""
    return (first_ranks(per_query["fine"], per_query.num_rows) == 1).astype(np.float64)


def ks_of(per_query: pa.Table) -> list[int]:
    """The cut-offs a per-query table carries metric columns for."""
    return sorted({int(c.split("@")[1]) for c in metric_columns(per_query) if c.startswith("fine_recall@")})


def _agrees(derived: np.ndarray, stored: np.ndarray, rows: np.ndarray | None = None) -> bool:
    known = ~np.isnan(stored) if rows is None else rows
    return bool(np.allclose(derived[known], stored[known]))


def _check(per_query: pa.Table, ranks: dict[str, np.ndarray], ks: list[int], composed: np.ndarray) -> None:
    """Every stored per-query value (where a query has one) must follow from the flags the page encodes."""
    checks: list[tuple[str, str, np.ndarray | None]] = [(flag, family, None) for flag, family in FLAG_COLUMNS.items()]
    if composed.any():
        checks.append(("relevant", "recall", composed))
    for flag, family, rows in checks:
        for k in ks:
            derived = ((ranks[flag] > 0) & (ranks[flag] <= k)).astype(float)
            if not _agrees(derived, _values(per_query, metric_name(family, k)), rows):
                raise ResultError(f"per-query {metric_name(family, k)} disagrees with the stored {flag} flags")
    for k in ks:
        fine = ranks["fine"]
        derived = np.where((fine > 0) & (fine <= k), 1.0 / np.maximum(fine, 1), 0.0)
        if not _agrees(derived, _values(per_query, metric_name("mrr", k))):
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
    """Columnar arrays: subset, row, cluster, category, attribute codes, day number and first-match ranks; null
    where a query has no value (composed queries: no Item Recall, MRR or nDCG; image queries: no mAP)."""
    n = per_query.num_rows
    ks = ks_of(per_query)
    ranks = {flag: first_ranks(per_query[flag], n) for flag in FLAG_COLUMNS}
    subset_names = per_query["subset"].to_pylist()
    composed = scope_mask(subset_names, COMPOSED_OVERALL)
    recall, known = np.zeros(n, dtype=np.int64), composed.copy()
    if composed.any():
        ranks["relevant"] = first_ranks(per_query["relevant"], n)
        recall[composed] = ranks["relevant"][composed]
    _check(per_query, ranks, ks, composed)
    images = ~composed
    official = protocol_ranks(per_query.filter(pa.array(images)), ranks["item"][images], ks) if images.any() else None
    if official is not None:
        recall[images] = official
        known |= images
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
        "item": _nullable(ranks["item"], images),
        **({"recall": _nullable(recall, known)} if known.any() else {}),
        **{family: _scaled(per_query, family, ks) for family in ("ndcg", "map") if _has_family(per_query, family, ks)},
        **(_changes(per_query, composed) if composed.any() else {}),
        **_distractors(per_query),
    }


def _distractors(per_query: pa.Table) -> dict[str, list[int | None]]:
    """`ds`: 1 where the query's top-1 result is a distractor, else 0, null where the run has no value (runs from
    before distractor_share@1 was recorded carry no column)."""
    if DISTRACTOR_METRIC not in per_query.column_names or per_query[DISTRACTOR_METRIC].null_count == per_query.num_rows:
        return {}
    values = _values(per_query, DISTRACTOR_METRIC)
    return {"ds": [None if np.isnan(v) else int(v) for v in values]}


def _changes(per_query: pa.Table, composed: np.ndarray) -> dict[str, list[Any]]:
    """Composed queries' changed groups (`cg`) and number of changes (`nc`), null for image queries: the page's
    composed breakdowns, as the result file's `breakdowns` count them (a two-change query in both groups)."""
    groups = per_query["change_groups"].to_pylist()
    counts = per_query["num_changes"].to_pylist()
    return {
        "cg": [sorted(set(g or ())) if c else None for g, c in zip(groups, composed, strict=True)],
        "nc": [int(n) if c and n is not None else None for n, c in zip(counts, composed, strict=True)],
    }


def _has_family(per_query: pa.Table, family: str, ks: list[int]) -> bool:
    name = metric_name(family, ks[0]) if ks else ""
    return name in per_query.column_names and per_query[name].null_count < per_query.num_rows


def _scaled(per_query: pa.Table, family: str, ks: list[int]) -> dict[str, list[int | None]]:
    """Per K, the family's per-query values in millionths, null where a query has none."""
    out = {}
    for k in ks:
        values = _values(per_query, metric_name(family, k))
        scaled = np.rint(np.nan_to_num(values) * NDCG_SCALE).astype(int)
        out[str(k)] = [None if np.isnan(v) else int(x) for v, x in zip(values, scaled, strict=True)]
    return out


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
