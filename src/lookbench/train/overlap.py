"""How far a training set reaches into each evaluation snapshot: shared labels (where both sides have them) and the
guard's near-duplicate pixels (always). Written into `guard.json`, the model card and its README."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lookbench.snapshot.reader import Snapshot
from lookbench.taxonomy.designs import LabelOverlap, Labels, label_overlap, query_labels

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


def snapshot_overlap(snapshot: Snapshot, training: list[Labels], matched: list[str]) -> SnapshotOverlap:
    """The overlap of one evaluation snapshot with the training labels and the guard's matched evaluation keys."""
    queries = query_labels(snapshot)
    labelled = [labels for labels in training if labels[0]]
    labels = label_overlap(queries, labelled) if queries and labelled else None
    prefix = f"{snapshot.snapshot_id}/"
    mine = [key for key in matched if key.startswith(prefix)]
    query_rows = {key for key in mine if key.split("#")[0].endswith(f"/{QUERY}")}
    return SnapshotOverlap(snapshot.snapshot_id, labels, len(mine), len(query_rows))
