"""`catalog` source: a team's own product images listed in a CSV or parquet manifest."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from lookbench.errors import BuildError
from lookbench.release.config import CatalogSource
from lookbench.release.dates import parse_when
from lookbench.release.images import check_image
from lookbench.release.labels import colour_labels, split_list
from lookbench.release.sample import Sample
from lookbench.release.sources.base import CollectContext

MANIFEST_NAMES = ("manifest.csv", "manifest.parquet")


def find_manifest(path: Path) -> Path:
    """The manifest file itself, or the manifest.csv/parquet inside a folder."""
    if path.is_file():
        return path
    for name in MANIFEST_NAMES:
        if (path / name).is_file():
            return path / name
    raise BuildError(
        f"catalog {path}: expected a CSV/parquet manifest or a folder holding {' or '.join(MANIFEST_NAMES)}"
    )


def read_rows(manifest: Path) -> list[dict[str, Any]]:
    """Manifest rows as dicts."""
    if manifest.suffix == ".parquet":
        return pq.read_table(manifest).to_pylist()
    with manifest.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


class CatalogCollector:
    """Reads the manifest; each row is one image of a product (`image`, `product_id`, `category`, colour...)."""

    kind = "catalog"

    def __init__(self, config: CatalogSource) -> None:
        self.config = config
        self.name = config.name

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield one sample per readable manifest row; report the others."""
        manifest = find_manifest(self.config.path)
        for number, row in enumerate(read_rows(manifest), start=2):
            where = f"{manifest}:{number}"
            try:
                yield self._sample(manifest.parent, row, ctx)
            except (ValueError, OSError, KeyError) as exc:
                ctx.report(where, f"skipped: {exc}")

    def _sample(self, base: Path, row: dict[str, Any], ctx: CollectContext) -> Sample:
        image_path = base / str(row["image"])
        data = image_path.read_bytes()
        check_image(data)
        category = str(row.get("category") or "").strip().lower()
        main = str(row.get("main_attribute") or "").strip().lower()
        others = split_list(row.get("other_attributes"))
        if not main:
            main, others = colour_labels(row.get("color") or row.get("colour"))
        if not category or not row.get("product_id"):
            raise ValueError("row needs product_id and category")
        published = parse_when(row.get("published_at"))
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
            source_url=str(row.get("url") or image_path.resolve().as_uri()),
            image_url=image_path.resolve().as_uri(),
            source_published_at=published,
            published_at_origin="catalog manifest" if published else None,
            title=row.get("title") or None,
            brand=row.get("brand") or None,
        )
