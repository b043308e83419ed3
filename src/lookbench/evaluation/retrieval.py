"""The retrieval task: search each kept query's embedding in the corpus, then score the ranking."""

from __future__ import annotations

import pyarrow as pa

from lookbench.evaluation.task import PhaseClock, Progress, SubsetWork
from lookbench.metrics.definitions import FineRule
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.models.meta import ModelRun
from lookbench.results.per_query import task_table
from lookbench.search.recall import measured_recall


class RetrievalTask:
    """Image queries against the corpus; an approximate backend's recall against exact search is measured too."""

    def __init__(self, rule: FineRule, recall_queries: int) -> None:
        self.rule = rule
        self.recall_queries = recall_queries
        self.recall: dict[str, dict[str, float]] = {}
        """Subset -> recall@K of an approximate backend against exact search."""

    def score(self, work: SubsetWork, clock: PhaseClock, say: Progress) -> pa.Table:
        """Search, then the per-query table."""
        say(f"{work.subset}: searching {len(work.rows)} queries over {len(work.corpus_labels)} items")
        vectors = work.query_vectors[work.rows]
        exclude = work.excluded if work.excluded.any() else None
        with clock.phase("search_s"):
            ties = work.query_ties[work.rows]
            found = work.backend.search(vectors, work.corpus, max(work.ks), exclude=exclude, query_ties=ties)
        if not work.backend.exact:
            with clock.phase("recall_s"):
                recall = measured_recall(vectors, ties, work.corpus, found, work.ks, exclude, self.recall_queries)
                self.recall[work.subset] = recall
        with clock.phase("metrics_s"):
            kept = work.queries.take(work.rows)
            relevance = Relevance.build(kept, work.corpus_labels, work.gallery_rows, work.excluded)
            scores = score_task(relevance, found.indices, work.ks, self.rule)
            ids = cluster_ids(kept.outfit_key)
            item_ids = work.corpus_labels.item_id
            return task_table(work.subset, work.rows, kept, ids, found.indices, found.scores, item_ids, scores)

    def name(self, model: str) -> str:
        """Plain retrieval keeps the model's name."""
        return model

    def record(self, model: ModelRun) -> ModelRun:
        """Plain retrieval adds nothing to the model record."""
        return model
