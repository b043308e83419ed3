"""Typed records of a build: a sample with every work-table column, a problem, and work-table files."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.atomic import atomic_path, write_text_atomic
from lookbench._util.hashing import sha1_hex, sha256_hex
from lookbench._util.jsontext import loads
from lookbench.snapshot.schema import NOISE

TS = pa.timestamp("us", tz="UTC")
STRINGS = pa.list_(pa.string())

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
        ("other_attributes", STRINGS),
        ("subsets", STRINGS),
        ("generated", pa.bool_()),
        ("generation", pa.string()),
        ("raw_image", pa.binary()),
        ("bbox", pa.list_(pa.float64())),
        ("outfit_id", pa.string()),
        ("source_main_attribute", pa.string()),
        ("source_other_attributes", STRINGS),
        ("label_source", pa.string()),
        ("excluded_attributes", STRINGS),
        ("subset", pa.string()),
        ("split", pa.string()),
        ("item_ID", pa.string()),
        ("modification_text", pa.string()),
        ("changes", pa.string()),
        ("target_ids", STRINGS),
    ]
)
"""Columns of every work table: what sources collect, then what later stages fill in (null until then)."""


@dataclass
class Sample:
    """A product image with its labels, time stamps and provenance, and what the stages decided about it."""

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
    source_main_attribute: str | None = None
    """The source's labels, kept beside the annotator's (annotate stage)."""
    source_other_attributes: list[str] | None = None
    label_source: str | None = None
    excluded_attributes: list[str] | None = None
    """Attributes the audit removed from `other_attributes`."""
    subset: str | None = None
    """Placement (split stage): subset, split and item_ID."""
    split: str | None = None
    item_ID: str | None = None  # noqa: N815 - the snapshot column's name
    modification_text: str | None = None
    """A composed query (compose stage): its text, its changes as JSON `[{group, from, to}]` and its targets."""
    changes: str | None = None
    target_ids: list[str] | None = None
    sample_id: str = ""
    image_sha256: str = ""

    def __post_init__(self) -> None:
        if not self.image_sha256:
            self.image_sha256 = sha256_hex(self.image)
        if not self.sample_id:
            product = sha1_hex(self.product_id)[:8]
            self.sample_id = f"{self.source}:{self.image_sha256[:16]}:{product}"

    def replace_image(self, image: bytes) -> None:
        """Swap the image bytes (a crop for its photo), keeping the hash in step."""
        self.image = image
        self.image_sha256 = sha256_hex(image)

    @property
    def is_noise_only(self) -> bool:
        """True for a distractor-only sample: never relevant to a query."""
        return set(self.subsets) == {NOISE}

    def to_row(self) -> dict[str, Any]:
        """The work-table row."""
        row = asdict(self)
        row["generation"] = (
            None if self.generation is None else json.dumps(self.generation, sort_keys=True, default=str)
        )
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Sample:
        """A sample from a work-table row."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in known}
        if isinstance(values.get("generation"), str):
            values["generation"] = loads(values["generation"])
        for name in ("first_seen_at", "source_published_at"):
            when = values.get(name)
            if isinstance(when, datetime) and when.tzinfo is None:
                values[name] = when.replace(tzinfo=timezone.utc)
        return cls(**values)


def samples_table(samples: Iterable[Sample]) -> pa.Table:
    """A work table from samples, in the SAMPLE_SCHEMA column order."""
    rows = [s.to_row() for s in samples]
    return pa.Table.from_pylist(rows, schema=SAMPLE_SCHEMA) if rows else SAMPLE_SCHEMA.empty_table()


def write_table(table: pa.Table, path: Path) -> Path:
    """Atomically write a parquet table (work tables and side tables)."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return path


def write_samples(samples: Iterable[Sample], path: Path) -> Path:
    """Atomically write samples as a work table."""
    return write_table(samples_table(samples), path)


def read_samples(path: Path) -> list[Sample]:
    """The samples of a work table."""
    return [Sample.from_row(row) for row in pq.read_table(path).to_pylist()]


@dataclass(frozen=True)
class Problem:
    """One input that could not be used, naming where it came from; the build went on without it."""

    source: str
    """The source (or stage) that met it."""
    url: str
    """The URL, file (`path:line`), photo or sample at fault."""
    error: str
    at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())

    def to_json(self) -> dict[str, str]:
        """The JSON form kept in problem logs and markers."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        """A problem from its JSON form."""
        return cls(
            str(data.get("source", "")), str(data.get("url", "")), str(data.get("error", "")), str(data.get("at", ""))
        )


def write_problems(problems: Iterable[Problem], path: Path) -> None:
    """Problems as JSON lines, written atomically."""
    write_text_atomic(path, "".join(json.dumps(p.to_json()) + "\n" for p in problems))
