"""`generated` source: AI-generated images with their generation records (`records.jsonl`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench.errors import BuildError
from lookbench.release.config import GeneratedSource
from lookbench.release.dates import parse_when
from lookbench.release.images import check_image
from lookbench.release.labels import split_list
from lookbench.release.sample import Sample
from lookbench.release.sources.base import CollectContext

RECORDS = "records.jsonl"


class GeneratorInfo(BaseModel):
    """Which model made the image."""

    model: str
    revision: str


class GenerationRecord(BaseModel):
    """One generated image: file, product grouping, labels and the full generation record."""

    model_config = ConfigDict(extra="allow")

    file: str
    product_id: str
    category: str
    main_attribute: str
    other_attributes: list[str] | str = []
    generator: GeneratorInfo
    prompt: str
    seed: int
    steps: int
    created_at: str


class GeneratedCollector:
    """Reads `records.jsonl` in the folder; every image is marked generated and keeps its record."""

    kind = "generated"

    def __init__(self, config: GeneratedSource) -> None:
        self.config = config
        self.name = config.name

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield one sample per valid record; report the others."""
        records = Path(self.config.path) / RECORDS
        if not records.is_file():
            raise BuildError(f"generated source {self.name}: {records} not found")
        for number, line in enumerate(records.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{records}:{number}"
            try:
                record = GenerationRecord.model_validate(json.loads(line))
                yield self._sample(records.parent, record, ctx)
            except (ValueError, ValidationError, OSError) as exc:
                ctx.report(where, f"skipped: {exc}")

    def _sample(self, base: Path, record: GenerationRecord, ctx: CollectContext) -> Sample:
        path = base / record.file
        data = path.read_bytes()
        check_image(data)
        created = parse_when(record.created_at)
        if created is None:
            raise ValueError(f"created_at {record.created_at!r} is not an ISO date")
        generation: dict[str, Any] = record.model_dump(
            exclude={"file", "product_id", "category", "main_attribute", "other_attributes"}
        )
        return Sample(
            source=self.name,
            source_kind=self.kind,
            product_id=record.product_id,
            image=data,
            first_seen_at=ctx.now(),
            category=record.category.strip().lower(),
            main_attribute=record.main_attribute.strip().lower(),
            other_attributes=split_list(record.other_attributes),
            subsets=list(self.config.subsets),
            license=self.config.license,
            source_url=path.resolve().as_uri(),
            image_url=path.resolve().as_uri(),
            source_published_at=created,
            published_at_origin="generator",
            generated=True,
            generation=generation,
        )
