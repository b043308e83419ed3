"""The release pipeline: the configured stages in order, each checked before anything runs, each resumed honestly.

A stage is skipped on a re-run only when its marker (`WORK/<stage>/DONE.json`) was written for the same key: the
hash of the stage's own settings (and of any outside input it reads) together with the sha256 of the work table
it read. Editing one section re-runs that stage; later stages re-run only if its output changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench._util.hashing import file_sha256, json_sha256
from lookbench._util.jsontext import loads
from lookbench.release.config import ReleaseConfig
from lookbench.release.judge.judge import Judge
from lookbench.release.records import Problem, write_problems
from lookbench.release.stages.annotate import AnnotateStage
from lookbench.release.stages.audit import AuditStage
from lookbench.release.stages.base import LogEntry, S, Stage, StageContext
from lookbench.release.stages.collect import CollectStage
from lookbench.release.stages.compose import ComposeStage
from lookbench.release.stages.crop import CropStage
from lookbench.release.stages.dedup import DedupStage
from lookbench.release.stages.distractors import DistractorStage
from lookbench.release.stages.publish import PublishStage
from lookbench.release.stages.split import SplitStage
from lookbench.shards.executor import Executor
from lookbench.snapshot.manifest import MANIFEST_NAME

DONE = "DONE.json"


class Marker(BaseModel):
    """`WORK/<stage>/DONE.json`: the key a finished stage ran under, its output and what it logged."""

    model_config = ConfigDict(extra="forbid")

    key: str
    output: str
    output_sha256: str
    log: dict[str, Any]
    problems: list[dict[str, str]]


@dataclass
class ReleaseRun:
    """What a run did: the log of every stage (ran or skipped) and every problem met."""

    config: ReleaseConfig
    log: list[LogEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def stats(self, kind: type[S]) -> S | None:
        """The stats of the stage that reports `kind`, or None if it is not in the pipeline."""
        for entry in self.log:
            if isinstance(entry.stats, kind):
                return entry.stats
        return None


def stages_for(config: ReleaseConfig, judge: Judge | None = None) -> list[Stage]:
    """collect, dedup, [crop, annotate, audit, distractors when configured], split, [compose], publish."""
    stages: list[Stage] = [CollectStage(config.sources), DedupStage(config.dedup)]
    if config.crop is not None:
        stages.append(CropStage(config.crop))
    if config.annotate is not None:
        stages.append(AnnotateStage(config.annotate))
    if config.audit is not None:
        stages.append(AuditStage(config.audit, judge))
    if config.distractors is not None:
        stages.append(DistractorStage(config.distractors))
    stages.append(SplitStage(config.split))
    if config.compose is not None:
        stages.append(ComposeStage(config.compose))
    return [*stages, PublishStage(config.publish_section())]


def release_context(config: ReleaseConfig, sharding: Sharding | None = None) -> StageContext:
    """The context stages of this release run in."""
    ctx = StageContext(config.version, config.release_date, config.output, config.work, config.state_dir)
    if sharding is not None:
        ctx.executor, ctx.shards, ctx.progress = sharding.executor, sharding.shards, sharding.progress
    return ctx


@dataclass
class Sharding:
    """Where stages run their per-item work: the executor, shards per stage input, and a progress bar or not."""

    executor: Executor
    shards: int | None = None
    progress: bool = False


def output_sha256(path: Path) -> str:
    """sha256 of a stage's output: the work table, or a published version's manifest."""
    if path.is_dir():
        manifest = path / MANIFEST_NAME
        return file_sha256(manifest) if manifest.is_file() else ""
    return file_sha256(path) if path.is_file() else ""


def _marker(path: Path) -> Marker | None:
    try:
        return Marker.model_validate(loads(path.read_text(encoding="utf-8"))) if path.is_file() else None
    except (OSError, ValueError, ValidationError):
        return None


def _resumed(stage: Stage, marker: Marker | None, key: str) -> LogEntry | None:
    """The logged entry of a finished stage whose key and output still hold, else None."""
    if marker is None or marker.key != key:
        return None
    output = Path(marker.output)
    if not output.exists() or output_sha256(output) != marker.output_sha256:
        return None
    try:
        stats = stage.stats_type.model_validate(marker.log.get("stats", {}))
    except ValidationError:
        return None
    log = marker.log
    return LogEntry(stage.name, "skipped (already done)", log.get("started_at"), log.get("seconds"), stats)


def run_stages(
    config: ReleaseConfig,
    stages: Sequence[Stage],
    echo: Callable[[str], None] = lambda _: None,
    sharding: Sharding | None = None,
) -> ReleaseRun:
    """Check every stage, then run them in order; a stage whose marker matches its key is skipped."""
    for stage in stages:
        stage.check()
    ctx = release_context(config, sharding)
    ctx.say = echo
    config.work.mkdir(parents=True, exist_ok=True)
    run = ReleaseRun(config, ctx.log, ctx.problems)
    try:
        _run(stages, ctx, config.work, echo)
    finally:
        write_text_atomic(config.work / "build_log.json", json.dumps([e.to_json() for e in ctx.log], indent=1))
        write_problems(ctx.problems, config.work / "problems.jsonl")
    return run


def _run(stages: Sequence[Stage], ctx: StageContext, work: Path, echo: Callable[[str], None]) -> None:
    previous: Path | None = None
    previous_sha = ""
    for stage in stages:
        key = json_sha256([stage.name, stage.fingerprint(ctx), previous_sha])
        path = work / stage.name / DONE
        marker = _marker(path)
        entry = _resumed(stage, marker, key)
        if entry is not None and marker is not None:
            ctx.log.append(entry)
            ctx.problems.extend(Problem.from_json(p) for p in marker.problems)
            previous, previous_sha = Path(marker.output), marker.output_sha256
            echo(f"{stage.name}: already done, skipped")
            continue
        path.unlink(missing_ok=True)
        started_at = datetime.now(timezone.utc).isoformat()
        started = time.monotonic()
        before = len(ctx.problems)
        result = stage.run(ctx, previous)
        entry = LogEntry(stage.name, "ran", started_at, round(time.monotonic() - started, 3), result.stats)
        ctx.log.append(entry)
        previous, previous_sha = result.output, output_sha256(result.output)
        done = Marker(
            key=key,
            output=str(result.output),
            output_sha256=previous_sha,
            log=entry.to_json(),
            problems=[p.to_json() for p in ctx.problems[before:]],
        )
        write_text_atomic(path, done.model_dump_json(indent=1))
        echo(f"{stage.name}: done in {entry.seconds}s")


def run_release(
    config: ReleaseConfig, echo: Callable[[str], None] = lambda _: None, sharding: Sharding | None = None
) -> ReleaseRun:
    """Build the release its config describes."""
    return run_stages(config, stages_for(config), echo, sharding)
