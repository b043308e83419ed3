"""Audit stage: judge a stratified sample plus canaries, report accuracy, optionally exclude weak attributes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.atomic import write_text_atomic
from lookbench.errors import BuildError
from lookbench.release.audit.judge import Judge, OpenAIJudge
from lookbench.release.audit.report import build_report
from lookbench.release.audit.sampling import Check, canaries, checks_for, stratified_sample
from lookbench.release.sample import write_table
from lookbench.release.stages.base import BuildContext, StageResult, read_samples, write_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.snapshot.schema import NOISE
from lookbench.taxonomy import load_taxonomy

JUDGEMENT_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("category", pa.string()),
        ("attribute", pa.string()),
        ("group", pa.string()),
        ("canary", pa.bool_()),
        ("verdict", pa.string()),
        ("better_value", pa.string()),
        ("truth", pa.bool_()),
    ]
)


def _truth(row: dict[str, Any], check: Check) -> bool | None:
    """Whether the checked value is truly right; known only for Synth rows (canaries are wrong by construction)."""
    if check.canary:
        return False
    if row["source_kind"] != "synth":
        return None
    return check.attribute in {row["source_main_attribute"], *row["source_other_attributes"]}


class AuditStage:
    """Needs the annotate stage's `source_*` columns; noise rows are not audited."""

    name = "audit"

    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge
        """Default: the `openai` judge of the audit config's api section."""

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Sample, judge, report; write `audit/judgements.parquet` and `audit/report.json`."""
        config = ctx.config.audit
        if config is None:
            raise BuildError("audit stage without an audit section")
        taxonomy = load_taxonomy()
        table = read_samples(previous)
        if "source_main_attribute" not in table.column_names:
            raise BuildError("audit needs annotated rows: put the annotate stage before it")
        rows = table.to_pylist()
        population = [r for r in rows if NOISE not in r["subsets"]]
        sample = stratified_sample(population, config.margin, config.expected_accuracy, config.seed)
        checks = [c for row in sample for c in checks_for(row, taxonomy)]
        checks += canaries(sample, config.canary_fraction, taxonomy, config.seed)
        by_id = {r["sample_id"]: r for r in sample}
        judge = self.judge
        if judge is None:
            if config.api is None:
                raise BuildError("audit needs an api section for its judge")
            judge = OpenAIJudge(config.api, taxonomy, AnswerCache(ctx.config.state_dir / "judge-cache"))
        jobs = [(c, by_id[c.sample_id]["image"], by_id[c.sample_id]["image_sha256"]) for c in checks]
        verdicts = judge.judge(jobs)
        judgements = [
            {
                "sample_id": c.sample_id,
                "category": c.category,
                "attribute": c.attribute,
                "group": c.group,
                "canary": c.canary,
                "verdict": v.verdict,
                "better_value": v.better_value,
                "truth": _truth(by_id[c.sample_id], c),
            }
            for c, v in zip(checks, verdicts, strict=True)
        ]
        report = build_report(config, judgements, population, taxonomy)
        report["judge"] = judge.describe()
        folder = ctx.folder(self.name)
        write_table(pa.Table.from_pylist(judgements, schema=JUDGEMENT_SCHEMA), folder / "judgements.parquet")
        write_text_atomic(folder / "report.json", json.dumps(report, indent=1))
        excluded = set(report["excluded"])
        schema = table.schema.append(pa.field("excluded_attributes", pa.list_(pa.string())))
        for row in rows:
            dropped = [a for a in row["other_attributes"] if a in excluded]
            row["other_attributes"] = [a for a in row["other_attributes"] if a not in excluded]
            row["excluded_attributes"] = dropped or None
        return StageResult(write_samples(ctx, self.name, pa.Table.from_pylist(rows, schema=schema)), report)
