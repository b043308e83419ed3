"""Run one evaluation: embed, search, score and summarise every requested subset of a snapshot."""

from __future__ import annotations

import datetime as dt
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import numpy as np
import pyarrow as pa

import lookbench
from lookbench.cores import cpu_model, load_average, usable_cores
from lookbench.dates import snapshot_date
from lookbench.embeddings.checks import check_embeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.evaluation.noise import NoisePool, corpus_labels, noise_rows
from lookbench.evaluation.window import window_mask
from lookbench.metrics.aggregate import AVERAGE, COMPOSED_OVERALL, Estimate, per_category, summarise
from lookbench.metrics.definitions import DEFAULT_KS, FineRule
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.results.per_query import subset_values, task_table
from lookbench.results.protocols import average_scope, protocol_columns, protocol_of
from lookbench.results.schema import (
    BootstrapConfig,
    CategoryValue,
    DateWindow,
    MetricValue,
    ResultFile,
    RunConfig,
    SearchInfo,
    SnapshotInfo,
    SubsetInfo,
)
from lookbench.search.backend import SearchBackend
from lookbench.search.exact import ExactSearch
from lookbench.search.recall import measured_recall
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, is_composed_subset

Progress = Callable[[str], None]
Summary = tuple[
    dict[str, dict[str, MetricValue]],
    dict[str, dict[str, dict[str, CategoryValue]]],
    dict[str, dict[str, dict[str, dict[str, MetricValue]]]],
]
"""A run's metrics, per-category means and composed breakdowns (the `ResultFile` fields of the same names)."""


@dataclass
class EvalSettings:
    """Everything besides data and model that changes the numbers."""

    subsets: Sequence[str] | None = None
    ks: tuple[int, ...] = DEFAULT_KS
    fine_rule: FineRule = FineRule.MAIN
    resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    since: np.datetime64 | None = None
    until: np.datetime64 | None = None
    backend: SearchBackend = field(default_factory=ExactSearch)
    recall_queries: int = 500
    """Queries per subset (at most) searched exactly to measure an approximate backend's recall."""
    compose: str = "auto"
    """How composed subsets' queries are embedded (see `lookbench.composed.methods.METHODS`)."""
    noise: NoisePool = NoisePool.ALL
    """Search each subset with the shared noise pool (`all`) or against its gallery alone (`none`)."""


@dataclass
class EvalOutput:
    """The summary and the per-query table of a run."""

    result: ResultFile
    per_query: pa.Table


def _environment() -> dict[str, str]:
    env = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cores": str(usable_cores()),
    }
    torch = sys.modules.get("torch")  # only a torch model imports it; never imported here for the probe
    if torch is not None and torch.cuda.is_available():
        env["gpu"] = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    for package in ("numpy", "pyarrow", "pillow", "onnxruntime", "torch", "open_clip_torch", "timm", "transformers"):
        try:
            env[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return env


def _metric_values(estimates: dict[str, dict[str, Estimate]]) -> dict[str, dict[str, MetricValue]]:
    return {
        scope: {name: MetricValue(value=e.value, ci_low=e.ci_low, ci_high=e.ci_high, n=e.n) for name, e in ms.items()}
        for scope, ms in estimates.items()
    }


class _Embeddings:
    """Fetches and checks embeddings per split, memoising the noise pool shared by every subset (one copy)."""

    def __init__(self, provider: EmbeddingProvider, snapshot: Snapshot) -> None:
        self.provider = provider
        self.snapshot = snapshot
        self.dim: int | None = None
        self._memo: dict[tuple[str, str], np.ndarray] = {}

    def skipped(self, subset: str, split: str) -> dict[int, str]:
        return dict(self.provider.skipped.get((subset, split), {}))

    def get(self, subset: str, split: str) -> np.ndarray:
        key = (subset, split)
        if key not in self._memo:
            raw = np.asarray(self.provider.embed_split(self.snapshot, subset, split))
            rows = self.snapshot.num_rows(subset, split)
            where = f"{self.provider.spec} {subset}/{split}"
            source = self.provider.source_of(subset, split)  # a file-backed provider names the file at fault
            if source is not None:
                where = f"{source} ({subset}/{split})"
            # skipped rows hold zeros: they become a unit vector and the evaluator excludes them
            skipped = self.skipped(subset, split)
            fresh = self.provider.returns_new_arrays  # then normalise it where it is
            self._memo[key] = check_embeddings(raw, rows, where, self.dim, ignore_rows=skipped, in_place=fresh)
            del raw
            self.dim = self._memo[key].shape[1]
        return self._memo[key]


def evaluate(
    snapshot: Snapshot,
    provider: EmbeddingProvider,
    settings: EvalSettings | None = None,
    progress: Progress | None = None,
) -> EvalOutput:
    """Evaluate `provider` on `snapshot` and return the result summary and the per-query table."""
    settings = settings or EvalSettings()
    say = progress or (lambda _msg: None)
    ks = tuple(sorted(set(settings.ks)))
    if not ks or ks[0] < 1:
        raise LookBenchError(f"cut-offs must be positive integers, got {settings.ks}")
    subsets = snapshot.check_subsets(settings.subsets) if settings.subsets else snapshot.subsets
    if not subsets:
        raise LookBenchError(f"snapshot {snapshot.root} has no subsets to evaluate")
    for subset in subsets:  # unscorable labels fail here, before any image is embedded
        snapshot.check_task(subset)
    method: str | None = None
    if any(is_composed_subset(s) for s in subsets):
        from lookbench.composed.methods import run_method

        method = run_method(settings.compose, provider, snapshot, subsets)
    embeddings = _Embeddings(provider, snapshot)
    timings = {"embed_s": 0.0, "search_s": 0.0, "metrics_s": 0.0}
    load = load_average()
    if load is not None:
        timings["load_start"] = load
    recall: dict[str, dict[str, float]] = {}
    embedded_before = provider.embedded_images
    tables: list[pa.Table] = []
    infos: dict[str, SubsetInfo] = {}
    skipped_report: dict[tuple[str, str, int], str] = {}
    windowed = settings.since is not None or settings.until is not None
    fallback_date = snapshot_date(snapshot.snapshot_id) if windowed else None
    total_queries = kept_queries = 0
    pool_rows = noise_rows(snapshot, settings.noise)
    composition: dict[str, Any] = {}
    t0 = time.perf_counter()  # a sharded provider embeds every split it will be asked for at once, on its workers
    needed = [(s, sp) for s in subsets for sp in ("query", "gallery")]
    run = provider.prepare(snapshot, needed + ([(NOISE, "gallery")] if pool_rows else []))
    if run is not None:
        timings["embed_s"] += time.perf_counter() - t0
        say(f"embedding: {run.summary()}")
    for subset in subsets:
        say(f"{subset}: embedding")
        t0 = time.perf_counter()
        q_emb = embeddings.get(subset, "query")
        corpus = [embeddings.get(subset, "gallery")]
        if pool_rows:
            corpus.append(embeddings.get(NOISE, "gallery"))  # searched in place: never copied per subset
        timings["embed_s"] += time.perf_counter() - t0

        queries = snapshot.labels(subset, "query")
        task_labels = corpus_labels(snapshot, subset, settings.noise)
        gallery_rows = snapshot.num_rows(subset, "gallery")
        excluded = np.zeros(len(task_labels), dtype=bool)
        sources = [(subset, 0)] + ([(NOISE, gallery_rows)] if pool_rows else [])
        for source, offset in sources:
            for row, error in embeddings.skipped(source, "gallery").items():
                excluded[offset + row] = True
                skipped_report[(source, "gallery", row)] = error
        q_skipped = embeddings.skipped(subset, "query")
        for row, error in q_skipped.items():
            skipped_report[(subset, "query", row)] = error
        outfits = [None if row in q_skipped else key for row, key in enumerate(queries.outfit_key)]
        keep = window_mask(queries.first_seen_at, len(queries), settings.since, settings.until, fallback_date, outfits)
        total_queries += len(queries)
        if q_skipped:
            keep[list(q_skipped)] = False
        rows = np.flatnonzero(keep)
        kept_queries += len(rows)
        infos[subset] = SubsetInfo(
            queries=len(rows),
            gallery=gallery_rows,
            corpus=len(task_labels),
            skipped_queries=len(q_skipped),
            skipped_corpus=int(excluded.sum()),
        )
        if len(rows) == 0:
            say(f"{subset}: no queries left in the window; skipped")
            continue

        if method is not None and is_composed_subset(subset):
            from lookbench.composed.methods import make_encoder
            from lookbench.composed.task import ComposedTask, score_composed

            say(f"{subset}: composing and searching {len(rows)} queries over {len(task_labels)} items")
            t0 = time.perf_counter()
            task = ComposedTask(
                snapshot,
                subset,
                embeddings,
                corpus,
                task_labels,
                gallery_rows,
                excluded,
                settings.backend,
                ks,
                settings.fine_rule,
            )
            table, composition[subset] = score_composed(task, make_encoder(method, provider), rows, say)
            tables.append(table)
            timings["search_s"] += time.perf_counter() - t0
            continue

        say(f"{subset}: searching {len(rows)} queries over {len(task_labels)} items")
        t0 = time.perf_counter()
        exclude = excluded if excluded.any() else None
        found = settings.backend.search(q_emb[rows], corpus, max(ks), exclude=exclude)
        timings["search_s"] += time.perf_counter() - t0
        if not settings.backend.exact:
            t0 = time.perf_counter()
            recall[subset] = measured_recall(q_emb[rows], corpus, found, ks, exclude, settings.recall_queries)
            timings["recall_s"] = timings.get("recall_s", 0.0) + time.perf_counter() - t0

        t0 = time.perf_counter()
        kept = queries.take(rows)
        relevance = Relevance.build(kept, task_labels, gallery_rows, excluded)
        scores = score_task(relevance, found.indices, ks, settings.fine_rule)
        tables.append(
            task_table(
                subset,
                rows,
                kept,
                cluster_ids(kept.outfit_key),
                found.indices,
                found.scores,
                task_labels.item_id,
                scores,
            )
        )
        timings["metrics_s"] += time.perf_counter() - t0

    if not tables:
        raise LookBenchError("no queries to evaluate (check --since/--until and --subsets)")
    t0 = time.perf_counter()
    per_query, result = summarise_run(snapshot, pa.concat_tables(tables, promote_options="default"), settings)
    protocol = protocol_of(snapshot)
    timings["metrics_s"] += time.perf_counter() - t0
    window = None
    if windowed:
        window = DateWindow(
            since=None if settings.since is None else str(settings.since)[:10],
            until=None if settings.until is None else str(settings.until)[:10],
            kept_queries=kept_queries,
            total_queries=total_queries,
        )
    load = load_average()
    if load is not None:
        timings["load_end"] = load
    embedded_after = provider.embedded_images
    if embedded_before is not None and embedded_after is not None:
        timings["embedded_images"] = embedded_after - embedded_before
    described = provider.describe()
    if embeddings.dim is not None:
        described.setdefault("embedding_dim", embeddings.dim)
    if composition and method is not None:
        from lookbench.composed.methods import composed_model_name

        described["name"] = composed_model_name(str(described.get("name") or provider.spec), method)
        described["composition"] = {"method": method, "subsets": composition}
    output = ResultFile(
        lookbench_version=lookbench.__version__,
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        snapshot=SnapshotInfo(
            id=snapshot.snapshot_id,
            location=snapshot.location,
            content_hash=snapshot.content_hash,
            noise_rows=pool_rows,
            subsets=infos,
        ),
        model=described,
        config=RunConfig(
            fine_rule=settings.fine_rule.value,
            ks=list(ks),
            search_backend=settings.backend.name,
            search=SearchInfo(
                **settings.backend.describe(),
                recall=recall or None,
                recall_queries=settings.recall_queries if recall else None,
            ),
            bootstrap=BootstrapConfig(resamples=settings.resamples, seed=settings.seed, confidence=settings.confidence),
            window=window,
            protocol=None if protocol is None else protocol.name,
            noise=settings.noise.value,
        ),
        environment=_environment(),
        metrics=result[0],
        per_category=result[1],
        breakdowns=result[2],
        skipped=[{"subset": s, "split": sp, "row": r, "error": e} for (s, sp, r), e in sorted(skipped_report.items())],
        timings={k: round(v, 3) for k, v in timings.items()},
        warnings=snapshot.warnings,
    )
    return EvalOutput(result=output, per_query=per_query)


def summarise_run(snapshot: Snapshot, per_query: pa.Table, settings: EvalSettings) -> tuple[pa.Table, Summary]:
    """The per-query table with the snapshot protocol's columns added (a legacy benchmark's official recall@K),
    and the run's metrics, per-category means and breakdowns from it (its protocol's average included)."""
    ks = tuple(sorted(set(settings.ks)))
    protocol = protocol_of(snapshot)
    if protocol is not None:
        per_query = protocol_columns(protocol, snapshot, per_query, ks)
    result = summarise_table(per_query, settings)
    if protocol is not None and protocol.average_of:
        average = average_scope(protocol, per_query, ks, settings.resamples, settings.seed, settings.confidence)
        if average:
            result[0][AVERAGE] = average
    return per_query, result


def summarise_table(per_query: pa.Table, settings: EvalSettings) -> Summary:
    """Subset and overall estimates, per-category means and composed breakdowns, from a per-query table.

    Overall covers the image subsets; composed subsets have their own metrics and, when there are several,
    their own `composed_overall`.
    """
    from lookbench.composed.breakdown import composed_breakdowns

    values = subset_values(per_query)
    if not values:
        raise EmbeddingError("the per-query table is empty")
    boot = (settings.resamples, settings.seed, settings.confidence)
    image = [v for v in values if not is_composed_subset(v.name)]
    composed = [v for v in values if is_composed_subset(v.name)]
    estimates = summarise(image, *boot)
    estimates.update(summarise(composed, *boot, overall=COMPOSED_OVERALL if len(composed) > 1 else None))
    categories = {
        v.name: {
            cat: {name: CategoryValue(value=mean, n=n) for name, (mean, n) in metrics.items()}
            for cat, metrics in per_category(v).items()
        }
        for v in values
    }
    breakdowns = {
        subset: {name: _metric_values(keys) for name, keys in by.items()}
        for subset, by in composed_breakdowns(per_query, composed, *boot).items()
    }
    return _metric_values(estimates), categories, breakdowns
