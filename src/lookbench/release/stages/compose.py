"""Compose: composed queries from the placed, annotated gallery items (pairs, texts, paraphrase, judge's audit)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench._util.labels import normalise_label
from lookbench.errors import ReleaseError
from lookbench.evaluation.composed.texts import modification_text
from lookbench.release.compose import audit as composed_audit
from lookbench.release.compose import paraphrase
from lookbench.release.compose.audit import (
    AuditJob,
    ComposedJudge,
    ComposedVerdict,
    audit_table,
    stratified,
    stratum_of,
)
from lookbench.release.compose.pairs import Pair, composed_pairs
from lookbench.release.compose.paraphrase import Paraphraser, Rewording
from lookbench.release.config import ApiConfig, ComposeConfig
from lookbench.release.embedding import ImageEmbedder, image_embedder, unit_rows
from lookbench.release.records import Sample, write_table
from lookbench.release.sharding import HTTP_SHARD_ITEMS, AskedRows, UsageDelta, asked_fingerprint, http_needs, usage_of
from lookbench.release.stages.base import StageContext, StageResult, StageStats, run_items, samples_of, save_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.shards.table import TableJob
from lookbench.snapshot.composed import in_validation
from lookbench.snapshot.schema import COMPOSED, NOISE

AUDIT_SCHEMA = pa.schema(
    [
        ("query", pa.string()),
        ("stratum", pa.string()),
        ("text", pa.string()),
        ("describes_change", pa.string()),
        ("target_right", pa.string()),
    ]
)


class ComposeStats(StageStats):
    """What the compose stage generated, how its texts were worded and what the judge said."""

    model: str
    band: list[float]
    items: int
    queries: int
    validation_queries: int = 0
    by_changes: dict[str, int]
    by_group: dict[str, int]
    paraphraser: dict[str, Any] | None = None
    paraphrased: int = 0
    templates_kept: dict[str, int] = {}
    """Why a template was kept instead of the LLM's wording (reason: queries)."""
    audit: dict[str, Any] | None = None


REWORDING_SCHEMA = pa.schema([("text", pa.string()), ("paraphrased", pa.bool_()), ("problem", pa.string())])
"""A paraphrase shard's output: the text kept per query, whether the LLM's, and why not."""
VERDICT_SCHEMA = pa.schema([("describes_change", pa.string()), ("target_right", pa.string())])
"""A composed-audit shard's output: one verdict per sampled query."""


@dataclass(frozen=True)
class Rewordings:
    """Rewords a shard's template texts, opened once per worker with its share of requests."""

    api: ApiConfig
    cache: Path
    attempts: int

    def open(self, slots: int) -> AskedRows:
        """A paraphraser whose client keeps `slots` requests in flight, on the shared answer cache."""
        cache = AnswerCache(self.cache)
        found = Paraphraser(self.api.model_copy(update={"concurrency": slots}), cache, self.attempts)
        return AskedRows(found.reword, UsageDelta(found.asker.client.usage, cache), found.asker.client)


@dataclass(frozen=True)
class ComposedVerdicts:
    """Judges a shard's sampled queries, opened once per worker with its share of requests."""

    api: ApiConfig
    cache: Path
    attempts: int

    def open(self, slots: int) -> AskedRows:
        """A composed judge whose client keeps `slots` requests in flight, on the shared answer cache."""
        cache = AnswerCache(self.cache)
        judge = ComposedJudge(self.api.model_copy(update={"concurrency": slots}), cache, self.attempts)
        return AskedRows(judge.judge, UsageDelta(judge.asker.client.usage, cache), judge.asker.client)


def reword_as_shards(
    ctx: StageContext, stage: str, api: ApiConfig, cache: Path, attempts: int, jobs: list[tuple[str, tuple[Any, ...]]]
) -> tuple[list[Rewording], dict[str, Any], list[str]]:
    """(wording per query, the paraphraser's description with the usage of every shard, problems met)."""
    job = TableJob("paraphrase", http_needs(api), REWORDING_SCHEMA, Rewordings(api, cache, attempts))
    keys = [json.dumps([text, [c.as_row() for c in changes]]) for text, changes in jobs]
    fingerprint = asked_fingerprint(api, paraphrase.PROMPT_VERSION, attempts)
    result = run_items(ctx, stage, job, jobs, keys, fingerprint, HTTP_SHARD_ITEMS)
    described = {"model": api.model, "prompt_version": paraphrase.PROMPT_VERSION, **usage_of(api, result.stats)}
    return [Rewording(**row) for row in result.rows], described, result.problems


def judge_as_shards(
    ctx: StageContext, stage: str, api: ApiConfig, cache: Path, attempts: int, jobs: list[AuditJob]
) -> tuple[list[ComposedVerdict], dict[str, Any], list[str]]:
    """(verdict per sampled query, the judge's description with the usage of every shard, problems met)."""
    job = TableJob("composed_judge", http_needs(api), VERDICT_SCHEMA, ComposedVerdicts(api, cache, attempts))
    keys = [json.dumps([j.reference_sha256, j.target_sha256, j.text]) for j in jobs]
    fingerprint = asked_fingerprint(api, composed_audit.PROMPT_VERSION, attempts)
    result = run_items(ctx, stage, job, jobs, keys, fingerprint, HTTP_SHARD_ITEMS)
    described = {"model": api.model, "prompt_version": composed_audit.PROMPT_VERSION, **usage_of(api, result.stats)}
    return [ComposedVerdict(**row) for row in result.rows], described, result.problems


def _attributes(sample: Sample) -> frozenset[str]:
    values = [sample.main_attribute, *sample.other_attributes]
    return frozenset(v for v in (normalise_label(x) for x in values) if v)


def _reason(problem: str) -> str:
    """A rejection's kind, without the text it quotes (the card counts kinds)."""
    return problem.split(":", 1)[0].split(" of ", 1)[0][:80]


class ComposeStage:
    """After split: every image subset's gallery item (one per item_ID) can be a reference or a target."""

    name = "compose"
    stats_type = ComposeStats

    def __init__(self, settings: ComposeConfig) -> None:
        self.settings = settings
        self._embedder: ImageEmbedder | None = None

    def check(self) -> None:
        """Load the model; the paraphrase and judge endpoints need their keys."""
        if self._embedder is None:
            self._embedder = image_embedder(self.settings.model, "compose.model")
        from lookbench.release.vlm.client import ChatClient

        for api in (self.settings.paraphrase, self.settings.judge):
            if api is not None and api.api_key_env:
                ChatClient(api).close()

    def fingerprint(self, ctx: StageContext) -> str:
        """The compose settings."""
        return self.settings.fingerprint()

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Pair, word, audit; append the `composed` subset's query and gallery rows to the work table."""
        from lookbench.taxonomy import load_taxonomy

        self.check()
        assert self._embedder is not None
        settings = self.settings
        samples = samples_of(previous)
        if any(s.item_ID is None for s in samples):
            raise ReleaseError("compose needs placed rows: put the split stage before it")
        items: dict[str, Sample] = {}
        for sample in samples:
            if sample.split == "gallery" and sample.subset not in (NOISE, COMPOSED) and sample.main_attribute:
                items.setdefault(str(sample.item_ID), sample)
        gallery = list(items.values())
        vectors = unit_rows(self._embedder.embed_images([s.image for s in gallery])) if gallery else None
        pairs = (
            composed_pairs(
                [s.category for s in gallery],
                [_attributes(s) for s in gallery],
                vectors,
                settings.band,
                settings.max_changes,
                settings.per_reference,
                load_taxonomy(),
            )
            if vectors is not None
            else []
        )
        templates = [
            modification_text(p.changes, f"{gallery[p.reference].item_ID}\0{gallery[p.target].item_ID}") for p in pairs
        ]
        cache = ctx.state / "compose-cache"
        paraphraser: dict[str, Any] | None = None
        problems: list[str] = []
        worded = [Rewording(t, False) for t in templates]
        if settings.paraphrase is not None and pairs:
            jobs = [(t, p.changes) for t, p in zip(templates, pairs, strict=True)]
            worded, paraphraser, problems = reword_as_shards(
                ctx, self.name, settings.paraphrase, cache, settings.attempts, jobs
            )
        kept = Counter(_reason(w.problem) for w in worded if w.problem)
        for pair, wording in zip(pairs, worded, strict=True):
            if wording.problem:
                ctx.report(self.name, str(gallery[pair.reference].item_ID), f"template kept: {wording.problem}")
        held = [in_validation(str(gallery[p.reference].item_ID), settings.validation, settings.seed) for p in pairs]
        queries = [
            replace(
                gallery[p.reference],
                subset=COMPOSED,
                split="validation" if hold else "query",
                modification_text=w.text,
                changes=json.dumps([c.as_row() for c in p.changes]),
                target_ids=[str(gallery[p.target].item_ID)],
            )
            for p, w, hold in zip(pairs, worded, held, strict=True)
        ]
        audit = None
        if settings.judge is not None and pairs:
            audit, judged = self._audit(ctx, gallery, pairs, worded, cache)
            problems += judged
        for problem in problems:
            ctx.report(self.name, problem.split(": ", 1)[0], f"answer cache file unusable, asked again: {problem}")
        rows = (
            [*samples, *queries, *(replace(s, subset=COMPOSED, split="gallery") for s in gallery)] if pairs else samples
        )
        groups = Counter(c.group for p in pairs for c in p.changes)
        stats = ComposeStats(
            model=settings.model,
            band=list(settings.band),
            items=len(gallery),
            queries=len(pairs) - sum(held),
            validation_queries=sum(held),
            by_changes={str(n): c for n, c in sorted(Counter(len(p.changes) for p in pairs).items())},
            by_group=dict(sorted(groups.items())),
            paraphraser=paraphraser,
            paraphrased=sum(w.paraphrased for w in worded),
            templates_kept=dict(kept),
            audit=audit,
        )
        return StageResult(save_samples(ctx, self.name, rows), stats)

    def _audit(
        self, ctx: StageContext, gallery: list[Sample], pairs: list[Pair], worded: list[Rewording], cache: Path
    ) -> tuple[dict[str, Any], list[str]]:
        settings = self.settings
        assert settings.judge is not None
        keys = [(stratum_of(p.changes), f"{gallery[p.reference].item_ID}>{gallery[p.target].item_ID}") for p in pairs]
        chosen = stratified(keys, settings.audit_per_stratum, settings.seed)
        jobs = []
        for index in chosen:
            pair = pairs[index]
            ref, tgt = gallery[pair.reference], gallery[pair.target]
            text = worded[index].text
            jobs.append(
                AuditJob(keys[index][0], text, pair.changes, ref.image, ref.image_sha256, tgt.image, tgt.image_sha256)
            )
        verdicts, judge, problems = judge_as_shards(ctx, self.name, settings.judge, cache, settings.attempts, jobs)
        table = [
            {"query": keys[i][1], "stratum": j.stratum, "text": j.text, "describes_change": v.describes_change,
             "target_right": v.target_right}
            for i, j, v in zip(chosen, jobs, verdicts, strict=True)
        ]  # fmt: skip
        write_table(pa.Table.from_pylist(table, schema=AUDIT_SCHEMA), ctx.folder(self.name) / "audit.parquet")
        return {"judge": judge, "population": len(pairs), **audit_table(jobs, verdicts)}, problems
