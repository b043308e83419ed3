"""Run one evaluation: embed, search, score and summarise every requested subset of a snapshot."""

from __future__ import annotations

import datetime as dt
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata

import numpy as np
import pyarrow as pa

import lookbench
from lookbench.cores import cpu_model, load_average, usable_cores
from lookbench.dates import snapshot_date
from lookbench.embeddings.checks import check_embeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import NoisePool, corpus_labels, noise_rows
from lookbench.evaluation.retrieval import RetrievalTask
from lookbench.evaluation.summary import Summary, summarise_run
from lookbench.evaluation.task import PhaseClock, Progress, SubsetWork, Task
from lookbench.evaluation.window import date_window, window_mask
from lookbench.metrics.definitions import DEFAULT_KS, FineRule
from lookbench.results.protocols import protocol_of
from lookbench.results.schema import (
    BootstrapConfig,
    ResultFile,
    RunConfig,
    SearchInfo,
    SnapshotInfo,
    SubsetInfo,
)
from lookbench.search.backend import SearchBackend
from lookbench.search.exact import ExactSearch
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, is_composed_subset


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

    def bootstrap(self) -> BootstrapConfig:
        """How the confidence intervals are drawn, as the result records it."""
        return BootstrapConfig(resamples=self.resamples, seed=self.seed, confidence=self.confidence)


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


def _loads(start: float | None, end: float | None) -> dict[str, float]:
    """The machine's 1-minute load average when the run started and ended, where the platform reports one."""
    return {name: value for name, value in (("load_start", start), ("load_end", end)) if value is not None}


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


@dataclass
class RunPlan:
    """What a run will do, settled before any image is embedded: subsets, cut-offs, noise and a task per subset."""

    snapshot: Snapshot
    provider: EmbeddingProvider
    settings: EvalSettings
    ks: tuple[int, ...]
    subsets: list[str]
    noise_rows: int
    tasks: dict[str, Task]
    retrieval: RetrievalTask
    fallback_date: np.datetime64 | None
    """The date of queries without `first_seen_at` when the run is windowed (the snapshot's date)."""

    def model_name(self) -> str:
        """The name the run's result carries and files under, known before the run (`eval --skip-existing`): the
        model's own name with what its tasks add (a composed run's method)."""
        name = self.provider.describe().name or self.provider.spec
        for task in dict.fromkeys(self.tasks.values()):
            name = task.name(name)
        return name


@dataclass
class RunLedger:
    """What the run counts as it goes: subset sizes, skipped rows, queries kept by the window."""

    subsets: dict[str, SubsetInfo] = field(default_factory=dict)
    skipped: dict[tuple[str, str, int], str] = field(default_factory=dict)
    total_queries: int = 0
    kept_queries: int = 0


def plan_run(snapshot: Snapshot, provider: EmbeddingProvider, settings: EvalSettings) -> RunPlan:
    """Check the cut-offs, subsets and labels (unscorable ones fail here) and choose each subset's task."""
    ks = tuple(sorted(set(settings.ks)))
    if not ks or ks[0] < 1:
        raise LookBenchError(f"cut-offs must be positive integers, got {settings.ks}")
    subsets = list(snapshot.check_subsets(settings.subsets) if settings.subsets else snapshot.subsets)
    if not subsets:
        raise LookBenchError(f"snapshot {snapshot.root} has no subsets to evaluate")
    for subset in subsets:
        snapshot.check_task(subset)
    retrieval = RetrievalTask(settings.fine_rule, settings.recall_queries)
    tasks: dict[str, Task] = dict.fromkeys(subsets, retrieval)
    if any(is_composed_subset(s) for s in subsets):
        from lookbench.composed.task import composed_run

        composed = composed_run(settings.compose, provider, snapshot, subsets, settings.fine_rule)
        tasks.update({s: composed for s in subsets if is_composed_subset(s)})
    windowed = settings.since is not None or settings.until is not None
    fallback = snapshot_date(snapshot.snapshot_id) if windowed else None
    rows = noise_rows(snapshot, settings.noise)
    return RunPlan(snapshot, provider, settings, ks, subsets, rows, tasks, retrieval, fallback)


def gather(plan: RunPlan, embeddings: _Embeddings, subset: str, ledger: RunLedger, clock: PhaseClock) -> SubsetWork:
    """A subset's embeddings, corpus and the query rows its date window keeps; skipped rows go in the ledger."""
    snapshot, settings = plan.snapshot, plan.settings
    with clock.phase("embed_s"):
        query_vectors = embeddings.get(subset, "query")
        corpus = [embeddings.get(subset, "gallery")]
        if plan.noise_rows:
            corpus.append(embeddings.get(NOISE, "gallery"))  # searched in place: never copied per subset
    queries = snapshot.labels(subset, "query")
    labels = corpus_labels(snapshot, subset, settings.noise)
    gallery_rows = snapshot.num_rows(subset, "gallery")
    excluded = np.zeros(len(labels), dtype=bool)
    for source, offset in [(subset, 0)] + ([(NOISE, gallery_rows)] if plan.noise_rows else []):
        for row, error in embeddings.skipped(source, "gallery").items():
            excluded[offset + row] = True
            ledger.skipped[(source, "gallery", row)] = error
    q_skipped = embeddings.skipped(subset, "query")
    ledger.skipped.update({(subset, "query", row): error for row, error in q_skipped.items()})
    outfits = [None if row in q_skipped else key for row, key in enumerate(queries.outfit_key)]
    since, until = settings.since, settings.until
    keep = window_mask(queries.first_seen_at, len(queries), since, until, plan.fallback_date, outfits)
    if q_skipped:
        keep[list(q_skipped)] = False
    rows = np.flatnonzero(keep)
    ledger.total_queries += len(queries)
    ledger.kept_queries += len(rows)
    ledger.subsets[subset] = SubsetInfo(
        queries=len(rows),
        gallery=gallery_rows,
        corpus=len(labels),
        skipped_queries=len(q_skipped),
        skipped_corpus=int(excluded.sum()),
    )
    return SubsetWork(
        snapshot,
        subset,
        rows,
        queries,
        query_vectors,
        corpus,
        labels,
        gallery_rows,
        excluded,
        embeddings,
        settings.backend,
        plan.ks,
    )


def evaluate(
    snapshot: Snapshot,
    provider: EmbeddingProvider,
    settings: EvalSettings | None = None,
    progress: Progress | None = None,
) -> EvalOutput:
    """Evaluate `provider` on `snapshot` and return the result summary and the per-query table."""
    return run_plan(plan_run(snapshot, provider, settings or EvalSettings()), progress)


def run_plan(plan: RunPlan, progress: Progress | None = None) -> EvalOutput:
    """Embed, gather and score each subset of a plan, then assemble its result."""
    say = progress or (lambda _msg: None)
    snapshot, provider = plan.snapshot, plan.provider
    clock, ledger = PhaseClock(), RunLedger()
    embedded_before, load_start = provider.embedded_images, load_average()
    needed = [(s, sp) for s in plan.subsets for sp in ("query", "gallery")]
    needed += [(NOISE, "gallery")] if plan.noise_rows else []
    with clock.phase("embed_s"):  # a sharded provider embeds every split it will be asked for at once
        run = provider.prepare(snapshot, needed)
    if run is not None:
        say(f"embedding: {run.summary()}")
    embeddings = _Embeddings(provider, snapshot)
    tables: list[pa.Table] = []
    for subset in plan.subsets:
        say(f"{subset}: embedding")
        work = gather(plan, embeddings, subset, ledger, clock)
        if len(work.rows) == 0:
            say(f"{subset}: no queries left in the window; skipped")
            continue
        tables.append(plan.tasks[subset].score(work, clock, say))
    if not tables:
        raise LookBenchError("no queries to evaluate (check --since/--until and --subsets)")
    with clock.phase("metrics_s"):
        per_query, summary = summarise_run(
            snapshot, pa.concat_tables(tables, promote_options="default"), plan.ks, plan.settings.bootstrap()
        )
    embedded_after = provider.embedded_images
    timings: dict[str, float] = dict(clock.seconds) | _loads(load_start, load_average())
    if embedded_before is not None and embedded_after is not None:
        timings["embedded_images"] = embedded_after - embedded_before
    return EvalOutput(assemble(plan, embeddings.dim, ledger, summary, timings), per_query)


def assemble(
    plan: RunPlan, dim: int | None, ledger: RunLedger, summary: Summary, timings: dict[str, float]
) -> ResultFile:
    """The result file of a run: what was evaluated, with which model and settings, and what it measured."""
    snapshot, settings, provider = plan.snapshot, plan.settings, plan.provider
    described = provider.describe().model_copy(update={"name": plan.model_name()})
    if dim is not None and not isinstance(described.meta.embed_dim, int):
        described = described.model_copy(update={"meta": described.meta.model_copy(update={"embed_dim": dim})})
    for task in dict.fromkeys(plan.tasks.values()):
        described = task.record(described)
    recall = plan.retrieval.recall
    protocol = protocol_of(snapshot)
    return ResultFile(
        lookbench_version=lookbench.__version__,
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        snapshot=SnapshotInfo(
            id=snapshot.snapshot_id,
            location=snapshot.location,
            content_hash=snapshot.content_hash,
            noise_rows=plan.noise_rows,
            subsets=ledger.subsets,
        ),
        model=described,
        config=RunConfig(
            fine_rule=settings.fine_rule.value,
            ks=list(plan.ks),
            search_backend=settings.backend.name,
            search=SearchInfo(
                **settings.backend.describe(),
                recall=recall or None,
                recall_queries=settings.recall_queries if recall else None,
            ),
            bootstrap=settings.bootstrap(),
            window=date_window(settings.since, settings.until, ledger.kept_queries, ledger.total_queries),
            protocol=None if protocol is None else protocol.name,
            noise=settings.noise.value,
        ),
        environment=_environment(),
        metrics=summary[0],
        per_category=summary[1],
        breakdowns=summary[2],
        skipped=[{"subset": s, "split": sp, "row": r, "error": e} for (s, sp, r), e in sorted(ledger.skipped.items())],
        timings={k: round(v, 3) for k, v in timings.items()},
        warnings=snapshot.warnings,
    )
