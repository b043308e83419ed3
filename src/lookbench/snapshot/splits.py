"""What readers of a snapshot's splits need of it, declared below the reader so they need not import it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from lookbench.snapshot.labels import SplitLabels


class SplitSource(Protocol):
    """A snapshot's split files and their normalised labels (the reader's `Snapshot` is one)."""

    def files(self, subset: str, split: str) -> list[Path]:
        """The parquet file(s) of one split."""
        ...

    def has_split(self, subset: str, split: str) -> bool:
        """True if the split has at least one file."""
        ...

    def labels(self, subset: str, split: str) -> SplitLabels:
        """Normalised labels of a split."""
        ...
