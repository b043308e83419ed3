"""Composed subsets' breakdowns per attribute group changed and per number of changes, from a per-query table."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from lookbench._util.arrow import rows_of
from lookbench.metrics.aggregate import Estimate, SubsetValues
from lookbench.metrics.breakdown import breakdown

BREAKDOWNS: tuple[str, ...] = ("change_group", "num_changes")


def composed_breakdowns(
    per_query: pa.Table, subsets: list[SubsetValues], resamples: int, seed: int, confidence: float
) -> dict[str, dict[str, dict[str, dict[str, Estimate]]]]:
    """`{subset: {breakdown: {key: {metric: estimate}}}}` for each composed subset's values."""
    names = np.array(per_query["subset"].to_pylist(), dtype=object)
    out: dict[str, dict[str, dict[str, dict[str, Estimate]]]] = {}
    for values in subsets:
        part = rows_of(per_query, names == values.name)  # the row order subset_values used
        keys = {
            "change_group": [groups or [] for groups in part["change_groups"].to_pylist()],
            "num_changes": [[str(n)] for n in part["num_changes"].to_pylist()],
        }
        out[values.name] = {name: breakdown(values, keys[name], resamples, seed, confidence) for name in BREAKDOWNS}
    return out
