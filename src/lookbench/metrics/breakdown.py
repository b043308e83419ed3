"""Metrics over the queries that hold a key (an attribute group, a number of changes), with bootstrap intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lookbench.metrics.aggregate import Estimate, SubsetValues, summarise


def breakdown(
    values: SubsetValues,
    keys: Sequence[Sequence[str]],
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, dict[str, Estimate]]:
    """`{key: {metric: estimate}}` over the queries whose `keys` entry holds the key (a query may hold several).

    Clusters stay whole within a key, and each key's resamples come from its own generator.
    """
    out: dict[str, dict[str, Estimate]] = {}
    for key in sorted({k for held in keys for k in held}):
        mask = np.array([key in held for held in keys], dtype=bool)
        _, clusters = np.unique(values.clusters[mask], return_inverse=True)
        part = SubsetValues(
            name=f"{values.name}\0{key}",
            values={name: column[mask] for name, column in values.values.items()},
            clusters=clusters,
            categories=[c for c, m in zip(values.categories, mask, strict=True) if m],
        )
        out[key] = summarise([part], resamples, seed, confidence, overall=None)[part.name]
    return out
