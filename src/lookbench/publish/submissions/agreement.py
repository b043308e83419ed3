"""Whether a bundle's declared numbers and per-query table are those a recomputation gives: the first field,
column or row that differs is named."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lookbench.errors import SubmissionError
from lookbench.results.schema import ResultFile

TOLERANCE = 1e-9
"""Largest difference allowed between a declared and a recomputed value (metrics are fractions in [0, 1])."""
SCORE_TOLERANCE = 1e-4
"""Largest difference allowed between a declared and a re-searched similarity score (float32 sums in any order)."""


def declared_numbers(result: ResultFile) -> Iterator[tuple[str, float]]:
    """Every number a result declares about its scores and sizes, as (field path, value)."""

    def walk(prefix: str, value: Any) -> Iterator[tuple[str, float]]:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from walk(f"{prefix}.{key}", item)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield prefix, float(value)

    dumped = result.model_dump(include={"metrics", "per_category", "breakdowns"})
    dumped["snapshot"] = result.snapshot.model_dump(include={"noise_rows", "subsets"})
    dumped["config"] = {"window": None if result.config.window is None else result.config.window.model_dump()}
    for name, part in dumped.items():
        yield from walk(name, part)


def compare_numbers(declared: ResultFile, recomputed: ResultFile, where: str, how: str) -> int:
    """Raise naming the first field whose declared value differs from the recomputed one; return the count."""
    mine = dict(declared_numbers(declared))
    theirs = dict(declared_numbers(recomputed))
    for field in sorted(mine.keys() | theirs.keys()):
        if field not in theirs:
            raise SubmissionError(f"{where}: field {field} is declared but {how} gives no such value")
        if field not in mine:
            raise SubmissionError(f"{where}: field {field} is missing; {how} gives {theirs[field]!r}")
        if not math.isclose(mine[field], theirs[field], rel_tol=0.0, abs_tol=TOLERANCE):
            raise SubmissionError(f"{where}: field {field} is {mine[field]!r} but {how} gives {theirs[field]!r}")
    for field in ("noise", "fine_rule", "ks"):
        if getattr(declared.config, field) != getattr(recomputed.config, field):
            raise SubmissionError(f"{where}: field config.{field} is not what {how} used")
    return len(mine)


def _first_difference(declared: pa.Array, recomputed: pa.Array, tolerance: float) -> int | None:
    """The first position where two flat arrays differ (floats within `tolerance`, NaN equal to NaN)."""
    if len(declared) != len(recomputed):
        return min(len(declared), len(recomputed))
    if pa.types.is_floating(recomputed.type):
        if not pa.types.is_floating(declared.type) and not pa.types.is_integer(declared.type):
            return 0 if len(declared) else None
        a = np.asarray(declared.to_numpy(zero_copy_only=False), dtype=np.float64)
        b = np.asarray(recomputed.to_numpy(zero_copy_only=False), dtype=np.float64)
        same = np.isclose(a, b, rtol=0.0, atol=tolerance, equal_nan=True)
    else:
        same = np.array([x == y for x, y in zip(declared.to_pylist(), recomputed.to_pylist(), strict=True)], bool)
    bad = np.flatnonzero(~same)
    return int(bad[0]) if len(bad) else None


def _column_difference(declared: pa.Array, recomputed: pa.Array, tolerance: float) -> int | None:
    """The first row where two columns differ; list columns compare their lengths, then their items."""
    if not pa.types.is_list(recomputed.type):
        return _first_difference(declared, recomputed, tolerance)
    if not (pa.types.is_list(declared.type) or pa.types.is_large_list(declared.type)) or declared.null_count:
        return 0
    lengths = _first_difference(pc.list_value_length(declared), pc.list_value_length(recomputed), 0.0)
    if lengths is not None:
        return lengths
    item = _first_difference(declared.flatten(), recomputed.flatten(), tolerance)
    if item is None:
        return None
    ends = np.cumsum(pc.list_value_length(recomputed).to_numpy(zero_copy_only=False))
    return int(np.searchsorted(ends, item, side="right"))


def compare_tables(declared: pa.Table, recomputed: pa.Table, where: str, how: str, scores: float) -> None:
    """Raise naming the first column and query where the declared per-query table differs from the recomputed one
    (`scores`: the tolerance on similarity scores; every other float within `TOLERANCE`)."""
    for name in recomputed.column_names:
        if name not in declared.column_names:
            raise SubmissionError(f"{where}: column {name} is missing; {how} gives one")
    for name in declared.column_names:
        if name not in recomputed.column_names:
            raise SubmissionError(f"{where}: column {name} is not one {how} gives")
    if declared.num_rows != recomputed.num_rows:
        raise SubmissionError(f"{where}: {declared.num_rows} queries, but {how} gives {recomputed.num_rows}")
    subsets, rows = recomputed["subset"].to_pylist(), recomputed["query_row"].to_pylist()
    for name in recomputed.column_names:
        a, b = declared[name].combine_chunks(), recomputed[name].combine_chunks()
        if a.type != b.type:
            raise SubmissionError(f"{where}: column {name} is {a.type}, but {how} gives {b.type}")
        bad = _column_difference(a, b, scores if name == "topk_scores" else TOLERANCE)
        if bad is not None:
            shown = a[bad].as_py() if bad < len(a) else None
            raise SubmissionError(
                f"{where}: column {name} of {subsets[bad]} query row {rows[bad]} is {shown!r} but {how} gives "
                f"{b[bad].as_py()!r}"
            )
