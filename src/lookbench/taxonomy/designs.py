"""Designs and label overlap: how far a training set's labels reach into an evaluation set's queries.

A product's labels are its category and attribute set A. Its design is the category with every non-colour
attribute: the same garment in another colour has the same design. Against each evaluation query a training set can
hold (1) a product with the identical label set, (2) the same design in another colour, (3) a strict fine match: same
category and A_query within A_train (the strict fine rule, so that product would count as relevant to the query)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from lookbench.taxonomy.loader import load_taxonomy

if TYPE_CHECKING:
    from lookbench.snapshot.reader import Snapshot

COLOUR_GROUP = "colour"
IDENTICAL = "identical"
SAME_DESIGN_OTHER_COLOUR = "same_design_other_colour"
STRICT_FINE_MATCH = "strict_fine_match"
LABEL_CLASSES = (IDENTICAL, SAME_DESIGN_OTHER_COLOUR, STRICT_FINE_MATCH)
"""The kinds of label overlap a query can have with a training set, in report order."""

Labels = tuple[str, frozenset[str]]
"""(category, attribute set A)."""


@dataclass(frozen=True)
class LabelledQuery:
    """One labelled query row of a snapshot: where it is and its labels."""

    subset: str
    row: int
    item_id: str
    labels: Labels


@lru_cache(maxsize=1)
def colour_values() -> frozenset[str]:
    """The taxonomy's colour attributes (left out of a design)."""
    return frozenset(load_taxonomy().groups[COLOUR_GROUP].attributes)


def labelled_queries(snapshot: Snapshot) -> list[LabelledQuery]:
    """Every query row with a category of a snapshot's image subsets, with its labels."""
    found: list[LabelledQuery] = []
    for subset in snapshot.subsets:
        if not subset.startswith("composed") and snapshot.has_split(subset, "query"):
            labels = snapshot.labels(subset, "query")
            found.extend(
                LabelledQuery(subset, r, labels.item_id[r], (labels.category[r], labels.attribute_set(r)))
                for r in range(len(labels))
                if labels.category[r]
            )
    return found


def query_labels(snapshot: Snapshot) -> list[Labels]:
    """(category, attribute set) of every labelled query row of a snapshot's image subsets."""
    return [query.labels for query in labelled_queries(snapshot)]


def design_of(labels: Labels) -> Labels:
    """The category with every non-colour attribute."""
    category, attributes = labels
    return category, attributes - colour_values()


class QueryDesigns:
    """Evaluation queries' labels, to test whether a product shares a query's design or matches it strictly."""

    def __init__(self, queries: Iterable[Labels]) -> None:
        self.designs: set[Labels] = set()
        self._by_category: dict[str, set[frozenset[str]]] = {}
        for labels in queries:
            self.designs.add(design_of(labels))
            self._by_category.setdefault(labels[0], set()).add(labels[1])

    def shares_design(self, labels: Labels) -> bool:
        """True if some query has this product's design (in any colour)."""
        return design_of(labels) in self.designs

    def strict_match(self, labels: Labels) -> bool:
        """True if the product would be a strict fine match of some query (same category, A_query within A)."""
        return any(query <= labels[1] for query in self._by_category.get(labels[0], ()))

    def excludes(self, labels: Labels) -> bool:
        """True if a design-disjoint training set must not hold this product."""
        return self.shares_design(labels) or self.strict_match(labels)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_category.values())


@dataclass(frozen=True)
class LabelOverlap:
    """Of `queries` evaluation queries, how many have a training product with each kind of shared labels."""

    queries: int
    identical: int
    same_design_other_colour: int
    strict_fine_match: int

    def share(self, count: int) -> float:
        """`count` as a percentage of the queries."""
        return 100.0 * count / self.queries if self.queries else 0.0

    def summary(self) -> str:
        """One line: counts and percentages."""
        parts = (
            ("identical labels", self.identical),
            ("same design in another colour", self.same_design_other_colour),
            ("a strict fine match", self.strict_fine_match),
        )
        said = "; ".join(f"{name} {n} ({self.share(n):.1f}%)" for name, n in parts)
        return f"of {self.queries} queries, a training product with {said}"


def overlap_classes(queries: Iterable[Labels], training: Iterable[Labels]) -> list[frozenset[str]]:
    """Per query, the `LABEL_CLASSES` by which the training set reaches it (empty: no shared labels)."""
    labelled = [labels for labels in training if labels[0]]
    exact = set(labelled)
    colours_by_design: dict[Labels, set[frozenset[str]]] = {}
    by_category: dict[str, set[frozenset[str]]] = {}
    for labels in exact:
        colours_by_design.setdefault(design_of(labels), set()).add(labels[1] & colour_values())
        by_category.setdefault(labels[0], set()).add(labels[1])
    found = []
    for query in queries:
        colours = colours_by_design.get(design_of(query), set())
        reached = {
            IDENTICAL: query in exact,
            SAME_DESIGN_OTHER_COLOUR: any(c != query[1] & colour_values() for c in colours),
            STRICT_FINE_MATCH: any(query[1] <= held for held in by_category.get(query[0], ())),
        }
        found.append(frozenset(name for name, hit in reached.items() if hit))
    return found


def label_overlap(queries: Iterable[Labels], training: Iterable[Labels]) -> LabelOverlap:
    """Count the queries that a training set reaches by identical labels, design (another colour) or strict match."""
    classes = overlap_classes(queries, training)
    identical, design, strict = (sum(name in found for found in classes) for name in LABEL_CLASSES)
    return LabelOverlap(len(classes), identical, design, strict)
