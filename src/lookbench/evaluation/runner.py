"""Run one evaluation: embed, search, score and summarise every requested subset of a snapshot."""

from __future__ import annotations

import datetime as dt
import platform
from dataclasses import dataclass, field
from importlib import metadata

import numpy as np
import pyarrow as pa

import lookbench
from lookbench._util.cores import cpu_model, load_average, usable_cores
from lookbench._util.optional import loaded_torch
from lookbench.embeddings.checks import check_embeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import corpus_labels
from lookbench.evaluation.plan import Plan
from lookbench.evaluation.retrieval import RetrievalTask
from lookbench.evaluation.settings import EvalSettings
from lookbench.evaluation.summary import Summary, summarise_run
from lookbench.evaluation.task import PhaseClock, Progress, SubsetWork, Task
from lookbench.evaluation.window import date_window, kept_rows
from lookbench.results.schema import (
    ResultFile,
    RunConfig,
    SearchInfo,
    SnapshotInfo,
    SubsetInfo,
)
from lookbench.search.backend import Corpus
from lookbench.search.ties import tie_keys
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE


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
    torch = loaded_torch()
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
class RunLedger:
    """What the run counts as it goes: subset sizes, skipped rows, queries kept by the window."""

    subsets: dict[str, SubsetInfo] = field(default_factory=dict)
    skipped: dict[tuple[str, str, int], str] = field(default_factory=dict)
    total_queries: int = 0
    kept_queries: int = 0


@dataclass
class Run:
    """A run ready to execute: its plan, and what carries it out (snapshot, provider, settings, a task per subset)."""

    plan: Plan
    snapshot: Snapshot
    provider: EmbeddingProvider
    settings: EvalSettings
    tasks: dict[str, Task]
    retrieval: RetrievalTask

    def model_name(self) -> str:
        """The name the run's result carries and files under, known before the run (`eval --skip-existing`): the
        model's own name with what its tasks add (a composed run's method)."""
        name = self.provider.describe().name or self.provider.spec
        for task in dict.fromkeys(self.tasks.values()):
            name = task.name(name)
        return name

    def execute(self, progress: Progress | None = None) -> EvalOutput:
        """Embed, gather and score each subset, then assemble the run's result."""
        say = progress or (lambda _msg: None)
        snapshot, provider, plan = self.snapshot, self.provider, self.plan
        clock, ledger = PhaseClock(), RunLedger()
        embedded_before, load_start = provider.embedded_images, load_average()
        needed = [(s, sp) for s in plan.names for sp in ("query", "gallery")]
        needed += [(NOISE, "gallery")] if plan.noise_rows else []
        with clock.phase("embed_s"):  # a sharded provider embeds every split it will be asked for at once
            sharded = provider.prepare(snapshot, needed)
        if sharded is not None:
            say(f"embedding: {sharded.summary()}")
        embeddings = _Embeddings(provider, snapshot)
        tables: list[pa.Table] = []
        for subset in plan.subsets:
            say(f"{subset.name}: embedding")
            work = self._gather(embeddings, subset.name, ledger, clock)
            if len(work.rows) == 0:
                say(f"{subset.name}: no queries left in the window; skipped")
                continue
            tables.append(self.tasks[subset.name].score(work, clock, say))
        if not tables:
            raise LookBenchError("no queries to evaluate (check --since/--until and --subsets)")
        with clock.phase("metrics_s"):
            per_query, summary = summarise_run(
                snapshot, pa.concat_tables(tables, promote_options="default"), plan, self.settings.bootstrap()
            )
        embedded_after = provider.embedded_images
        timings: dict[str, float] = dict(clock.seconds) | _loads(load_start, load_average())
        if embedded_before is not None and embedded_after is not None:
            timings["embedded_images"] = embedded_after - embedded_before
        return EvalOutput(self._assemble(embeddings.dim, ledger, summary, timings), per_query)

    def _gather(self, embeddings: _Embeddings, name: str, ledger: RunLedger, clock: PhaseClock) -> SubsetWork:
        """A subset's embeddings, corpus and the query rows its date window keeps; skipped rows go in the ledger."""
        snapshot, plan = self.snapshot, self.plan
        with clock.phase("embed_s"):
            query_vectors = embeddings.get(name, "query")
            parts = [embeddings.get(name, "gallery")]
            if plan.noise_rows:
                parts.append(embeddings.get(NOISE, "gallery"))  # searched in place: never copied per subset
        queries = snapshot.labels(name, "query")
        labels = corpus_labels(snapshot, name, plan.noise)
        corpus = Corpus(parts, ties=tie_keys(labels.item_id, "corpus"))
        gallery_rows = snapshot.num_rows(name, "gallery")
        excluded = np.zeros(len(labels), dtype=bool)
        for source, offset in [(name, 0)] + ([(NOISE, gallery_rows)] if plan.noise_rows else []):
            for row, error in embeddings.skipped(source, "gallery").items():
                excluded[offset + row] = True
                ledger.skipped[(source, "gallery", row)] = error
        q_skipped = embeddings.skipped(name, "query")
        ledger.skipped.update({(name, "query", row): error for row, error in q_skipped.items()})
        rows = kept_rows(queries, q_skipped, plan.since, plan.until, plan.fallback_date)
        ledger.total_queries += len(queries)
        ledger.kept_queries += len(rows)
        ledger.subsets[name] = SubsetInfo(
            queries=len(rows),
            gallery=gallery_rows,
            corpus=len(labels),
            skipped_queries=len(q_skipped),
            skipped_corpus=int(excluded.sum()),
        )
        return SubsetWork(
            snapshot=snapshot,
            subset=name,
            rows=rows,
            queries=queries,
            query_ties=tie_keys(queries.item_id, "query"),
            query_vectors=query_vectors,
            corpus=corpus,
            corpus_labels=labels,
            gallery_rows=gallery_rows,
            excluded=excluded,
            embeddings=embeddings,
            backend=self.settings.backend,
            ks=plan.ks,
        )

    def _assemble(self, dim: int | None, ledger: RunLedger, summary: Summary, timings: dict[str, float]) -> ResultFile:
        """The result file of the run: what was evaluated, with which model and settings, and what it measured."""
        snapshot, settings, plan = self.snapshot, self.settings, self.plan
        described = self.provider.describe().model_copy(update={"name": self.model_name()})
        if dim is not None and not isinstance(described.meta.embed_dim, int):
            described = described.model_copy(update={"meta": described.meta.model_copy(update={"embed_dim": dim})})
        for task in dict.fromkeys(self.tasks.values()):
            described = task.record(described)
        recall = self.retrieval.recall
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
                window=date_window(plan.since, plan.until, ledger.kept_queries, ledger.total_queries),
                protocol=None if plan.protocol is None else plan.protocol.name,
                noise=plan.noise.value,
            ),
            environment=_environment(),
            metrics=summary.metrics,
            per_category=summary.per_category,
            breakdowns=summary.breakdowns,
            skipped=[
                {"subset": s, "split": sp, "row": r, "error": e} for (s, sp, r), e in sorted(ledger.skipped.items())
            ],
            timings={k: round(v, 3) for k, v in timings.items()},
            warnings=snapshot.warnings,
        )


def prepare(snapshot: Snapshot, provider: EmbeddingProvider, settings: EvalSettings) -> Run:
    """Plan the run (cut-offs, subsets and their kinds), check the labels (unscorable ones fail here) and choose each
    subset's task by its planned kind."""
    plan = Plan.of(snapshot, settings)
    for subset in plan.subsets:
        snapshot.check_task(subset.name, subset.kind)
    retrieval = RetrievalTask(settings.fine_rule, settings.recall_queries)
    tasks: dict[str, Task] = dict.fromkeys(plan.names, retrieval)
    if plan.composed:
        from lookbench.evaluation.composed.task import composed_run

        composed = composed_run(settings.compose, provider, snapshot, plan.composed, settings.fine_rule)
        tasks.update(dict.fromkeys(plan.composed, composed))
    return Run(plan, snapshot, provider, settings, tasks, retrieval)


def evaluate(
    snapshot: Snapshot,
    provider: EmbeddingProvider,
    settings: EvalSettings | None = None,
    progress: Progress | None = None,
) -> EvalOutput:
    """Evaluate `provider` on `snapshot` and return the result summary and the per-query table."""
    return prepare(snapshot, provider, settings or EvalSettings()).execute(progress)
