"""Collect: run every source into `work/collect/<source>.parquet`; a re-run reuses parts whose source is unchanged."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench._util.hashing import json_sha256
from lookbench._util.jsontext import loads
from lookbench.release.config import SourceConfig
from lookbench.release.records import SAMPLE_SCHEMA, Problem, Sample, samples_table, write_problems, write_table
from lookbench.release.sources import CollectContext, make_source
from lookbench.release.stages.base import SAMPLES, StageContext, StageResult, StageStats

WORK_FORMAT = json_sha256(SAMPLE_SCHEMA.to_string())
"""Identifies the work-table columns: a part written with other columns is collected again."""


class SourceStats(StageStats):
    """One source's part of the collect stage."""

    kind: str
    samples: int
    problem_count: int
    seconds: float
    resumed: bool = False
    counts: dict[str, int] = {}


class CollectStats(StageStats):
    """Samples collected, per source."""

    samples: int
    sources: dict[str, SourceStats]


class SourcePart(BaseModel):
    """`<source>.done.json`: which source config and work format a finished part was collected under."""

    model_config = ConfigDict(extra="forbid")

    config_sha256: str
    stats: SourceStats
    problems: list[dict[str, str]]


class CollectStage:
    """Gathers samples from all configured sources, keeping each source's problems with the URL at fault."""

    name = "collect"
    stats_type = CollectStats

    def __init__(self, sources: list[SourceConfig]) -> None:
        self.sources = sources

    def check(self) -> None:
        """Sources are checked as they are collected: their inputs may appear between runs."""

    def fingerprint(self, ctx: StageContext) -> str:
        """The source configs (each part is also keyed on its own config)."""
        return json_sha256([WORK_FORMAT, *(s.fingerprint() for s in self.sources)])

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Collect each source (or reuse its finished part) and concatenate the parts."""
        folder = ctx.folder(self.name)
        parts: list[pa.Table] = []
        stats: dict[str, SourceStats] = {}
        for config in self.sources:
            key = json_sha256([WORK_FORMAT, config.fingerprint()])
            part = folder / f"{config.name}.parquet"
            done = _finished(folder / f"{config.name}.done.json", key, part)
            if done is None:
                done = self._collect_one(ctx, config, key, folder, part)
                write_text_atomic(folder / f"{config.name}.done.json", done.model_dump_json(indent=1))
            else:
                done.stats.resumed = True
            ctx.problems.extend(Problem.from_json(p) for p in done.problems)
            stats[config.name] = done.stats
            parts.append(pq.read_table(part))
        table = pa.concat_tables(parts) if parts else samples_table([])
        output = write_table(table, folder / SAMPLES)
        return StageResult(output, CollectStats(samples=table.num_rows, sources=stats))

    def _collect_one(self, ctx: StageContext, config: SourceConfig, key: str, folder: Path, part: Path) -> SourcePart:
        source = make_source(config)
        cctx = CollectContext(ctx.version, folder / config.name, ctx.state / config.name, config.name)
        cctx.work.mkdir(parents=True, exist_ok=True)
        cctx.state.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        samples: list[Sample] = []
        try:
            samples.extend(source.collect(cctx))
        finally:
            write_table(samples_table(samples), part)
            write_problems(cctx.problems, folder / f"{config.name}.problems.jsonl")
        stats = SourceStats(
            kind=source.kind,
            samples=len(samples),
            problem_count=len(cctx.problems),
            seconds=round(time.monotonic() - started, 3),
            counts=source.counts(),
        )
        return SourcePart(config_sha256=key, stats=stats, problems=[p.to_json() for p in cctx.problems])


def _finished(done: Path, key: str, part: Path) -> SourcePart | None:
    """The finished part's record if it was collected under `key` and its table is there."""
    if not done.is_file() or not part.is_file():
        return None
    try:
        record = SourcePart.model_validate(loads(done.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None
    return record if record.config_sha256 == key else None
