"""Approximate (or flat) inner-product search with faiss, for corpora far beyond LookBench's ~60k rows."""

from __future__ import annotations

import math
import weakref
from typing import Any, Literal

import numpy as np

from lookbench.search.backend import CheckedSearch, Corpus, SearchResult, is_immutable

IndexKind = Literal["flat", "ivf", "hnsw"]
SMALL_PART = 10_000
"""Corpus parts with fewer rows get a flat index whatever the kind: an approximate one would save nothing."""


class FaissSearch(CheckedSearch):
    """One faiss index per corpus part (the shared noise pool is indexed once), results merged by score.

    `flat` is brute force in float32 (ties within a part in faiss's order, across parts by the tie keys), `ivf` an
    inverted file with `nlist` lists (default 4 sqrt(rows)) probing `nprobe`, `hnsw` a graph with `hnsw_m` links
    searched with `ef_search`.
    Approximate backends are not `exact`: the runner measures their recall against `ExactSearch`.
    """

    name = "faiss"
    exact = False

    def __init__(
        self,
        index: IndexKind = "flat",
        nlist: int | None = None,
        nprobe: int = 16,
        hnsw_m: int = 32,
        ef_search: int = 128,
        ef_construction: int = 80,
    ) -> None:
        from lookbench._util.optional import require

        self.faiss = require("faiss", "faiss", "--search faiss")
        self.index = index
        self.nlist = nlist
        self.nprobe = nprobe
        self.hnsw_m = hnsw_m
        self.ef_search = ef_search
        self.ef_construction = ef_construction
        self._built: dict[int, tuple[weakref.ref[np.ndarray], Any]] = {}

    def describe(self) -> dict[str, Any]:
        """The index kind and every parameter that changes its results."""
        info: dict[str, Any] = {"backend": self.name, "index": self.index, "small_part_flat_below": SMALL_PART}
        if self.index == "ivf":
            info |= {"nlist": self.nlist or "4*sqrt(rows)", "nprobe": self.nprobe}
        if self.index == "hnsw":
            info |= {"hnsw_m": self.hnsw_m, "ef_search": self.ef_search, "ef_construction": self.ef_construction}
        return info

    def _search(
        self, q: np.ndarray, rows: Corpus, k: int, exclude: np.ndarray | None, q_ties: np.ndarray
    ) -> SearchResult:
        found_rows: list[np.ndarray] = []
        found_scores: list[np.ndarray] = []
        for offset, part in zip(rows.offsets, rows.parts, strict=False):
            if not len(part):
                continue
            blocked = None if exclude is None else np.flatnonzero(exclude[offset : offset + len(part)])
            params, selectors = self._params(blocked, len(part))
            scores, idx = self._index(part).search(q, min(k, len(part)), params=params)
            del selectors  # faiss holds raw pointers to them: alive until the search returned
            found_rows.append(np.where(idx >= 0, idx + int(offset), -1))
            found_scores.append(np.where(idx >= 0, scores, -np.inf).astype(np.float32))
        return _merge(np.concatenate(found_rows, axis=1), np.concatenate(found_scores, axis=1), k, rows, q_ties)

    def _kind(self, rows: int) -> IndexKind:
        return "flat" if rows < SMALL_PART else self.index

    def _index(self, part: np.ndarray) -> Any:
        key = id(part)
        cached = self._built.get(key)
        if cached is not None and cached[0]() is part:
            return cached[1]
        faiss = self.faiss
        data = np.ascontiguousarray(part, dtype=np.float32)
        dim = data.shape[1]
        kind = self._kind(len(data))
        if kind == "ivf":
            nlist = max(1, min(self.nlist or int(4 * math.sqrt(len(data))), len(data) // 39))
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(data)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = self.ef_construction
        else:
            index = faiss.IndexFlatIP(dim)
        index.add(data)
        if is_immutable(part):
            self._built = {k: v for k, v in self._built.items() if v[0]() is not None}
            self._built[key] = (weakref.ref(part), index)
        return index

    def _params(self, blocked: np.ndarray | None, rows: int) -> tuple[Any, list[Any]]:
        """Search parameters, and the selector objects they point to (the caller keeps them alive)."""
        faiss = self.faiss
        kwargs: dict[str, Any] = {}
        selectors: list[Any] = []
        if blocked is not None and len(blocked):
            selectors.append(faiss.IDSelectorBatch(blocked.astype(np.int64)))
            selectors.append(faiss.IDSelectorNot(selectors[0]))
            kwargs["sel"] = selectors[1]
        kind = self._kind(rows)
        if kind == "ivf":
            return faiss.SearchParametersIVF(nprobe=self.nprobe, **kwargs), selectors
        if kind == "hnsw":
            return faiss.SearchParametersHNSW(efSearch=max(self.ef_search, 1), **kwargs), selectors
        return (faiss.SearchParameters(**kwargs) if kwargs else None), selectors


def _merge(rows: np.ndarray, scores: np.ndarray, k: int, corpus: Corpus, q_ties: np.ndarray) -> SearchResult:
    """The k best of each query's candidates from all parts, by score, tie key, then row (empty slots last)."""
    empty = rows < 0
    ties = np.where(empty, 0, corpus.tie_order(np.where(empty, 0, rows), q_ties[:, None]))
    order = np.lexsort((np.where(empty, np.iinfo(np.int64).max, rows), ties, -scores), axis=1)[:, :k]
    indices = np.take_along_axis(rows, order, axis=1)
    best = np.take_along_axis(scores, order, axis=1)
    if indices.shape[1] < k:
        pad = k - indices.shape[1]
        indices = np.pad(indices, ((0, 0), (0, pad)), constant_values=-1)
        best = np.pad(best, ((0, 0), (0, pad)), constant_values=-np.inf)
    return SearchResult(indices=indices.astype(np.int64), scores=best.astype(np.float32))
