"""Training targets from the taxonomy: a category index and one target per attribute group, missing labels marked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from lookbench.snapshot.labels import SplitLabels
from lookbench.taxonomy.models import Taxonomy, TaxonomyError
from lookbench.taxonomy.normalise import normalise_attribute, normalise_category

MISSING = -1
"""Target index of a missing label: ignored by the losses."""


@dataclass(frozen=True)
class LabelSpace:
    """Categories and attribute groups in taxonomy order; single-valued groups get CE, multi-valued groups BCE."""

    categories: list[str]
    single_groups: dict[str, list[str]]
    multi_groups: dict[str, list[str]]

    @classmethod
    def of(cls, taxonomy: Taxonomy) -> LabelSpace:
        """The label space of a taxonomy."""
        single = {name: list(g.attributes) for name, g in taxonomy.groups.items() if not g.multi}
        multi = {name: list(g.attributes) for name, g in taxonomy.groups.items() if g.multi}
        return cls(list(taxonomy.categories), single, multi)


@dataclass
class Targets:
    """Per-row targets: category index, single-group indices (MISSING where absent), multi-group multi-hot + mask."""

    category: np.ndarray
    single: np.ndarray
    multi: dict[str, np.ndarray]
    multi_mask: np.ndarray
    unknown: Counter[str] = field(default_factory=Counter)
    """Labels outside the taxonomy (ignored), with counts."""

    def take(self, rows: np.ndarray) -> Targets:
        """The targets of the given rows, in that order."""
        return Targets(
            self.category[rows],
            self.single[rows],
            {k: v[rows] for k, v in self.multi.items()},
            self.multi_mask[rows],
            self.unknown,
        )

    @staticmethod
    def concat(parts: list[Targets]) -> Targets:
        """Row-wise concatenation."""
        unknown: Counter[str] = Counter()
        for part in parts:
            unknown.update(part.unknown)
        return Targets(
            np.concatenate([p.category for p in parts]),
            np.concatenate([p.single for p in parts]),
            {k: np.concatenate([p.multi[k] for p in parts]) for k in parts[0].multi},
            np.concatenate([p.multi_mask for p in parts]),
            unknown,
        )


T = TypeVar("T")


def _memo(function: Callable[[str], T]) -> Callable[[str], T | None]:
    """`function` cached per label, None where the taxonomy does not know the label."""
    cache: dict[str, T | None] = {}

    def lookup(label: str) -> T | None:
        if label not in cache:
            try:
                cache[label] = function(label)
            except TaxonomyError:
                cache[label] = None
        return cache[label]

    return lookup


def _group_and_value(label: str, taxonomy: Taxonomy) -> tuple[str, str]:
    attribute = normalise_attribute(label, taxonomy=taxonomy)
    return taxonomy.group_of(attribute), attribute


def encode_targets(labels: SplitLabels, space: LabelSpace, taxonomy: Taxonomy) -> Targets:
    """Map labels to targets; a group with no value, or two values for a single-valued group, is missing."""
    n = len(labels)
    category = np.full(n, MISSING, dtype=np.int64)
    single = np.full((n, len(space.single_groups)), MISSING, dtype=np.int64)
    multi = {g: np.zeros((n, len(values)), dtype=np.float32) for g, values in space.multi_groups.items()}
    multi_mask = np.zeros((n, len(space.multi_groups)), dtype=bool)
    single_index = {g: i for i, g in enumerate(space.single_groups)}
    multi_index = {g: i for i, g in enumerate(space.multi_groups)}
    category_index = {c: i for i, c in enumerate(space.categories)}
    unknown: Counter[str] = Counter()
    categories = _memo(lambda label: category_index[normalise_category(label, taxonomy)])
    attributes = _memo(lambda label: _group_and_value(label, taxonomy))
    for row in range(n):
        found = categories(labels.category[row])
        if found is None:
            unknown[f"category:{labels.category[row]}"] += 1
        else:
            category[row] = found
        seen: dict[str, set[str]] = {}
        for label in labels.attribute_set(row):
            pair = attributes(label)
            if pair is None:
                unknown[f"attribute:{label}"] += 1
                continue
            seen.setdefault(pair[0], set()).add(pair[1])
        for group, values in seen.items():
            if group in single_index and len(values) == 1:
                single[row, single_index[group]] = space.single_groups[group].index(next(iter(values)))
            elif group in multi_index:
                multi_mask[row, multi_index[group]] = True
                for value in values:
                    multi[group][row, space.multi_groups[group].index(value)] = 1.0
    return Targets(category, single, multi, multi_mask, unknown)
