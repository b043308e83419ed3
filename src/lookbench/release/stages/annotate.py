"""Annotate: every row gets annotator labels; the source's labels are kept beside them for the audit."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lookbench._util.hashing import file_sha256, json_sha256
from lookbench.errors import ReleaseError
from lookbench.release.config import AnnotateConfig, ApiConfig
from lookbench.release.embedding import ImageEmbedder, image_embedder
from lookbench.release.label.base import Annotator, Item, Outcome
from lookbench.release.records import Sample, write_table
from lookbench.release.sharding import HTTP_SHARD_ITEMS, AskedRows, UsageDelta, asked_fingerprint, http_needs, usage_of
from lookbench.release.stages.base import StageContext, StageResult, StageStats, run_items, samples_of, save_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.shards.table import TableJob
from lookbench.snapshot.manifest import MANIFEST_NAME

if TYPE_CHECKING:
    from lookbench.release.label.openai import OpenAIAnnotator

FLAGGED_SCHEMA = pa.schema([("sample_id", pa.string()), ("category", pa.string()), ("flag", pa.string())])


class AnnotateStats(StageStats):
    """Who labelled the rows, how many were left out and why."""

    annotator: dict[str, Any]
    rows: int
    labelled: int
    noise_rows_unlabelled: int
    flagged: int
    flag_reasons: dict[str, int]
    reasked: int
    unusable_cache_files: int = 0
    batch_import: dict[str, int] | None = None


def items_of(samples: list[Sample]) -> list[Item]:
    """Annotator items from the samples that need labels (distractor-only rows do not)."""
    return [Item(s.sample_id, s.image, s.image_sha256, s.category) for s in samples if not s.is_noise_only]


OUTCOME_SCHEMA = pa.schema(
    [
        ("main_attribute", pa.string()),
        ("other_attributes", pa.list_(pa.string())),
        ("flag", pa.string()),
        ("attempts", pa.int64()),
        ("cached", pa.bool_()),
    ]
)
"""A shard's output: one annotator outcome per crop."""


@dataclass(frozen=True)
class OpenAILabels:
    """Labels a shard's crops with the `openai` annotator, opened once per worker with its share of requests."""

    api: ApiConfig
    cache: Path
    attempts: int

    def open(self, slots: int) -> AskedRows:
        """A client with `slots` requests in flight, on the shared answer cache."""
        from lookbench.release.label.openai import OpenAIAnnotator
        from lookbench.taxonomy import load_taxonomy

        cache = AnswerCache(self.cache)
        api = self.api.model_copy(update={"concurrency": slots})
        annotator = OpenAIAnnotator(api, load_taxonomy(), cache, self.attempts)
        return AskedRows(annotator.annotate, UsageDelta(annotator.asker.client.usage, cache), annotator.asker.client)


def annotate_as_shards(
    ctx: StageContext, stage: str, annotator: OpenAIAnnotator, items: list[Item], attempts: int
) -> tuple[list[Outcome], dict[str, Any], list[str]]:
    """(outcome per item, the annotator's description with the usage of every shard, problems met): each distinct
    crop (image and category) is asked once, by one shard."""
    from lookbench.release.label.prompt import PROMPT_VERSION

    first: dict[tuple[str, str], Item] = {}
    for item in items:
        first.setdefault((item.image_sha256, item.category), item)
    unique = list(first.values())
    api = annotator.api
    job = TableJob(
        "annotate", http_needs(api), OUTCOME_SCHEMA, OpenAILabels(api, annotator.asker.cache.folder, attempts)
    )
    keys = [f"{item.image_sha256}:{item.category}" for item in unique]
    version = annotator.taxonomy.version
    result = run_items(
        ctx, stage, job, unique, keys, asked_fingerprint(api, PROMPT_VERSION, attempts, version), HTTP_SHARD_ITEMS
    )
    by_crop = {crop: Outcome(**row) for crop, row in zip(first, result.rows, strict=True)}
    described = {**annotator.describe(), **usage_of(api, result.stats)}
    return [by_crop[(item.image_sha256, item.category)] for item in items], described, result.problems


def _snapshot_fingerprint(path: Path) -> str:
    manifest = path / MANIFEST_NAME
    return file_sha256(manifest) if manifest.is_file() else str(path)


class AnnotateStage:
    """Flagged rows (invalid answers, refused images, unknown categories) are left out and listed; noise is not asked.

    Distractor-only rows keep their source labels: they are never relevant to a query.
    """

    name = "annotate"
    stats_type = AnnotateStats

    def __init__(self, settings: AnnotateConfig) -> None:
        self.settings = settings
        self._embedder: ImageEmbedder | None = None

    def check(self) -> None:
        """The probe's model and training snapshot, or the API key's variable."""
        settings = self.settings
        if settings.probe is not None and settings.backend == "probe":
            if not settings.probe.train.is_dir():
                raise ReleaseError(f"annotate.probe.train {settings.probe.train}: no such snapshot folder")
            if self._embedder is None:
                self._embedder = image_embedder(settings.probe.model, "annotate.probe.model")
        if settings.batch_output is not None and not settings.batch_output.is_file():
            raise ReleaseError(f"annotate.batch_output {settings.batch_output}: no such file")
        if settings.api is not None and settings.api.api_key_env:
            from lookbench.release.vlm.client import ChatClient

            ChatClient(settings.api).close()

    def fingerprint(self, ctx: StageContext) -> str:
        """The annotate settings, the probe's training snapshot and the batch file imported."""
        settings = self.settings
        parts = [settings.fingerprint()]
        if settings.probe is not None:
            parts.append(_snapshot_fingerprint(settings.probe.train))
        if settings.batch_output is not None and settings.batch_output.is_file():
            parts.append(file_sha256(settings.batch_output))
        return json_sha256(parts)

    def cache(self, ctx: StageContext) -> AnswerCache:
        """Where answers are cached across runs and releases."""
        return AnswerCache(self.settings.cache_dir or ctx.state / "annotation-cache")

    def annotator(self, cache: AnswerCache) -> Annotator:
        """The configured backend (the openai one answers from `cache` where it can)."""
        from lookbench.taxonomy import load_taxonomy

        settings = self.settings
        if settings.backend == "openai" and settings.api is not None:
            from lookbench.release.label.openai import OpenAIAnnotator

            return OpenAIAnnotator(settings.api, load_taxonomy(), cache, settings.attempts)
        if settings.probe is not None:
            from lookbench.release.label.probe import ProbeAnnotator

            self.check()
            assert self._embedder is not None
            return ProbeAnnotator(settings.probe, load_taxonomy(), self._embedder)
        raise ReleaseError(f"annotate: backend {settings.backend} is missing its settings")

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Label every row; an API outage raises, and a re-run resumes from the answer cache."""
        from lookbench.release.label.batch import import_batch
        from lookbench.release.label.openai import OpenAIAnnotator

        samples = samples_of(previous)
        noise = [s for s in samples if s.is_noise_only]
        rows = [s for s in samples if not s.is_noise_only]
        cache = self.cache(ctx)
        annotator = self.annotator(cache)
        items = items_of(rows)
        imported = None
        if self.settings.batch_output is not None and isinstance(annotator, OpenAIAnnotator):
            imported = import_batch(annotator, items, self.settings.batch_output)
        problems: list[str] = []
        if isinstance(annotator, OpenAIAnnotator):
            outcomes, described, problems = annotate_as_shards(ctx, self.name, annotator, items, self.settings.attempts)
        else:
            outcomes, described = annotator.annotate(items), annotator.describe()
        for sample in noise:
            sample.source_main_attribute = sample.main_attribute
            sample.source_other_attributes = sample.other_attributes
            sample.label_source = "source (noise)"
        kept: list[Sample] = list(noise)
        flagged: list[dict[str, Any]] = []
        for sample, outcome in zip(rows, outcomes, strict=True):
            if outcome.main_attribute is None:
                flagged.append({"sample_id": sample.sample_id, "category": sample.category, "flag": outcome.flag})
                ctx.report(sample.source, sample.sample_id, f"annotate: {outcome.flag}")
                continue
            sample.source_main_attribute = sample.main_attribute
            sample.source_other_attributes = sample.other_attributes
            sample.main_attribute = outcome.main_attribute
            sample.other_attributes = outcome.other_attributes
            sample.label_source = annotator.name
            kept.append(sample)
        problems = [*cache.unusable, *problems]
        for problem in problems:
            ctx.report("annotate", problem.split(": ", 1)[0], f"answer cache file unusable, asked again: {problem}")
        write_table(pa.Table.from_pylist(flagged, schema=FLAGGED_SCHEMA), ctx.folder(self.name) / "flagged.parquet")
        reasons = Counter(str(f["flag"]).split(":")[0].split("(")[0].strip() for f in flagged)
        stats = AnnotateStats(
            annotator=described,
            rows=len(rows),
            labelled=len(kept) - len(noise),
            noise_rows_unlabelled=len(noise),
            flagged=len(flagged),
            flag_reasons=dict(reasons),
            reasked=sum(1 for o in outcomes if o.attempts > 1),
            unusable_cache_files=len(problems),
            batch_import=imported,
        )
        return StageResult(save_samples(ctx, self.name, kept), stats)
