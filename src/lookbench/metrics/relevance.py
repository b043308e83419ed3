"""Relevance of corpus items to queries, from labels encoded as integer codes and attribute bitsets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lookbench.metrics.definitions import FineRule
from lookbench.snapshot.labels import SplitLabels

WORD = 64


def codes(values: list[str], vocab: dict[str, int], missing: int = -1) -> np.ndarray:
    return np.fromiter((vocab.get(v, missing) for v in values), dtype=np.int64, count=len(values))


def bitsets(sets: list[frozenset[str]], vocab: dict[str, int], words: int) -> np.ndarray:
    """Pack each attribute set into `words` uint64 words; attributes outside `vocab` are dropped."""
    bits = np.zeros((len(sets), max(words, 1)), dtype=np.uint64)
    rows: list[int] = []
    cols: list[int] = []
    for row, attrs in enumerate(sets):
        for attr in attrs:
            code = vocab.get(attr)
            if code is not None:
                rows.append(row)
                cols.append(code)
    if rows:
        r = np.asarray(rows)
        c = np.asarray(cols)
        np.bitwise_or.at(bits, (r, c // WORD), np.left_shift(np.uint64(1), (c % WORD).astype(np.uint64)))
    return bits


def popcount_and(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|A ∩ B| for broadcastable bitset arrays whose last axis is the word axis."""
    return np.bitwise_count(a & b).sum(axis=-1, dtype=np.int64)


@dataclass(frozen=True)
class Relevance:
    """Encoded labels of one task: queries against the corpus (gallery rows first, then noise rows)."""

    q_category: np.ndarray
    q_main: np.ndarray
    q_item: np.ndarray
    q_attrs: np.ndarray
    q_attr_count: np.ndarray
    c_category: np.ndarray
    c_main: np.ndarray
    c_item: np.ndarray
    c_attrs: np.ndarray
    c_relevant: np.ndarray
    """False for rows that can never be relevant: noise rows and excluded (skipped) rows."""
    c_noise: np.ndarray
    """True for noise rows (corpus rows at index >= the gallery's size)."""

    @classmethod
    def build(
        cls,
        queries: SplitLabels,
        corpus: SplitLabels,
        gallery_rows: int,
        excluded: np.ndarray | None = None,
    ) -> Relevance:
        """Encode labels; corpus rows at index >= `gallery_rows` are noise."""
        categories = {v: i for i, v in enumerate(sorted(set(queries.category)))}
        mains = {v: i for i, v in enumerate(sorted(set(queries.main_attribute)))}
        items = {v: i for i, v in enumerate(sorted(set(queries.item_id)))}
        q_sets = [queries.attribute_set(i) for i in range(len(queries))]
        attrs = {v: i for i, v in enumerate(sorted(set().union(*q_sets)))}
        words = -(-len(attrs) // WORD)
        relevant = np.zeros(len(corpus), dtype=bool)
        relevant[:gallery_rows] = True
        if excluded is not None:
            relevant &= ~excluded
        # only gallery rows can be relevant, so noise rows are never encoded (the pool is ~58k rows)
        gallery = range(gallery_rows)
        noise = len(corpus) - gallery_rows

        def padded(codes: np.ndarray) -> np.ndarray:
            return np.concatenate([codes, np.full(noise, -2, dtype=np.int64)])

        c_attrs = bitsets([corpus.attribute_set(i) for i in gallery], attrs, words)
        return cls(
            q_category=codes(queries.category, categories),
            q_main=codes(queries.main_attribute, mains),
            q_item=codes(queries.item_id, items),
            q_attrs=bitsets(q_sets, attrs, words),
            q_attr_count=np.fromiter((len(s) for s in q_sets), dtype=np.int64, count=len(q_sets)),
            c_category=padded(codes(corpus.category[:gallery_rows], categories, missing=-2)),
            c_main=padded(codes(corpus.main_attribute[:gallery_rows], mains, missing=-2)),
            c_item=padded(codes(corpus.item_id[:gallery_rows], items, missing=-2)),
            c_attrs=np.concatenate([c_attrs, np.zeros((noise, c_attrs.shape[1]), dtype=np.uint64)]),
            c_relevant=relevant,
            c_noise=np.arange(len(corpus)) >= gallery_rows,
        )

    @property
    def num_queries(self) -> int:
        """Number of queries."""
        return len(self.q_category)

    def _gather(self, topk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Safe corpus indices for (Q, K) result rows (-1 = empty slot) and the mask of usable slots."""
        valid = topk >= 0
        safe = np.where(valid, topk, 0)
        return safe, valid & self.c_relevant[safe]

    def coarse(self, topk: np.ndarray) -> np.ndarray:
        """(Q, K) bool: the item's category equals the query's."""
        safe, ok = self._gather(topk)
        return ok & (self.c_category[safe] == self.q_category[:, None])

    def item(self, topk: np.ndarray) -> np.ndarray:
        """(Q, K) bool: the item is the query's exact product (same item_ID)."""
        safe, ok = self._gather(topk)
        return ok & (self.c_item[safe] == self.q_item[:, None])

    def noise(self, topk: np.ndarray) -> np.ndarray:
        """(Q, K) bool: the item is a noise row (empty slots are not)."""
        safe, _ = self._gather(topk)
        return (topk >= 0) & self.c_noise[safe]

    def fine(self, topk: np.ndarray, rule: FineRule) -> np.ndarray:
        """(Q, K) bool: a fine match under `rule`."""
        coarse = self.coarse(topk)
        safe, _ = self._gather(topk)
        if rule is FineRule.MAIN:
            return coarse & (self.c_main[safe] == self.q_main[:, None])
        inter = popcount_and(self.q_attrs[:, None, :], self.c_attrs[safe])
        return coarse & (inter == self.q_attr_count[:, None])

    def gains(self, topk: np.ndarray) -> np.ndarray:
        """(Q, K) graded gains |A_q ∩ A_i| / |A_q| for same-category items, else 0 (1 when A_q is empty)."""
        coarse = self.coarse(topk)
        safe, _ = self._gather(topk)
        inter = popcount_and(self.q_attrs[:, None, :], self.c_attrs[safe]).astype(np.float64)
        frac = np.where(self.q_attr_count[:, None] > 0, inter / np.maximum(self.q_attr_count[:, None], 1), 1.0)
        return np.where(coarse, frac, 0.0)

    def ideal_gains(self, k: int, block: int = 256) -> np.ndarray:
        """(Q, k) the k largest gains each query could get from the whole corpus, descending.

        A query's gain is an increasing function of an integer key (|A_q ∩ A_i| for same-category items, 0 for
        others; 1 and 0 when A_q is empty): the top keys are found in integers and only they become gains.
        """
        rows = np.flatnonzero(self.c_relevant)
        out = np.zeros((self.num_queries, k), dtype=np.float64)
        if len(rows) == 0:
            return out
        cat = self.c_category[rows]
        attrs = self.c_attrs[rows]
        take = min(k, len(rows))
        dtype = np.min_scalar_type(WORD * attrs.shape[1])  # holds any intersection size; uint8 for 3 words or fewer
        for start in range(0, self.num_queries, block):
            stop = min(start + block, self.num_queries)
            counts = self.q_attr_count[start:stop, None]
            inter = np.zeros((stop - start, len(rows)), dtype=dtype)
            for word in range(attrs.shape[1]):  # word by word: 2-d products, small integers
                inter += np.bitwise_count(self.q_attrs[start:stop, word, None] & attrs[None, :, word])
            same = cat[None, :] == self.q_category[start:stop, None]
            keys = same * np.where(counts > 0, inter, 1).astype(dtype, copy=False)
            top = -np.sort(-np.partition(keys, keys.shape[1] - take, axis=1)[:, -take:].astype(np.int64), axis=1)
            out[start:stop, :take] = np.where(counts > 0, top / np.maximum(counts, 1), top)
        return out
