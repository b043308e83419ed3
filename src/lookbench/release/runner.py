"""Run stages in order over a release; finished stages are skipped on a re-run and everything goes in a build log."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from lookbench.atomic import write_text_atomic
from lookbench.release.config import ReleaseConfig
from lookbench.release.stages.base import BuildContext, Stage

DONE = "DONE.json"


def _marker(ctx: BuildContext, stage: Stage) -> Path:
    return ctx.config.work / stage.name / DONE


def run_stages(
    config: ReleaseConfig, stages: Sequence[Stage], echo: Callable[[str], None] = lambda _: None
) -> BuildContext:
    """Run `stages` in order; a stage whose marker matches this config is skipped, and so reruns resume."""
    ctx = BuildContext(config)
    config.work.mkdir(parents=True, exist_ok=True)
    config_hash = config.config_hash()
    previous: Path | None = None
    upstream_ran = False
    for stage in stages:
        marker = _marker(ctx, stage)
        done = json.loads(marker.read_text(encoding="utf-8")) if marker.is_file() else None
        if done and done["config_sha256"] == config_hash and not upstream_ran and Path(done["output"]).exists():
            entry: dict[str, Any] = {**done["log"], "status": "skipped (already done)"}
            ctx.log.append(entry)
            ctx.problems.extend(done.get("problems", []))
            previous = Path(done["output"])
            echo(f"{stage.name}: already done, skipped")
            continue
        marker.unlink(missing_ok=True)
        started_at = datetime.now(timezone.utc).isoformat()
        started = time.monotonic()
        before = len(ctx.problems)
        result = stage.run(ctx, previous)
        entry = {
            "stage": stage.name,
            "status": "ran",
            "started_at": started_at,
            "seconds": round(time.monotonic() - started, 3),
            "stats": result.stats,
        }
        ctx.log.append(entry)
        upstream_ran = True
        previous = result.output
        record: dict[str, Any] = {"config_sha256": config_hash, "output": str(result.output), "log": entry}
        record["problems"] = ctx.problems[before:]
        write_text_atomic(marker, json.dumps(record, indent=1, default=str))
        echo(f"{stage.name}: done in {entry['seconds']}s")
    write_text_atomic(config.work / "build_log.json", json.dumps(ctx.log, indent=1, default=str))
    return ctx
