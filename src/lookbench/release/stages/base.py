"""What every stage is: the Stage Protocol, the context it runs in, and its typed result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from lookbench.embeddings.progress import image_progress
from lookbench.errors import ReleaseError
from lookbench.release.records import Problem, Sample, read_samples, write_samples
from lookbench.shards.executor import Executor, Progress
from lookbench.shards.local import LocalExecutor
from lookbench.shards.runner import Track
from lookbench.shards.table import MapResult, TableItems, TableJob, map_items

SAMPLES = "samples.parquet"


class StageStats(BaseModel):
    """What a stage did, for the build log, the manifest and the card."""

    model_config = ConfigDict(extra="forbid")


S = TypeVar("S", bound=StageStats)


@dataclass
class StageResult:
    """A finished stage: its output (a work table or a published folder) and what it did."""

    output: Path
    stats: StageStats


@dataclass
class LogEntry:
    """One stage of one run: ran or skipped, when, how long, and its stats."""

    stage: str
    status: str
    started_at: str | None
    seconds: float | None
    stats: StageStats

    def to_json(self) -> dict[str, Any]:
        """The JSON form written to the build log and the manifest."""
        return {
            "stage": self.stage,
            "status": self.status,
            "started_at": self.started_at,
            "seconds": self.seconds,
            "stats": self.stats.model_dump(mode="json"),
        }


@dataclass
class StageContext:
    """The release a stage works on: its version and folders, the problem log and the stages finished before."""

    version: str
    release_date: date
    output: Path
    work: Path
    state: Path
    problems: list[Problem] = field(default_factory=list)
    log: list[LogEntry] = field(default_factory=list)
    executor: Executor = field(default_factory=LocalExecutor)
    """Where per-item work runs as shards (labelling, judging, detecting, hashing)."""
    shards: int | None = None
    """Shards per stage input (None: shards of each job's fixed size)."""
    progress: bool = False
    say: Callable[[str], None] = lambda _line: None

    def folder(self, stage: str) -> Path:
        """A stage's own work folder."""
        path = self.work / stage
        path.mkdir(parents=True, exist_ok=True)
        return path

    def report(self, source: str, url: str, error: str) -> None:
        """Record a problem with one input; the build goes on."""
        self.problems.append(Problem(source, url, error))

    def stats_json(self, stage: str) -> dict[str, Any]:
        """The JSON form of a finished stage's stats, or {} if it did not run (stages never import each other)."""
        for entry in reversed(self.log):
            if entry.stage == stage:
                return entry.stats.model_dump(mode="json")
        return {}

    def stats_of(self, kind: type[S]) -> S | None:
        """The stats of the latest finished stage that reports `kind`, or None."""
        for entry in reversed(self.log):
            if isinstance(entry.stats, kind):
                return entry.stats
        return None


class Stage(Protocol):
    """One step: reads the previous stage's work table (None for the first) and writes its own.

    A stage holds only its own config section; `fingerprint` hashes that section (plus any input outside the work
    tables), and the pipeline skips the stage on a re-run while the fingerprint and its input are unchanged.
    """

    name: str

    @property
    def stats_type(self) -> type[StageStats]:
        """The stats model of its result (to read them back from its marker)."""
        ...

    def check(self) -> None:
        """Raise ReleaseError if the stage cannot run as configured; called for every stage before collect starts."""
        ...

    def fingerprint(self, ctx: StageContext) -> str:
        """sha256 of the stage's settings and of any input it reads besides the previous work table."""
        ...

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Do the work."""
        ...


def stage_shards(ctx: StageContext, stage: str, job: TableJob) -> tuple[Path, Track]:
    """Where a stage's job keeps its shards, and its progress display."""

    def track(total: int) -> AbstractContextManager[Progress]:
        label = f"{stage}: {job.name} on {ctx.executor.name}"
        return image_progress(label, total, ctx.progress, unit="item")

    return ctx.folder(stage) / "shards" / job.name, track


def run_items(
    ctx: StageContext,
    stage: str,
    job: TableJob,
    items: Sequence[Any],
    keys: Sequence[str],
    job_sha256: str,
    rows_per_shard: int,
) -> MapResult:
    """Map a stage's items as shards on the build's executor; says how many shards ran and were already done."""
    folder, track = stage_shards(ctx, stage, job)
    work = TableItems(job, folder, items, keys, job_sha256, ctx.shards, rows_per_shard)
    result = map_items(ctx.executor, work, track)
    ctx.say(f"{stage}: {job.name} {result.run.summary()}")
    return result


def samples_of(previous: Path | None) -> list[Sample]:
    """The samples the previous stage wrote."""
    if previous is None:
        raise ReleaseError("this stage needs the output of an earlier stage")
    return read_samples(previous)


def save_samples(ctx: StageContext, stage: str, samples: list[Sample]) -> Path:
    """Write a stage's work table to `work/<stage>/samples.parquet`."""
    return write_samples(samples, ctx.folder(stage) / SAMPLES)
