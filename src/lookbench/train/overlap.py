"""How far a training set reaches into each evaluation snapshot: shared labels (where both sides have them) and the
guard's near-duplicate pixels (always). The counts go into `guard.json`, the model card and its README; the queries
of each class into `overlap_queries.json` beside `guard.json`."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lookbench.results.query_sets import NEAR_DUPLICATE_PIXELS, QueryRef, SnapshotQueries
from lookbench.snapshot.reader import Snapshot
from lookbench.taxonomy.designs import LABEL_CLASSES, LabelOverlap, Labels, labelled_queries, overlap_classes

QUERY = "query"


@dataclass(frozen=True)
class SnapshotOverlap:
    """One evaluation snapshot against the training set."""

    snapshot: str
    labels: LabelOverlap | None
    """None when neither side has labels to compare (a real release without them)."""
    near_duplicates: int
    """Training images the perceptual or exact tier matched to an image of this snapshot (dropped by the guard)."""
    near_duplicate_queries: int
    """Distinct query rows of this snapshot among those matches."""

    def summary(self) -> str:
        """One line."""
        labels = self.labels.summary() if self.labels is not None else "no labels to compare"
        pixels = (
            f"near-duplicate pixels: {self.near_duplicates} training image(s) "
            f"({self.near_duplicate_queries} query row(s) matched)"
        )
        return f"{self.snapshot}: {labels}; {pixels}"

    def record(self) -> dict[str, object]:
        """A JSON-ready record."""
        return {**asdict(self), "summary": self.summary()}


def matched_queries(snapshot: Snapshot, matched: list[str]) -> tuple[int, set[tuple[str, int]]]:
    """(how many of the guard's matched evaluation keys are this snapshot's, the query rows among them)."""
    prefix = f"{snapshot.snapshot_id}/"
    mine = [key for key in matched if key.startswith(prefix)]
    rows = set()
    for key in mine:
        place, _, row = key.partition("#")
        subset, _, split = place.removeprefix(prefix).rpartition("/")
        if split == QUERY:
            rows.add((subset, int(row)))
    return len(mine), rows


def snapshot_overlap(
    snapshot: Snapshot, training: list[Labels], matched: list[str]
) -> tuple[SnapshotOverlap, SnapshotQueries]:
    """The overlap of one evaluation snapshot with the training labels and the guard's matched evaluation keys:
    the counts, and the queries of each class."""
    queries = labelled_queries(snapshot)
    labelled = [labels for labels in training if labels[0]]
    compared = bool(queries and labelled)
    reached = overlap_classes([q.labels for q in queries], labelled) if compared else [frozenset()] * len(queries)
    classes: dict[str, list[QueryRef]] = {
        name: [
            QueryRef(subset=q.subset, row=q.row, item_id=q.item_id)
            for q, found in zip(queries, reached, strict=True)
            if name in found
        ]
        for name in LABEL_CLASSES
    }
    near, query_rows = matched_queries(snapshot, matched)
    item_ids = {(q.subset, q.row): q.item_id for q in queries}
    classes[NEAR_DUPLICATE_PIXELS] = [
        QueryRef(subset=subset, row=row, item_id=item_ids.get((subset, row), "")) for subset, row in sorted(query_rows)
    ]
    counts = [len(classes[name]) for name in LABEL_CLASSES]
    labels = LabelOverlap(len(queries), *counts) if compared else None
    found = SnapshotQueries(
        snapshot=snapshot.snapshot_id,
        content_hash=snapshot.content_hash,
        queries=len(queries),
        labels_compared=compared,
        classes=classes,  # type: ignore[arg-type]
    )
    return SnapshotOverlap(snapshot.snapshot_id, labels, near, len(query_rows)), found
