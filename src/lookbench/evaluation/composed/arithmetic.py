"""Attribute arithmetic in the image space: move the reference from its `from` value's direction to the `to` value's.

Needs no text model. Each attribute value's direction is the centroid of the normalised embeddings of labelled
items that have it (the weight vector of a nearest-class-mean linear probe); an absent value (a detail being added
or removed) uses the centroid of the items lacking it. Centroids are taken within the reference's category when
both ends of a change have enough items there, else over every category.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from lookbench.errors import LookBenchError
from lookbench.evaluation.composed.encoders import ComposedBatch, LabelledItems, normalised
from lookbench.snapshot.composed import Change

MIN_ITEMS = 3
"""Fewest items a centroid is taken over."""

ANY_CATEGORY = ""


class AttributeDirections(Protocol):
    """Where an attribute change points in the embedding space (centroids here; a trained model's heads later)."""

    def shift(self, category: str, change: Change) -> np.ndarray | None:
        """The vector that moves an item of `category` along `change`, or None if it is unknown."""
        ...


@dataclass
class _Sums:
    total: np.ndarray
    count: int = 0


@dataclass
class CentroidDirections:
    """Per (category, value) and per value: sums of normalised embeddings and counts, with the same for absences."""

    dim: int
    with_value: dict[tuple[str, str], _Sums] = field(default_factory=dict)
    in_category: dict[str, _Sums] = field(default_factory=dict)
    """All items of a category (over every category under ANY_CATEGORY), to derive 'lacks value' centroids."""
    value_categories: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def learn(cls, items: LabelledItems) -> CentroidDirections:
        """Accumulate the centroids of every labelled item (rows without a category are skipped)."""
        vectors = normalised(items.embeddings)
        out = cls(dim=vectors.shape[1])
        labels = items.labels
        for row in range(len(labels)):
            category = labels.category[row]
            if not category:
                continue
            vector = vectors[row]
            for scope in (category, ANY_CATEGORY):
                out._add(out.in_category, scope, vector)
            for value in labels.attribute_set(row):
                out.value_categories.setdefault(value, set()).add(category)
                for scope in (category, ANY_CATEGORY):
                    out._add(out.with_value, (scope, value), vector)
        return out

    def _add(self, table: dict[Any, _Sums], key: Any, vector: np.ndarray) -> None:
        sums = table.get(key)
        if sums is None:
            sums = table[key] = _Sums(np.zeros(self.dim, dtype=np.float64))
        sums.total += vector
        sums.count += 1

    def _having(self, scope: str, value: str) -> np.ndarray | None:
        sums = self.with_value.get((scope, value))
        return sums.total / sums.count if sums is not None and sums.count >= MIN_ITEMS else None

    def _lacking(self, scope: str, value: str) -> np.ndarray | None:
        """Centroid of the items of `scope` without `value` (over categories that have it, for every category)."""
        having = self.with_value.get((scope, value))
        if scope != ANY_CATEGORY:
            whole = self.in_category.get(scope)
            if whole is None:
                return None
            total, count = whole.total.copy(), whole.count
        else:
            total, count = np.zeros(self.dim), 0
            for category in self.value_categories.get(value, ()):
                total += self.in_category[category].total
                count += self.in_category[category].count
        if having is not None:
            total -= having.total
            count -= having.count
        return total / count if count >= MIN_ITEMS else None

    def _end(self, scope: str, value: str, other: str) -> np.ndarray | None:
        return self._having(scope, value) if value else self._lacking(scope, other)

    def shift(self, category: str, change: Change) -> np.ndarray | None:
        """Centroid of `to` minus centroid of `from`, within the category when both are known there."""
        for scope in (category, ANY_CATEGORY):
            start = self._end(scope, change.source, change.target)
            end = self._end(scope, change.target, change.source)
            if start is not None and end is not None:
                return (end - start).astype(np.float32)
        return None


class AttributeArithmetic:
    """`normalise(reference) + s · Σ shift(change)`, the strength `s` chosen on the validation split."""

    method = "arithmetic"
    parameter: str | None = "strength"
    grid: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
    default: float | None = 1.0
    learns_from_items = True

    def __init__(self) -> None:
        self.directions: AttributeDirections | None = None
        self.fit_items = 0
        self.unknown: dict[str, int] = {}

    def fit(self, items: LabelledItems) -> None:
        """Learn the centroids from labelled items."""
        if len(items.labels) == 0:
            raise LookBenchError(
                "attribute arithmetic needs labelled items outside the composed gallery (the distractor pool or "
                "an image subset's gallery); the snapshot has none"
            )
        self.directions = CentroidDirections.learn(items)
        self.fit_items = len(items.labels)

    def embed_queries(self, batch: ComposedBatch, value: float | None) -> np.ndarray:
        """Move each reference along its changes; a change whose direction is unknown moves nothing (counted)."""
        if self.directions is None:
            raise LookBenchError("attribute arithmetic: fit() must be called before embed_queries()")
        strength = self.default if value is None else value
        assert strength is not None
        out = normalised(batch.reference).copy()
        unknown: dict[str, int] = {}
        for row, changes in enumerate(batch.changes):
            for change in changes:
                shift = self.directions.shift(batch.labels.category[row], change)
                if shift is None:
                    key = f"{change.group}: {change.source or '-'} -> {change.target or '-'}"
                    unknown[key] = unknown.get(key, 0) + 1
                    continue
                out[row] += strength * shift
        self.unknown = unknown  # of the latest batch: the scored queries, as tuning runs first
        return out

    def describe(self) -> dict[str, Any]:
        """The method, how many items it learnt from, and changes it could not place."""
        return {
            "method": self.method,
            "directions": f"centroids of normalised embeddings (at least {MIN_ITEMS} items; per category, else all)",
            "fit_items": self.fit_items,
            "unknown_changes": dict(sorted(self.unknown.items())),
        }
