"""Paired bootstrap p-values between two runs' per-query tables, on one scope."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lookbench.errors import ResultError
from lookbench.metrics.aggregate import OVERALL
from lookbench.metrics.bootstrap import paired_bootstrap
from lookbench.metrics.definitions import OUTFIT_METRIC, metric_name
from lookbench.metrics.outfits import outfit_recall
from lookbench.results.compare import pair_queries
from lookbench.snapshot.schema import STREETLOOK_SUBSETS

TIE_RESAMPLES = 1000


def _scope(table: pa.Table, scope: str) -> pa.Table:
    if scope == OVERALL:
        return table
    return table.filter(pc.equal(table["subset"], scope))


def _outfits(table: pa.Table) -> dict[str, float]:
    """{subset/cluster: outfit recall@1} over street-look subsets."""
    out: dict[str, float] = {}
    for subset in STREETLOOK_SUBSETS:
        part = table.filter(pc.equal(table["subset"], subset))
        if part.num_rows:
            ids, dense = np.unique(part["cluster"].to_numpy(), return_inverse=True)
            values = outfit_recall(part[metric_name("fine_recall", 1)].to_numpy(), dense)
            out.update({f"{subset}/{c}": float(v) for c, v in zip(ids, values, strict=True)})
    return out


def pair_p(a: pa.Table, b: pa.Table, metric: str, scope: str, seed: int = 0) -> float | None:
    """Two-sided p of A - B over the units both scored (queries, or outfits for outfit recall)."""
    a, b = _scope(a, scope), _scope(b, scope)
    if metric == OUTFIT_METRIC:
        oa, ob = _outfits(a), _outfits(b)
        keys = sorted(set(oa) & set(ob))
        if not keys:
            return None
        va, vb = np.array([oa[k] for k in keys]), np.array([ob[k] for k in keys])
        return paired_bootstrap(va, vb, np.arange(len(keys)), metric, TIE_RESAMPLES, seed).p_value
    if not a.num_rows or not b.num_rows or metric not in a.column_names or metric not in b.column_names:
        return None
    try:
        ia, ib, clusters = pair_queries(a, b)
    except ResultError:
        return None
    return paired_bootstrap(
        a[metric].to_numpy()[ia], b[metric].to_numpy()[ib], clusters, metric, TIE_RESAMPLES, seed
    ).p_value
