"""Reference/target pairs: items of one category within a similarity band whose labels differ in one or two groups."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lookbench.snapshot.composed import Change, changes_between
from lookbench.taxonomy import Taxonomy

SCAN = 256
"""Candidates in the band looked at per reference, most similar first (keeps a large category from costing
quadratic label comparisons)."""


@dataclass(frozen=True)
class Pair:
    """A composed query's reference and target (indices into the items), their cosine and the changes between."""

    reference: int
    target: int
    similarity: float
    changes: tuple[Change, ...]


def composed_pairs(
    categories: Sequence[str],
    attributes: Sequence[frozenset[str]],
    vectors: np.ndarray,
    band: tuple[float, float],
    max_changes: int,
    per_reference: int,
    taxonomy: Taxonomy,
) -> list[Pair]:
    """Per reference, its `per_reference` most similar items of the category within `band` whose labels differ
    from its own by 1 to `max_changes` taxonomy changes; `vectors` are unit rows."""
    by_category: dict[str, list[int]] = defaultdict(list)
    for index, category in enumerate(categories):
        by_category[category].append(index)
    low, high = band
    pairs: list[Pair] = []
    for members in by_category.values():
        if len(members) < 2:
            continue
        sims = vectors[members] @ vectors[members].T
        for row, reference in enumerate(members):
            order = np.argsort(-sims[row], kind="stable")
            inside = order[(sims[row, order] >= low) & (sims[row, order] <= high)]
            found = 0
            for col in inside[: SCAN + 1].tolist():
                target, similarity = members[col], float(sims[row, col])
                if target == reference:
                    continue
                changes = changes_between(attributes[reference], attributes[target], taxonomy)
                if changes and len(changes) <= max_changes:
                    pairs.append(Pair(reference, target, round(similarity, 6), changes))
                    found += 1
                    if found == per_reference:
                        break
    return pairs
