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

    def __init__(self, query_block: int = 1024, corpus_block: int = 4096) -> None:
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
            if exclude is not None:
                blocked = exclude[cs : cs + scores.shape[1]]
                if blocked.any():
                    scores[:, blocked] = -np.inf
            if best is None or best.shape[1] < k:
                keys = _top_keys(scores, k, cs)
                best = keys if best is None else _merge(best, keys, k)
            else:
                best = _merge_above(best, scores, k, cs)
        assert best is not None
        return np.sort(best, axis=1)[:, ::-1]


def _merge(best: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """Keep the k largest keys per row of two key arrays."""
    both = np.concatenate([best, keys], axis=1)
    if both.shape[1] <= k:
        return both
    return np.take_along_axis(both, np.argpartition(both, -k, axis=1)[:, -k:], axis=1)


def _merge_above(best: np.ndarray, scores: np.ndarray, k: int, offset: int) -> np.ndarray:
    """Merge a later score block into full (Q, k) keys, looking only at scores above each row's current cut.

    A later block's rows have higher indices, so a score equal to the cut loses the tie and can be skipped.
    """
    lowest = best.min(axis=1)
    cut = np.where(lowest == _EXCLUDED, -np.inf, _float_from_sortable(lowest >> _INDEX_BITS))
    rows, cols = np.nonzero(scores > cut[:, None])
    if len(rows) == 0:
        return best
    cand = _keys(scores[rows, cols], cols.astype(np.int64) + offset)
    touched = np.unique(rows)
    pos = np.searchsorted(touched, rows)
    all_rows = np.concatenate([np.repeat(np.arange(len(touched)), k), pos])
    all_keys = np.concatenate([best[touched].ravel(), cand])
    order = np.lexsort((~all_keys, all_rows))  # by row, then key descending (~x = -x - 1 cannot overflow)
    sorted_rows = all_rows[order]
    starts = np.searchsorted(sorted_rows, np.arange(len(touched)))
    rank = np.arange(len(order)) - starts[sorted_rows]
    keep = order[rank < k]
    out = best.copy()
    out[touched] = all_keys[keep].reshape(len(touched), k)
    return out


def _keys(scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Pack (score, lower row first) into one int64 per candidate; -inf scores become the EXCLUDED key."""
    keys = (_sortable_int(scores) << _INDEX_BITS) | (_INDEX_MASK - rows)
    return np.where(np.isneginf(scores), _EXCLUDED, keys)


def _top_keys(scores: np.ndarray, k: int, offset: int) -> np.ndarray:
    """Keys of the exact top k of each row of one score block (ties at the cut go to the lower row)."""
    n = scores.shape[1]
    if n <= k:
        return _keys(scores, np.arange(offset, offset + n, dtype=np.int64)[None, :].repeat(len(scores), 0))
    part = np.argpartition(scores, -k, axis=1)[:, -k:]
    vals = np.take_along_axis(scores, part, axis=1)
    cut = vals.min(axis=1)
    # argpartition picks arbitrarily among scores equal to the cut; redo those rows exactly
    tied = np.flatnonzero((scores >= cut[:, None]).sum(axis=1) > k)
    for r in tied:
        cand = np.flatnonzero(scores[r] >= cut[r])
        order = np.lexsort((cand, -scores[r, cand]))[:k]
        part[r] = cand[order]
        vals[r] = scores[r, part[r]]
    return _keys(vals, part.astype(np.int64) + offset)
