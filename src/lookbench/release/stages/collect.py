"""Collect: run every source into `work/collect/<source>.parquet`; a re-run skips sources already finished."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.atomic import write_text_atomic
from lookbench.release.sample import Sample, samples_table, write_table
from lookbench.release.sources import CollectContext, make_source
from lookbench.release.stages.base import BuildContext, StageResult, write_samples


class CollectStage:
    """Gathers samples from all configured sources, keeping each source's problems with the URL at fault."""

    name = "collect"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Collect each source (or reuse its finished part) and concatenate the parts."""
        folder = ctx.folder(self.name)
        parts: list[pa.Table] = []
        stats: dict[str, dict[str, object]] = {}
        for config in ctx.config.sources:
            done = folder / f"{config.name}.done.json"
            part = folder / f"{config.name}.parquet"
            if done.is_file() and part.is_file():
                info = json.loads(done.read_text(encoding="utf-8"))
                info["resumed"] = True
            else:
                info = self._collect_one(ctx, config.name, folder, part)
                write_text_atomic(done, json.dumps(info, indent=1, default=str))
            ctx.problems.extend(info.get("problems", []))
            stats[config.name] = {k: v for k, v in info.items() if k != "problems"}
            parts.append(pq.read_table(part))
        table = pa.concat_tables(parts) if parts else samples_table([])
        return StageResult(write_samples(ctx, self.name, table), {"samples": table.num_rows, "sources": stats})

    def _collect_one(self, ctx: BuildContext, name: str, folder: Path, part: Path) -> dict[str, object]:
        config = next(s for s in ctx.config.sources if s.name == name)
        source = make_source(config)
        cctx = CollectContext(ctx.config, folder / name, ctx.config.state_dir / name)
        cctx.work.mkdir(parents=True, exist_ok=True)
        cctx.state.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        samples: list[Sample] = []
        try:
            samples.extend(source.collect(cctx))
        finally:
            write_table(samples_table(samples), part)
            cctx.write_problems(folder / f"{name}.problems.jsonl")
        problems = [{"source": name, **p} for p in cctx.problems]
        return {
            "kind": source.kind,
            "samples": len(samples),
            "problems": problems,
            "problem_count": len(problems),
            "seconds": round(time.monotonic() - started, 3),
            **getattr(source, "stats", {}),
        }
