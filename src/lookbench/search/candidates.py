"""Exact top-K from approximate scores: keep every row a rounding error could lift into the top K, rescore exactly.

Every backend computes scores with some float32 matrix product (OpenBLAS, cuBLAS...), whose last bits depend on
the library and the blocking. To return the same rows on every machine, the reported score of a (query, row) pair
is its *exact score*: the dot product of the float32 vectors accumulated in float64 (each product is exact; the sum
is pairwise in a fixed order) and rounded to float32. Ranking is by exact score, ties by the corpus's tie keys
(`lookbench.search.ties`; the lower row without them), then the lower row.

A float32 dot product of length d is within gamma_d * |q| * |c| of the true value whatever the summation order
(gamma_d = d u / (1 - d u), u = 2**-24), and the exact score is within 2**-24 |q| |c| of it. So with t the K-th best
approximate score of a query, every row of the exact top K (ties included) has an approximate score of at least
t - margin, margin = 2 * (gamma_d + 2**-23) * max|q| * max|c|. Backends keep those rows and `finish` ranks them.
"""

from __future__ import annotations

import numpy as np

from lookbench.search.backend import Corpus, SearchResult, no_result

_FLOOR = np.float32(np.finfo(np.float32).min)
"""The lowest threshold: every finite score passes it, excluded rows (-inf) never do."""


def score_margin(dim: int, query_norm: float, corpus_norm: float) -> float:
    """How far below the K-th best approximate score a row of the exact top K can lie."""
    if not (np.isfinite(query_norm) and np.isfinite(corpus_norm)):
        raise ValueError("queries or corpus hold NaN or infinite values (or norms beyond float64)")
    u = 2.0**-24
    gamma = dim * u / (1.0 - dim * u)
    return 2.0 * (gamma + 2.0 * u) * max(query_norm, 1.0) * max(corpus_norm, 1.0)


def exact_scores(queries: np.ndarray, q_rows: np.ndarray, corpus: Corpus, c_rows: np.ndarray) -> np.ndarray:
    """Exact scores of the pairs (queries[q_rows[i]], corpus row c_rows[i]), as float32."""
    out = np.empty(len(q_rows), dtype=np.float32)
    chunk = max(1, (1 << 19) // max(corpus.dim, 1))  # two 4 MB float64 buffers, reused: they stay in cache
    left = np.empty((min(chunk, len(q_rows)), corpus.dim), dtype=np.float64)
    right = np.empty_like(left)
    for start in range(0, len(q_rows), chunk):
        stop = min(start + chunk, len(q_rows))
        a, b = left[: stop - start], right[: stop - start]
        a[...] = queries[q_rows[start:stop]]  # widening first: a float64 product of float32 inputs casts slowly
        b[...] = corpus.take(c_rows[start:stop])
        np.multiply(a, b, out=a)
        out[start:stop] = a.sum(axis=1)  # pairwise, in an order fixed by the dimension alone
    return out


def finish(
    queries: np.ndarray, corpus: Corpus, k: int, q_rows: np.ndarray, c_rows: np.ndarray, q_ties: np.ndarray
) -> SearchResult:
    """Top k of each query among candidate pairs, by exact score, tie key, then row; -1 / -inf pad missing slots.

    The candidates of each query must include every row of its exact top k (ties included), each pair once.
    """
    result = no_result(len(queries), k)
    indices, scores = result.indices, result.scores
    if len(q_rows) == 0:
        return result
    q_rows, c_rows = q_rows.astype(np.int64, copy=False), c_rows.astype(np.int64, copy=False)
    exact = exact_scores(queries, q_rows, corpus, c_rows)
    order = np.lexsort((c_rows, corpus.tie_order(c_rows, q_ties[q_rows]), -exact, q_rows))
    q_sorted = q_rows[order]
    rank = np.arange(len(order)) - np.searchsorted(q_sorted, q_sorted, side="left")
    keep = rank < k
    indices[q_sorted[keep], rank[keep]] = c_rows[order][keep]
    scores[q_sorted[keep], rank[keep]] = exact[order][keep]
    return result


class CandidatePool:
    """Per query, the rows whose approximate score is within `margin` of its running K-th best.

    Fed one block of approximate scores at a time (`offer`); memory stays about K + a few rows per query, and a
    query whose pool grows past `cap` rows (massive ties) is cut to its exact top K on the spot.
    """

    def __init__(
        self, queries: np.ndarray, q_ties: np.ndarray, corpus: Corpus, k: int, margin: float, cap: int = 2048
    ) -> None:
        self.queries = queries
        self.q_ties = q_ties
        self.corpus = corpus
        self.k = k
        self.margin = np.float32(margin)
        self.cap = max(cap, 4 * k)
        n = len(queries)
        self.threshold = np.full(n, _FLOOR, dtype=np.float32)
        self.count = np.zeros(n, dtype=np.int64)
        self.cols = np.full((n, 2 * k), -1, dtype=np.int64)
        self.vals = np.full((n, 2 * k), -np.inf, dtype=np.float32)

    def offer(self, scores: np.ndarray, offset: int) -> None:
        """Take the candidates of one (queries, block) score matrix whose columns start at corpus row `offset`."""
        if scores.shape[1] >= self.k and (self.count < self.k).any():
            self._raise_threshold(scores)  # a block's own K-th best bounds the final one from below
        hits = np.flatnonzero(scores >= self.threshold[:, None])  # 1-d: several times faster than a 2-d nonzero
        if len(hits) == 0:
            return
        rows, cols = np.divmod(hits, scores.shape[1])
        self._append(rows, cols + offset, scores[rows, cols])
        self._raise_threshold(self.vals)
        if self.vals.shape[1] > 8 * self.k:
            self._compact()

    def absorb(self, other: CandidatePool) -> None:
        """Take the live candidates of a pool of the same queries fed other corpus blocks; only those within the
        margin of the K-th best of both stay."""
        rows, cols, vals = other.entries()
        if len(rows):
            self._append(rows, cols, vals)
            self._raise_threshold(self.vals)
            self._compact()

    def _raise_threshold(self, values: np.ndarray) -> None:
        width = values.shape[1]
        if width < self.k:
            return
        kth = np.partition(values, width - self.k, axis=1)[:, width - self.k]
        np.maximum(self.threshold, np.where(np.isfinite(kth), kth - self.margin, _FLOOR), out=self.threshold)

    def _append(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> None:
        rank = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")  # rows come sorted from nonzero
        pos = self.count[rows] + rank
        need = int(pos.max()) + 1
        if need > self.vals.shape[1]:
            grow = max(need, 2 * self.vals.shape[1]) - self.vals.shape[1]
            self.cols = np.pad(self.cols, ((0, 0), (0, grow)), constant_values=-1)
            self.vals = np.pad(self.vals, ((0, 0), (0, grow)), constant_values=-np.inf)
        self.cols[rows, pos] = cols
        self.vals[rows, pos] = vals
        self.count += np.bincount(rows, minlength=len(self.count))

    def _compact(self) -> None:
        """Drop entries below the threshold; cut queries still over `cap` to their exact top K."""
        keep = self.vals >= self.threshold[:, None]
        self.count = keep.sum(axis=1)
        width = max(int(self.count.max()), 2 * self.k)
        order = np.argsort(~keep, axis=1, kind="stable")[:, :width]
        self.cols = np.take_along_axis(self.cols, order, axis=1)
        self.vals = np.take_along_axis(self.vals, order, axis=1)
        dead = np.arange(width)[None, :] >= self.count[:, None]
        self.cols[dead] = -1
        self.vals[dead] = -np.inf
        crowded = np.flatnonzero(self.count > self.cap)
        if len(crowded):
            self._cut_to_exact_top(crowded)

    def _cut_to_exact_top(self, rows: np.ndarray) -> None:
        q_rows, c_rows, vals = self.entries(rows)
        best = finish(self.queries, self.corpus, self.k, q_rows, c_rows, self.q_ties).indices[rows]
        # the kept entries keep their approximate scores: look them up by (query, corpus row)
        width = len(self.corpus) + 1
        keys = q_rows * width + c_rows
        order = np.argsort(keys)
        wanted = rows[:, None] * width + best
        pos = np.searchsorted(keys[order], wanted.ravel()).clip(max=len(keys) - 1)
        found = vals[order[pos]].reshape(best.shape)
        self.cols[rows] = -1
        self.vals[rows] = -np.inf
        self.cols[rows, : self.k] = best
        self.vals[rows, : self.k] = np.where(best >= 0, found, -np.inf)
        self.count[rows] = (best >= 0).sum(axis=1)

    def entries(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query row, corpus row, approximate score) of every live entry, optionally of some queries only."""
        live = self.vals >= self.threshold[:, None]
        if rows is not None:
            mask = np.zeros(len(self.count), dtype=bool)
            mask[rows] = True
            live &= mask[:, None]
        q_rows, slots = np.nonzero(live)
        return q_rows, self.cols[q_rows, slots], self.vals[q_rows, slots]

    def result(self) -> SearchResult:
        """The exact top K of every query."""
        q_rows, c_rows, _ = self.entries()
        return finish(self.queries, self.corpus, self.k, q_rows, c_rows, self.q_ties)


def merged_result(pools: list[CandidatePool]) -> SearchResult:
    """The exact top K of every query from pools of the same queries fed disjoint corpus blocks: each pool holds
    every row of its blocks that can be in the exact top K, so their union holds every row of the whole."""
    first = pools[0]
    for other in pools[1:]:
        first.absorb(other)
    return first.result()
