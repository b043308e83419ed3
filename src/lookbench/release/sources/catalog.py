"""`catalog` source: a team's own product images listed in a CSV or parquet manifest."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.dates import optional_datetime
from lookbench._util.images import image_size
from lookbench._util.labels import normalise_label
from lookbench.errors import ReleaseError
from lookbench.release.config import CatalogSource
from lookbench.release.records import Sample
from lookbench.release.sources.base import CollectContext
from lookbench.release.sources.metadata import colour_labels, split_list, web_url

MANIFEST_NAMES = ("manifest.csv", "manifest.parquet")


def find_manifest(path: Path) -> Path:
    """The manifest file itself, or the manifest.csv/parquet inside a folder."""
    if path.is_file():
        return path
    for name in MANIFEST_NAMES:
        if (path / name).is_file():
            return path / name
    raise ReleaseError(
        f"catalog {path}: expected a CSV/parquet manifest or a folder holding {' or '.join(MANIFEST_NAMES)}"
    )


def read_rows(manifest: Path) -> list[dict[str, Any]]:
    """Manifest rows as dicts; ValueError or OSError if the file cannot be read as a manifest."""
    if manifest.suffix == ".parquet":
        try:
            return pq.read_table(manifest).to_pylist()
        except pa.ArrowException as exc:
            raise ValueError(f"not a readable parquet file ({exc})") from exc
    with manifest.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def confined(base: Path, name: object, folder: str = "catalog") -> Path:
    """`base / name`, refused (ValueError) when it resolves outside `base` (`..`, absolute paths, symlinks)."""
    target = (base / str(name)).resolve()
    if not target.is_relative_to(base):
        raise ValueError(f"image path {str(name)!r} is outside the {folder} folder {base}")
    return target


class CatalogCollector:
    """Reads the manifest; each row is one image of a product (`image`, `product_id`, `category`, colour...)."""

    kind = "catalog"

    def __init__(self, config: CatalogSource) -> None:
        self.config = config
        self.name = config.name
        self.rows = 0

    def counts(self) -> dict[str, int]:
        """Manifest rows read."""
        return {"manifest_rows": self.rows}

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield one sample per usable manifest row; report the others (and an unreadable manifest)."""
        manifest = find_manifest(self.config.path)
        try:
            rows = read_rows(manifest)
        except (ValueError, OSError, csv.Error) as exc:
            ctx.report(str(manifest), f"manifest not read: {exc}")
            return
        base = manifest.parent.resolve()
        for number, row in enumerate(rows, start=2):
            self.rows += 1
            where = f"{manifest}:{number}"
            try:
                yield self._sample(base, f"{manifest.name}:{number}", row, ctx)
            except (ValueError, OSError, KeyError) as exc:
                ctx.report(where, f"skipped: {exc}")

    def _sample(self, base: Path, record: str, row: dict[str, Any], ctx: CollectContext) -> Sample:
        image_path = confined(base, row["image"])
        data = image_path.read_bytes()
        image_size(data)
        category = normalise_label(row.get("category") or "")
        main = normalise_label(row.get("main_attribute") or "")
        others = split_list(row.get("other_attributes"))
        if not main:
            main, others = colour_labels(row.get("color") or row.get("colour"))
        if not category or not row.get("product_id"):
            raise ValueError("row needs product_id and category")
        try:
            published = optional_datetime(row.get("published_at"))
        except ValueError as exc:
            ctx.report(f"{base / record}", f"published_at ignored: {exc}")
            published = None
        return Sample(
            source=self.name,
            source_kind=self.kind,
            product_id=str(row["product_id"]),
            image=data,
            first_seen_at=ctx.now(),
            category=category,
            main_attribute=main,
            other_attributes=others,
            subsets=list(self.config.subsets),
            license=str(row.get("license") or self.config.license),
            source_url=web_url(row.get("url")) or record,
            image_url=image_path.relative_to(base).as_posix(),
            source_published_at=published,
            published_at_origin="catalog manifest" if published else None,
            title=row.get("title") or None,
            brand=row.get("brand") or None,
        )
