"""What scores one subset of a run (the Task Protocol), what it is given, and the run's clock per phase."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from lookbench.models.meta import ModelRun
from lookbench.search.backend import Corpus, SearchBackend
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.reader import Snapshot

Progress = Callable[[str], None]


class PhaseClock:
    """Seconds spent per phase of a run (`embed_s`, `search_s`, `recall_s`, `metrics_s`), summed over subsets."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {"embed_s": 0.0, "search_s": 0.0, "metrics_s": 0.0}

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the time the block takes to `name`."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started


class SplitEmbeddings(Protocol):
    """The run's checked, L2-normalised embeddings per split, and the rows it skipped (undecodable images)."""

    def get(self, subset: str, split: str) -> np.ndarray:
        """(rows, dim) L2-normalised embeddings of one split."""
        ...

    def skipped(self, subset: str, split: str) -> dict[int, str]:
        """Rows of the split whose image could not be embedded."""
        ...


@dataclass(frozen=True, kw_only=True)
class SubsetWork:
    """One subset as a task receives it: the kept query rows, their embeddings and the corpus to search."""

    snapshot: Snapshot
    subset: str
    rows: np.ndarray
    """Query rows kept by the date window (skipped images left out)."""
    queries: SplitLabels
    query_ties: np.ndarray
    """The tie key of every query row of the split (`lookbench.search.ties`)."""
    query_vectors: np.ndarray
    corpus: Corpus
    """Gallery vectors then the shared noise pool, as parts (searched in place, never concatenated), with the tie
    keys of their item ids."""
    corpus_labels: SplitLabels
    gallery_rows: int
    excluded: np.ndarray
    embeddings: SplitEmbeddings
    backend: SearchBackend
    ks: tuple[int, ...]


class Task(Protocol):
    """Scores subsets of one kind: plain retrieval, or composed retrieval (a reference image and a change)."""

    def score(self, work: SubsetWork, clock: PhaseClock, say: Progress) -> pa.Table:
        """The per-query table of the subset's kept queries."""
        ...

    def name(self, model: str) -> str:
        """The name a run with this task's subsets files its result under, from the model's own name."""
        ...

    def record(self, model: ModelRun) -> ModelRun:
        """The result's model record with what this task contributes (how composed queries were made)."""
        ...
