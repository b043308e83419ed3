"""What an importer works with: the distribution, the snapshot being written, the options, and skipped rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.datasets.legacy.images import StoredImage, crop_image, read_image
from lookbench.datasets.legacy.source import Distribution
from lookbench.datasets.legacy.writer import SnapshotWriter
from lookbench.errors import DatasetImportError


@dataclass(frozen=True)
class ImportOptions:
    """Choices a user makes for an import (each importer refuses those it has no use for)."""

    train: bool = True
    """Write the dataset's training rows as each subset's `train` split."""
    skip_missing: bool = False
    """Leave out rows whose image is missing or unreadable (counted in the card) instead of stopping."""
    detections: Path | None = None
    """DeepFashion2: detector boxes (COCO results JSON) to cut queries and gallery items from."""
    tirg_queries: Path | None = None
    """Fashion200K: TIRG's `test_queries.txt` (default: looked for in the dataset folder)."""
    unpinned: bool = False
    """Fashion-MNIST: accept files whose content is not the pinned release (recorded in the card's notes)."""


@dataclass
class ImportContext:
    """Shared state of one import."""

    dist: Distribution
    writer: SnapshotWriter
    options: ImportOptions
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def _skip(self, exc: DatasetImportError, where: str) -> None:
        if not self.options.skip_missing:
            raise exc
        self.skipped.setdefault(where.rsplit(":", 1)[0], []).append(str(exc))

    def image(self, path: Path, where: str) -> StoredImage | None:
        """The image's bytes as published; None (and counted) for a missing one under --skip-missing."""
        try:
            return read_image(path, where)
        except DatasetImportError as exc:
            self._skip(exc, where)
            return None

    def crop(self, path: Path, box: tuple[float, float, float, float], where: str) -> StoredImage | None:
        """The box of an image as JPEG; None (and counted) for a missing or unreadable image under --skip-missing."""
        if not path.is_file():
            self._skip(DatasetImportError(f"{where}: image {path} is missing"), where)
            return None
        return crop_image(path, box, where)

    def add_category_row(
        self,
        split: tuple[str, str],
        extras: Mapping[str, pa.DataType],
        stored: StoredImage,
        where: str,
        image: Path,
        category: str,
        item: str,
        **values: Any,
    ) -> None:
        """Append a `(subset, split)` row labelled by its category only (the dataset has no attributes)."""
        self.writer.split(*split, extras).add(
            stored,
            where,
            self.dist.relative(image),
            category=category,
            main_attribute="",
            other_attributes=[],
            item_ID=item,
            **values,
        )

    def skipped_notes(self) -> list[str]:
        """One line per list file that had rows left out, with the first reason."""
        return [
            f"{len(reasons)} row(s) of {self.dist.relative(Path(source))} left out (--skip-missing); "
            f"first: {reasons[0]}"
            for source, reasons in sorted(self.skipped.items())
        ]
