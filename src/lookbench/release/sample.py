"""One collected sample and the parquet schema of the work tables that hold them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.atomic import atomic_path

TS = pa.timestamp("us", tz="UTC")

SAMPLE_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("source", pa.string()),
        ("source_kind", pa.string()),
        ("source_url", pa.string()),
        ("image_url", pa.string()),
        ("product_id", pa.string()),
        ("image", pa.binary()),
        ("image_sha256", pa.string()),
        ("first_seen_at", TS),
        ("source_published_at", TS),
        ("published_at_origin", pa.string()),
        ("license", pa.string()),
        ("title", pa.string()),
        ("brand", pa.string()),
        ("category", pa.string()),
        ("main_attribute", pa.string()),
        ("other_attributes", pa.list_(pa.string())),
        ("subsets", pa.list_(pa.string())),
        ("generated", pa.bool_()),
        ("generation", pa.string()),
        ("raw_image", pa.binary()),
        ("bbox", pa.list_(pa.float64())),
        ("outfit_id", pa.string()),
    ]
)
"""Columns of every work table; later stages add their own columns on the right."""


@dataclass
class Sample:
    """A product image with its labels, time stamps and provenance."""

    source: str
    source_kind: str
    product_id: str
    image: bytes
    first_seen_at: datetime
    category: str
    main_attribute: str
    subsets: list[str]
    license: str
    source_url: str | None = None
    image_url: str | None = None
    source_published_at: datetime | None = None
    published_at_origin: str | None = None
    title: str | None = None
    brand: str | None = None
    other_attributes: list[str] = field(default_factory=list)
    generated: bool = False
    generation: dict[str, Any] | None = None
    raw_image: bytes | None = None
    """The full photo a crop was cut from (street looks); None for a whole-image sample."""
    bbox: list[float] | None = None
    """[x0, y0, x1, y1] of the crop in `raw_image`."""
    outfit_id: str | None = None

    @property
    def image_sha256(self) -> str:
        """Hex sha256 of the encoded image bytes."""
        return hashlib.sha256(self.image).hexdigest()

    def to_row(self) -> dict[str, Any]:
        """The work-table row of this sample."""
        row = asdict(self)
        row["image_sha256"] = self.image_sha256
        row["sample_id"] = (
            f"{self.source}:{self.image_sha256[:16]}:{hashlib.sha1(self.product_id.encode()).hexdigest()[:8]}"
        )
        row["generation"] = (
            None if self.generation is None else json.dumps(self.generation, sort_keys=True, default=str)
        )
        return row


def samples_table(samples: list[Sample]) -> pa.Table:
    """A work table from samples, in the SAMPLE_SCHEMA column order."""
    rows = [s.to_row() for s in samples]
    return pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA) if rows else SAMPLE_SCHEMA.empty_table()


def write_table(table: pa.Table, path: Path) -> Path:
    """Atomically write a work table."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path
