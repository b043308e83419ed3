"""Audit: judge a stratified sample plus canaries, report accuracy, optionally exclude weak attributes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pydantic import ConfigDict

from lookbench._util.atomic import write_text_atomic
from lookbench._util.hashing import json_sha256
from lookbench.errors import ReleaseError
from lookbench.release.config import ApiConfig, AuditConfig
from lookbench.release.judge.judge import Judge, Verdict
from lookbench.release.judge.report import build_report, truth_of
from lookbench.release.judge.sampling import Check, canaries, checks_for, stratified_sample
from lookbench.release.records import Sample, write_table
from lookbench.release.sharding import HTTP_SHARD_ITEMS, AskedRows, UsageDelta, asked_fingerprint, http_needs, usage_of
from lookbench.release.stages.base import StageContext, StageResult, StageStats, run_items, samples_of, save_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.shards.table import TableJob
from lookbench.snapshot.schema import NOISE

if TYPE_CHECKING:
    from lookbench.release.judge.judge import OpenAIJudge

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


class Rate(StageStats):
    """A judged or true accuracy with its Wilson 95% interval."""

    model_config = ConfigDict(extra="allow")

    n: int
    correct: int
    accuracy: float | None
    wilson95: list[float]


class AuditStats(StageStats):
    """The audit report (`audit/report.json`): what the card's label audit section shows."""

    model_config = ConfigDict(extra="allow")

    judge: dict[str, Any]
    population_crops: int
    sampled_crops: int
    judged_attributes: int
    overall: Rate
    canaries: Rate
    floor: float
    below_floor: list[str]
    excluded: list[str]
    true_accuracy_all: Rate | None = None


VERDICT_SCHEMA = pa.schema([("verdict", pa.string()), ("better_value", pa.string())])
"""A shard's output: one verdict per check."""


@dataclass(frozen=True)
class OpenAIVerdicts:
    """Judges a shard's checks with the `openai` judge, opened once per worker with its share of requests."""

    api: ApiConfig
    cache: Path

    def open(self, slots: int) -> AskedRows:
        """A judge whose client keeps `slots` requests in flight, on the shared judge cache."""
        from lookbench.release.judge.judge import OpenAIJudge
        from lookbench.taxonomy import load_taxonomy

        cache = AnswerCache(self.cache)
        judge = OpenAIJudge(self.api.model_copy(update={"concurrency": slots}), load_taxonomy(), cache)
        return AskedRows(judge.judge, UsageDelta(judge.asker.client.usage, cache), judge.asker.client)


def judge_as_shards(
    ctx: StageContext, stage: str, judge: OpenAIJudge, checks: list[tuple[Check, bytes, str]]
) -> tuple[list[Verdict], dict[str, Any], list[str]]:
    """(verdict per check, the judge's description with the usage of every shard, problems met)."""
    from lookbench.release.judge.judge import PROMPT_VERSION

    api = judge.api
    job = TableJob("judge", http_needs(api), VERDICT_SCHEMA, OpenAIVerdicts(api, judge.asker.cache.folder))
    keys = [f"{sha}:{check.category}:{check.attribute}:{check.canary}" for check, _image, sha in checks]
    asked = asked_fingerprint(api, PROMPT_VERSION, judge.asker.attempts, judge.taxonomy.version)
    result = run_items(ctx, stage, job, checks, keys, asked, HTTP_SHARD_ITEMS)
    verdicts = [Verdict(row["verdict"], row["better_value"]) for row in result.rows]
    return verdicts, {**judge.describe(), **usage_of(api, result.stats)}, result.problems


def _truth(row: Sample, check: Check) -> bool | None:
    """Whether the checked value is truly right; known only for Synth rows (canaries are wrong by construction)."""
    if check.canary:
        return False
    if row.source_kind != "synth":
        return None
    return check.attribute in truth_of(row)


class AuditStage:
    """Needs the annotate stage's `source_*` columns; noise rows are not audited."""

    name = "audit"
    stats_type = AuditStats

    def __init__(self, settings: AuditConfig, judge: Judge | None = None) -> None:
        self.settings = settings
        self.judge = judge
        """Default: the `openai` judge of the audit config's api section."""

    def check(self) -> None:
        """A judge is needed, and the human labels file (if named) must exist."""
        settings = self.settings
        if self.judge is None and settings.api is None:
            raise ReleaseError("audit needs an api section for its judge")
        if settings.human_labels is not None and not settings.human_labels.is_file():
            raise ReleaseError(f"audit.human_labels {settings.human_labels}: no such file")
        if settings.api is not None and settings.api.api_key_env:
            from lookbench.release.vlm.client import ChatClient

            ChatClient(settings.api).close()

    def fingerprint(self, ctx: StageContext) -> str:
        """The audit settings (a judge passed in code is part of it by its description)."""
        judge = self.judge.describe() if self.judge is not None else None
        return json_sha256([self.settings.fingerprint(), json.dumps(judge, sort_keys=True, default=str)])

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Sample, judge, report; write `audit/judgements.parquet` and `audit/report.json`."""
        from lookbench.taxonomy import load_taxonomy

        settings = self.settings
        taxonomy = load_taxonomy()
        rows = samples_of(previous)
        if any(r.source_main_attribute is None for r in rows):
            raise ReleaseError("audit needs annotated rows: put the annotate stage before it")
        population = [r for r in rows if NOISE not in r.subsets]
        sample = stratified_sample(population, settings.margin, settings.expected_accuracy, settings.seed)
        checks = [c for row in sample for c in checks_for(row, taxonomy)]
        checks += canaries(sample, settings.canary_fraction, taxonomy, settings.seed)
        by_id = {r.sample_id: r for r in sample}
        cache = AnswerCache(ctx.state / "judge-cache")
        asked = [(c, by_id[c.sample_id].image, by_id[c.sample_id].image_sha256) for c in checks]
        problems: list[str] = []
        if self.judge is None:
            from lookbench.release.judge.judge import OpenAIJudge

            self.check()
            assert settings.api is not None
            verdicts, described, problems = judge_as_shards(
                ctx, self.name, OpenAIJudge(settings.api, taxonomy, cache), asked
            )
        else:  # a judge given in code runs here, in the driver
            verdicts, described = self.judge.judge(asked), self.judge.describe()
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
        for problem in [*cache.unusable, *problems]:
            ctx.report("audit", problem.split(": ", 1)[0], f"judge cache file unusable, asked again: {problem}")
        report = build_report(settings, judgements, population, taxonomy)
        report["judge"] = described
        folder = ctx.folder(self.name)
        write_table(pa.Table.from_pylist(judgements, schema=JUDGEMENT_SCHEMA), folder / "judgements.parquet")
        write_text_atomic(folder / "report.json", json.dumps(report, indent=1))
        excluded = set(report["excluded"])
        for row in rows:
            dropped = [a for a in row.other_attributes if a in excluded]
            row.other_attributes = [a for a in row.other_attributes if a not in excluded]
            row.excluded_attributes = dropped or None
        return StageResult(save_samples(ctx, self.name, rows), AuditStats.model_validate(report))
