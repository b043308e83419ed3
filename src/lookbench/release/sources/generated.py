"""`generated` source: AI-generated images with their generation records (`records.jsonl`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.dates import parse_datetime
from lookbench._util.images import image_size
from lookbench._util.jsontext import loads
from lookbench._util.labels import normalise_label
from lookbench.errors import ReleaseError
from lookbench.release.config import GeneratedSource
from lookbench.release.records import Sample
from lookbench.release.sources.base import CollectContext
from lookbench.release.sources.catalog import confined
from lookbench.release.sources.metadata import split_list

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
        self.records = 0

    def counts(self) -> dict[str, int]:
        """Records read."""
        return {"records": self.records}

    def collect(self, ctx: CollectContext) -> Iterator[Sample]:
        """Yield one sample per valid record; report the others."""
        records = Path(self.config.path) / RECORDS
        if not records.is_file():
            raise ReleaseError(f"generated source {self.name}: {records} not found")
        base = records.parent.resolve()
        try:
            lines = records.read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError) as exc:
            ctx.report(str(records), f"records not read: {exc}")
            return
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            self.records += 1
            where = f"{records}:{number}"
            try:
                record = GenerationRecord.model_validate(loads(line))
                yield self._sample(base, f"{RECORDS}:{number}", record, ctx)
            except (ValueError, ValidationError, OSError) as exc:
                ctx.report(where, f"skipped: {exc}")

    def _sample(self, base: Path, where: str, record: GenerationRecord, ctx: CollectContext) -> Sample:
        path = confined(base, record.file, self.kind)
        data = path.read_bytes()
        image_size(data)
        created = parse_datetime(record.created_at)
        generation: dict[str, Any] = record.model_dump(
            exclude={"file", "product_id", "category", "main_attribute", "other_attributes"}
        )
        return Sample(
            source=self.name,
            source_kind=self.kind,
            product_id=record.product_id,
            image=data,
            first_seen_at=ctx.now(),
            category=normalise_label(record.category),
            main_attribute=normalise_label(record.main_attribute),
            other_attributes=split_list(record.other_attributes),
            subsets=list(self.config.subsets),
            license=self.config.license,
            source_url=where,
            image_url=path.relative_to(base).as_posix(),
            source_published_at=created,
            published_at_origin="generator",
            generated=True,
            generation=generation,
        )
