"""Outfits: queries cut from one street photo, scored together."""

from __future__ import annotations

import numpy as np


def cluster_ids(outfit_keys: list[str | None]) -> np.ndarray:
    """Dense ids grouping queries by outfit key, in first-seen order; a query without a key is its own outfit."""
    ids: dict[str, int] = {}
    out = np.empty(len(outfit_keys), dtype=np.int64)
    for row, key in enumerate(outfit_keys):
        name = key if key is not None else f"\0row{row}"
        out[row] = ids.setdefault(name, len(ids))
    return out


def outfit_recall(fine_at_1: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Per outfit: 1 only if every one of its queries is a fine match at rank 1."""
    n = int(clusters.max()) + 1 if len(clusters) else 0
    misses = np.bincount(clusters, weights=(fine_at_1 < 1).astype(np.float64), minlength=n)
    return (misses == 0).astype(np.float64)
