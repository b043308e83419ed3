"""Score one composed subset: learn, tune on the validation split, embed the queries, search without the
reference item, and build the per-query table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.embeddings.checks import check_embeddings
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.evaluation.composed.encoders import ComposedBatch, ComposedQueryEncoder, LabelledItems
from lookbench.evaluation.composed.methods import composed_model_name, make_encoder, run_method
from lookbench.evaluation.composed.relevance import ComposedRelevance
from lookbench.evaluation.task import PhaseClock, Progress, SplitEmbeddings, SubsetWork
from lookbench.metrics.composed import composed_values
from lookbench.metrics.definitions import FineRule, metric_name
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.ranking import recall_at
from lookbench.metrics.scoring import TaskScores
from lookbench.models.meta import Composition, ModelRun
from lookbench.results.per_query import task_table
from lookbench.search.backend import MAX_K, Corpus, CorpusLike, SearchBackend, SearchResult
from lookbench.search.ties import tie_keys
from lookbench.snapshot.composed import ComposedQueries, read_composed_queries
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE

TUNING_K = 10
TUNING_METRIC = metric_name("recall", TUNING_K)
"""What a parameter is chosen by on the validation split."""


@dataclass(frozen=True)
class ComposedTask:
    """One composed subset of a run: its corpus (gallery rows, then noise) and how to search and score it."""

    snapshot: Snapshot
    subset: str
    embeddings: SplitEmbeddings
    corpus: CorpusLike
    """Gallery vectors then the shared noise pool, as parts (searched in place, never concatenated)."""
    corpus_labels: SplitLabels
    gallery_rows: int
    excluded: np.ndarray
    backend: SearchBackend
    ks: tuple[int, ...]
    rule: FineRule


def fit_items(task: ComposedTask) -> LabelledItems:
    """Labelled rows of the snapshot's image-subset galleries and noise whose item is not in the composed gallery."""
    snapshot = task.snapshot
    taken = set(task.corpus_labels.item_id[: task.gallery_rows])
    sources = snapshot.subsets_of_kind("image") + ([NOISE] if snapshot.has_noise else [])
    vectors: list[np.ndarray] = []
    parts: list[SplitLabels] = []
    for source in sources:
        labels = snapshot.labels(source, "gallery")
        skipped = task.embeddings.skipped(source, "gallery")
        keep = np.array(
            [
                bool(labels.category[r]) and r not in skipped and labels.item_id[r] not in taken
                for r in range(len(labels))
            ],
            dtype=bool,
        )
        if keep.any():
            rows = np.flatnonzero(keep)
            vectors.append(task.embeddings.get(source, "gallery")[rows])
            parts.append(labels.take(rows))
    if not parts:
        dim = Corpus.of(task.corpus).dim
        return LabelledItems(np.zeros((0, dim), np.float32), SplitLabels([], [], [], [], []))
    return LabelledItems(np.concatenate(vectors), SplitLabels.concat(parts))


def search_without_reference(
    backend: SearchBackend,
    queries: np.ndarray,
    corpus: CorpusLike,
    k: int,
    excluded: np.ndarray,
    reference_rows: list[np.ndarray],
    query_ties: np.ndarray | None = None,
) -> SearchResult:
    """Top-k corpus rows per query with the query's reference item removed from its ranking (as CIRR does)."""
    extra = max((len(r) for r in reference_rows), default=0)
    n = len(queries)
    if n == 0:
        return SearchResult(np.zeros((0, k), np.int64), np.zeros((0, k), np.float32))
    exclude = excluded if excluded.any() else None
    if k + extra <= MAX_K:
        found = backend.search(queries, corpus, k + extra, exclude=exclude, query_ties=query_ties)
        drop = np.zeros(found.indices.shape, dtype=bool)
        for q, rows in enumerate(reference_rows):
            if len(rows):
                drop[q] = np.isin(found.indices[q], rows)
        return _first_kept(found, drop, k)
    indices = np.full((n, k), -1, dtype=np.int64)
    scores = np.full((n, k), -np.inf, dtype=np.float32)
    groups: dict[bytes, list[int]] = {}
    for q, rows in enumerate(reference_rows):
        groups.setdefault(np.asarray(rows, np.int64).tobytes(), []).append(q)
    for key, members in groups.items():
        mask = excluded.copy()
        mask[np.frombuffer(key, dtype=np.int64)] = True
        ties = None if query_ties is None else query_ties[members]
        part = backend.search(queries[members], corpus, k, exclude=mask if mask.any() else None, query_ties=ties)
        indices[members], scores[members] = part.indices, part.scores
    return SearchResult(indices, scores)


def _first_kept(found: SearchResult, drop: np.ndarray, k: int) -> SearchResult:
    """The first k slots of each row that are not dropped, in rank order (padded with empty slots)."""
    order = np.argsort(drop, axis=1, kind="stable")[:, :k]
    indices = np.take_along_axis(found.indices, order, axis=1)
    scores = np.take_along_axis(found.scores, order, axis=1)
    gone = np.take_along_axis(drop, order, axis=1)
    return SearchResult(np.where(gone, -1, indices), np.where(gone, -np.inf, scores).astype(np.float32))


def _batch(task: ComposedTask, queries: ComposedQueries, split: str, rows: np.ndarray) -> ComposedBatch:
    reference = task.embeddings.get(task.subset, split)[rows]
    return ComposedBatch(reference, queries.texts, queries.changes, queries.labels)


def _search(
    task: ComposedTask,
    encoder: ComposedQueryEncoder,
    batch: ComposedBatch,
    relevance: ComposedRelevance,
    value: float | None,
    k: int,
    query_ties: np.ndarray,
) -> SearchResult:
    where = f"{encoder.method} composed queries of {task.subset}"
    vectors = check_embeddings(encoder.embed_queries(batch, value), len(batch.texts), where, Corpus.of(task.corpus).dim)
    references = relevance.reference_rows()
    return search_without_reference(task.backend, vectors, task.corpus, k, task.excluded, references, query_ties)


def _relevance(task: ComposedTask, queries: ComposedQueries) -> ComposedRelevance:
    return ComposedRelevance.build(queries, task.corpus_labels, task.gallery_rows, task.excluded)


def tune(task: ComposedTask, encoder: ComposedQueryEncoder) -> dict[str, Any]:
    """Pick the encoder's parameter on the validation split by Recall@10; the record says what was tried."""
    record: dict[str, Any] = {"parameter": encoder.parameter, "value": encoder.default}
    if encoder.parameter is None:
        return record
    if not encoder.grid or not task.snapshot.has_split(task.subset, "validation"):
        record["chosen_on"] = "default (no validation split)" if encoder.grid else "fixed"
        return record
    queries = read_composed_queries(task.snapshot, task.subset, "validation")
    skipped = task.embeddings.skipped(task.subset, "validation")
    rows = np.array([r for r in range(len(queries)) if r not in skipped], dtype=np.int64)
    kept = queries.take(rows)
    batch = _batch(task, kept, "validation", rows)
    relevance = _relevance(task, kept)
    ties = tie_keys(queries.labels.item_id, "query")[rows]
    tried: dict[str, float] = {}
    for value in encoder.grid:
        relevant, _ = relevance.flags(_search(task, encoder, batch, relevance, value, TUNING_K, ties).indices)
        tried[repr(value)] = float(recall_at(relevant, TUNING_K).mean()) if len(rows) else 0.0
    best = max(tried.values())
    default = encoder.default if encoder.default is not None else encoder.grid[0]
    # ties go to the value nearest the default, then to the smaller value
    chosen = min((v for v in encoder.grid if tried[repr(v)] == best), key=lambda v: (abs(v - default), v))
    record.update(value=chosen, chosen_on=f"{task.subset}/validation", chosen_by=TUNING_METRIC)
    record.update(validation_queries=len(rows), validation=tried)
    return record


def score_composed(
    task: ComposedTask,
    encoder: ComposedQueryEncoder,
    rows: np.ndarray,
    progress: Callable[[str], None] | None = None,
) -> tuple[pa.Table, dict[str, Any]]:
    """The per-query table of the given query rows and the record of how the queries were composed."""
    say = progress or (lambda _msg: None)
    if encoder.learns_from_items:
        items = fit_items(task)
        say(f"{task.subset}: {encoder.method} learns from {len(items.labels)} labelled items outside its gallery")
        encoder.fit(items)
    record = tune(task, encoder)
    if "validation" in record:
        say(f"{task.subset}: {encoder.parameter} = {record['value']} (best {TUNING_METRIC} on the validation split)")
    split = read_composed_queries(task.snapshot, task.subset, "query")
    queries = split.take(rows)
    batch = _batch(task, queries, "query", rows)
    relevance = _relevance(task, queries)
    ties = tie_keys(split.labels.item_id, "query")[rows]
    found = _search(task, encoder, batch, relevance, record["value"], max(task.ks), ties)
    relevant, hard = relevance.flags(found.indices)
    fine = relevance.target.fine(found.indices, task.rule)
    coarse = relevance.target.coarse(found.indices)
    counts = relevance.relevant_counts()
    values = composed_values(relevant, hard, fine, coarse, counts, task.ks)
    scores = TaskScores(
        values=values,
        fine=fine,
        coarse=coarse,
        item=relevance.explicit(found.indices),
        gains=relevance.target.gains(found.indices),
    )
    labels = queries.labels
    keys: list[str | None] = [
        o if o is not None else f"item\0{i}" for o, i in zip(labels.outfit_key, labels.item_id, strict=True)
    ]
    table = task_table(
        task.subset,
        rows,
        labels,
        cluster_ids(keys),
        found.indices,
        found.scores,
        task.corpus_labels.item_id,
        scores,
    )
    k = found.indices.shape[1]
    offsets = pa.array(np.arange(0, len(rows) * k + 1, k, dtype=np.int32))
    groups = [sorted({c.group for c in changes}) for changes in queries.changes]
    extra = {
        "relevant": pa.ListArray.from_arrays(offsets, pa.array(relevant.reshape(-1), pa.bool_())),
        "hard_negative": pa.ListArray.from_arrays(offsets, pa.array(hard.reshape(-1), pa.bool_())),
        "modification_text": pa.array(queries.texts, pa.string()),
        "change_groups": pa.array(groups, pa.list_(pa.string())),
        "num_changes": pa.array([len(c) for c in queries.changes], pa.int64()),
        "num_relevant": pa.array(counts, pa.int64()),
    }
    for name, column in extra.items():
        table = table.append_column(name, column)
    return table, {**encoder.describe(), **record}


class ComposedRun:
    """The Task of a run's composed subsets: one composition method (see `lookbench.evaluation.composed.methods`)."""

    def __init__(self, method: str, provider: EmbeddingProvider, rule: FineRule) -> None:
        self.method = method
        self.provider = provider
        self.rule = rule
        self.composition: dict[str, Any] = {}
        """Subset -> how its queries were composed (method, learnt parameter, validation scores)."""

    def score(self, work: SubsetWork, clock: PhaseClock, say: Progress) -> pa.Table:
        """Compose, search and score the subset's kept queries."""
        say(f"{work.subset}: composing and searching {len(work.rows)} queries over {len(work.corpus_labels)} items")
        with clock.phase("search_s"):
            task = ComposedTask(
                work.snapshot,
                work.subset,
                work.embeddings,
                work.corpus,
                work.corpus_labels,
                work.gallery_rows,
                work.excluded,
                work.backend,
                work.ks,
                self.rule,
            )
            table, self.composition[work.subset] = score_composed(
                task, make_encoder(self.method, self.provider), work.rows, say
            )
        return table

    def name(self, model: str) -> str:
        """The model's name plus the composition method."""
        return composed_model_name(model, self.method)

    def record(self, model: ModelRun) -> ModelRun:
        """How each composed subset's queries were made."""
        if not self.composition:
            return model
        return model.model_copy(update={"composition": Composition(method=self.method, subsets=self.composition)})


def composed_run(
    name: str, provider: EmbeddingProvider, snapshot: Snapshot, composed: Sequence[str], rule: FineRule
) -> ComposedRun:
    """The Task of a run's `composed` subsets, with the concrete method `--compose NAME` means there."""
    return ComposedRun(run_method(name, provider, snapshot, composed), provider, rule)
