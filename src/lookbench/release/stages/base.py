"""The Stage Protocol and what a stage gets to work with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.release.config import ReleaseConfig
from lookbench.release.sample import write_table

SAMPLES = "samples.parquet"


@dataclass
class StageResult:
    """A finished stage: its output (a work table or a published folder) and what it did."""

    output: Path
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class BuildContext:
    """The release being built, its work folder and the log of stages finished so far."""

    config: ReleaseConfig
    log: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)

    def folder(self, stage: str) -> Path:
        """A stage's own work folder."""
        path = self.config.work / stage
        path.mkdir(parents=True, exist_ok=True)
        return path

    def stats_of(self, stage: str) -> dict[str, Any]:
        """The stats a stage logged, or {} if it has not run."""
        for entry in reversed(self.log):
            if entry["stage"] == stage:
                return dict(entry.get("stats", {}))
        return {}


class Stage(Protocol):
    """One step: reads the previous stage's work table (None for the first) and writes its own."""

    name: str

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Do the work; the runner records the result and skips the stage on a re-run once done."""
        ...


def read_samples(path: Path | None) -> pa.Table:
    """The work table a previous stage wrote."""
    if path is None:
        raise ValueError("this stage needs the output of an earlier stage")
    return pq.read_table(path)


def write_samples(ctx: BuildContext, stage: str, table: pa.Table) -> Path:
    """Write a stage's work table to `work/<stage>/samples.parquet`."""
    return write_table(table, ctx.folder(stage) / SAMPLES)
