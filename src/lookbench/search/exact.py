"""Exact cosine top-K by blocked matrix products and partial selection, with deterministic ties."""

from __future__ import annotations

import numpy as np

from lookbench.search.backend import SearchResult

MAX_K = 100
_INDEX_BITS = 32
_INDEX_MASK = np.int64((1 << _INDEX_BITS) - 1)
_EXCLUDED = np.iinfo(np.int64).min


def _sortable_int(scores: np.ndarray) -> np.ndarray:
    """Map float32 scores to int64 keys with the same order (IEEE-754 sign-magnitude to two's complement)."""
    bits = np.ascontiguousarray(scores, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits < 0, np.int64(-0x80000000) - bits - 1, bits)


def _float_from_sortable(keys: np.ndarray) -> np.ndarray:
    """Invert `_sortable_int`."""
    bits = np.where(keys < 0, np.int64(-0x80000000) - keys - 1, keys).astype(np.int32)
    return bits.view(np.float32)


class ExactSearch:
    """The reference backend: every score is computed; only the top K of each block is kept.

    Ties are broken by the lower corpus row: each candidate is keyed by (score, -row) packed into one int64,
    so selection with `argpartition` is exact and order-independent. Memory is bounded by
    `query_block * corpus_block` scores, whatever the corpus size.
    """

    name = "exact"

    def __init__(self, query_block: int = 512, corpus_block: int = 16384) -> None:
        self.query_block = query_block
        self.corpus_block = corpus_block

    def search(
        self, queries: np.ndarray, corpus: np.ndarray, k: int, exclude: np.ndarray | None = None
    ) -> SearchResult:
        """Top-K rows of `corpus` for each query, best first."""
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
        if queries.ndim != 2 or corpus.ndim != 2 or queries.shape[1] != corpus.shape[1]:
            raise ValueError(f"shape mismatch: queries {queries.shape}, corpus {corpus.shape}")
        n_corpus = corpus.shape[0]
        if n_corpus >= 1 << _INDEX_BITS:
            raise ValueError("corpus too large for exact search")
        k_eff = min(k, n_corpus)
        q = np.ascontiguousarray(queries, dtype=np.float32)
        c = np.ascontiguousarray(corpus, dtype=np.float32)
        out_keys = np.empty((q.shape[0], k_eff), dtype=np.int64)
        for qs in range(0, q.shape[0], self.query_block):
            out_keys[qs : qs + self.query_block] = self._search_block(q[qs : qs + self.query_block], c, k_eff, exclude)
        indices = (_INDEX_MASK - (out_keys & _INDEX_MASK)).astype(np.int64)
        scores = _float_from_sortable(out_keys >> _INDEX_BITS)
        empty = out_keys == _EXCLUDED
        indices[empty] = -1
        scores[empty] = -np.inf
        if k_eff < k:  # pad so every query has K slots; -1 marks "no row"
            pad = k - k_eff
            indices = np.pad(indices, ((0, 0), (0, pad)), constant_values=-1)
            scores = np.pad(scores, ((0, 0), (0, pad)), constant_values=-np.inf)
        return SearchResult(indices=indices, scores=scores.astype(np.float32))

    def _search_block(self, q: np.ndarray, c: np.ndarray, k: int, exclude: np.ndarray | None) -> np.ndarray:
        best: np.ndarray | None = None
        for cs in range(0, c.shape[0], self.corpus_block):
            scores = q @ c[cs : cs + self.corpus_block].T
            rows = np.arange(cs, cs + scores.shape[1], dtype=np.int64)
            keys = (_sortable_int(scores) << _INDEX_BITS) | (_INDEX_MASK - rows)[None, :]
            if exclude is not None:
                blocked = exclude[cs : cs + scores.shape[1]]
                if blocked.any():
                    keys[:, blocked] = _EXCLUDED
            if keys.shape[1] > k:
                keys = np.take_along_axis(keys, np.argpartition(keys, -k, axis=1)[:, -k:], axis=1)
            best = keys if best is None else np.concatenate([best, keys], axis=1)
            if best.shape[1] > k:
                best = np.take_along_axis(best, np.argpartition(best, -k, axis=1)[:, -k:], axis=1)
        assert best is not None
        return np.sort(best, axis=1)[:, ::-1]
