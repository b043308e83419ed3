"""Seeded stratified samples: the audit reads a few thousand images, not every one, where exactness is not needed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def allocate(sizes: Sequence[int], total: int) -> list[int]:
    """Split `total` draws over strata in proportion to their sizes (largest remainders), at least one per
    non-empty stratum while draws last, never more than a stratum holds."""
    sizes_array = np.asarray(sizes, dtype=np.int64)
    population = int(sizes_array.sum())
    if total >= population:
        return [int(s) for s in sizes_array]
    share = sizes_array * total / max(population, 1)
    counts = np.minimum(np.floor(share).astype(np.int64), sizes_array)
    counts = np.where((sizes_array > 0) & (counts == 0), 1, counts)
    for s in np.argsort(-(share - np.floor(share)), kind="stable"):  # largest remainders first
        if counts.sum() >= total:
            break
        if counts[s] < sizes_array[s]:
            counts[s] += 1
    while counts.sum() > total:
        s = int(np.argmax(counts))
        counts[s] -= 1
    return [int(c) for c in counts]


def stratified_rows(strata: Sequence[str], total: int, rng: np.random.Generator) -> np.ndarray:
    """Sorted row indices: `total` rows drawn without replacement, spread over the strata (a label per row) in
    proportion to their sizes."""
    labels = np.asarray(strata, dtype=object)
    names = sorted(set(labels.tolist()))
    members = [np.flatnonzero(labels == name) for name in names]
    counts = allocate([len(m) for m in members], total)
    picked = [rng.choice(m, c, replace=False) for m, c in zip(members, counts, strict=True) if c]
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)
