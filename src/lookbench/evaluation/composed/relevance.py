"""Which corpus items a composed query wants: the label rule, explicit targets, the reference and hard negatives."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lookbench.metrics.relevance import WORD, Relevance, bitsets, codes, popcount_and
from lookbench.snapshot.composed import Change, ComposedQueries
from lookbench.snapshot.labels import SplitLabels


def target_attributes(reference: frozenset[str], changes: tuple[Change, ...]) -> frozenset[str]:
    """The attributes the wanted item has: the reference's, each change's `from` replaced by its `to`."""
    removed = {c.source for c in changes if c.source}
    return frozenset((reference - removed) | {c.target for c in changes if c.target})


def kept_attributes(reference: frozenset[str], changes: tuple[Change, ...]) -> frozenset[str]:
    """The reference's attributes no change touches."""
    return reference - {c.source for c in changes if c.source}


def target_labels(queries: ComposedQueries) -> SplitLabels:
    """The labels of the item each query asks for, against which Fine and Coarse recall are computed.

    The main attribute follows its change (an empty main where a change removes it); the rest is the target set.
    """
    labels = queries.labels
    mains: list[str] = []
    others: list[list[str]] = []
    for row, changes in enumerate(queries.changes):
        main = labels.main_attribute[row]
        for change in changes:
            if change.source and change.source == main:
                main = change.target
        mains.append(main)
        wanted = target_attributes(labels.attribute_set(row), changes)
        others.append(sorted(wanted - {main}))
    return SplitLabels(
        category=list(labels.category),
        main_attribute=mains,
        other_attributes=others,
        item_id=list(labels.item_id),
        outfit_key=list(labels.outfit_key),
        first_seen_at=labels.first_seen_at,
    )


@dataclass(frozen=True)
class ComposedRelevance:
    """Encoded composed queries against one corpus (gallery rows first, then noise rows).

    An item is relevant to a query when it is not the reference item, is a gallery row that may be relevant, and
    either is one of the query's explicit targets or (for a query with changes) has the query's category, every
    kept and every `to` attribute, and none of the `from` attributes. A hard negative has the category and every
    kept attribute but is not relevant.
    """

    target: Relevance
    """Coarse, Fine and graded matching against the target labels (see `target_labels`)."""
    q_category: np.ndarray
    q_required: np.ndarray
    q_required_count: np.ndarray
    q_kept: np.ndarray
    q_kept_count: np.ndarray
    q_forbidden: np.ndarray
    q_by_labels: np.ndarray
    q_reference: np.ndarray
    explicit_keys: np.ndarray
    """Sorted `query * item_codes + item code` of every explicit target."""
    item_codes: int
    c_category: np.ndarray
    c_attrs: np.ndarray
    c_item: np.ndarray
    c_relevant: np.ndarray

    @classmethod
    def build(
        cls,
        queries: ComposedQueries,
        corpus: SplitLabels,
        gallery_rows: int,
        excluded: np.ndarray | None = None,
    ) -> ComposedRelevance:
        """Encode labels; corpus rows at index >= `gallery_rows` are noise (never relevant)."""
        labels = queries.labels
        refs = [labels.attribute_set(i) for i in range(len(queries))]
        kept = [kept_attributes(a, c) for a, c in zip(refs, queries.changes, strict=True)]
        wanted = [target_attributes(a, c) for a, c in zip(refs, queries.changes, strict=True)]
        forbidden = [frozenset(c.source for c in changes if c.source) for changes in queries.changes]
        vocab = {v: i for i, v in enumerate(sorted(set().union(*wanted, *forbidden)))}
        words = max(1, -(-len(vocab) // WORD))
        categories = {v: i for i, v in enumerate(sorted(set(labels.category)))}
        items = {v: i for i, v in enumerate(sorted(set(labels.item_id).union(*queries.target_ids)))}
        noise = len(corpus) - gallery_rows
        gallery = range(gallery_rows)
        c_attrs = bitsets([corpus.attribute_set(i) for i in gallery], vocab, words)
        keys = [q * len(items) + items[t] for q, ids in enumerate(queries.target_ids) for t in ids]
        relevant = np.zeros(len(corpus), dtype=bool)
        relevant[:gallery_rows] = True
        if excluded is not None:
            relevant &= ~excluded
        return cls(
            target=Relevance.build(target_labels(queries), corpus, gallery_rows, excluded),
            q_category=codes(labels.category, categories),
            q_required=bitsets(wanted, vocab, words),
            q_required_count=np.array([len(s) for s in wanted], dtype=np.int64),
            q_kept=bitsets(kept, vocab, words),
            q_kept_count=np.array([len(s) for s in kept], dtype=np.int64),
            q_forbidden=bitsets(forbidden, vocab, words),
            q_by_labels=np.array([bool(c) for c in queries.changes], dtype=bool),
            q_reference=codes(labels.item_id, items),
            explicit_keys=np.unique(np.asarray(keys, dtype=np.int64)),
            item_codes=len(items),
            c_category=np.concatenate(
                [codes(corpus.category[:gallery_rows], categories, missing=-2), np.full(noise, -2, np.int64)]
            ),
            c_attrs=np.concatenate([c_attrs, np.zeros((noise, words), dtype=np.uint64)]),
            c_item=np.concatenate([codes(corpus.item_id[:gallery_rows], items, missing=-1), np.full(noise, -1)]),
            c_relevant=relevant,
        )

    @property
    def num_queries(self) -> int:
        """Number of queries."""
        return len(self.q_category)

    def reference_rows(self) -> list[np.ndarray]:
        """Per query, the corpus rows of its reference item (removed from its ranking)."""
        order = np.argsort(self.c_item, kind="stable")
        sorted_items = self.c_item[order]
        lo = np.searchsorted(sorted_items, self.q_reference, side="left")
        hi = np.searchsorted(sorted_items, self.q_reference, side="right")
        return [np.sort(order[a:b]) for a, b in zip(lo, hi, strict=True)]

    def _match(self, queries: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(relevant, hard negative) flags of corpus `rows` (Qb, K; -1 = empty slot) for the `queries` (Qb,)."""
        valid = rows >= 0
        safe = np.where(valid, rows, 0)
        ok = valid & self.c_relevant[safe]
        item = self.c_item[safe]
        ok &= item != self.q_reference[queries, None]
        attrs = self.c_attrs[safe]
        same = self.c_category[safe] == self.q_category[queries, None]
        kept = popcount_and(self.q_kept[queries, None, :], attrs) == self.q_kept_count[queries, None]
        has_all = popcount_and(self.q_required[queries, None, :], attrs) == self.q_required_count[queries, None]
        has_none = popcount_and(self.q_forbidden[queries, None, :], attrs) == 0
        by_labels = self.q_by_labels[queries, None] & same
        explicit = (item >= 0) & np.isin(queries[:, None] * self.item_codes + item, self.explicit_keys)
        relevant = ok & ((by_labels & has_all & has_none) | explicit)
        hard = ok & by_labels & kept & ~relevant
        return relevant, hard

    def flags(self, topk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Q, K) relevant and hard-negative flags of a ranking."""
        return self._match(np.arange(self.num_queries), topk)

    def explicit(self, topk: np.ndarray) -> np.ndarray:
        """(Q, K) bool: the item is one of the query's explicit targets (`target_ids`)."""
        item = self.c_item[np.where(topk >= 0, topk, 0)]
        hit = np.isin(np.arange(self.num_queries)[:, None] * self.item_codes + item, self.explicit_keys)
        return (topk >= 0) & (item >= 0) & hit & self.c_relevant[np.where(topk >= 0, topk, 0)]

    def relevant_counts(self, block: int = 64) -> np.ndarray:
        """(Q,) how many corpus items are relevant to each query (the mAP denominator's |R_q|)."""
        rows = np.flatnonzero(self.c_relevant)
        out = np.zeros(self.num_queries, dtype=np.int64)
        for start in range(0, self.num_queries, block):
            queries = np.arange(start, min(start + block, self.num_queries))
            relevant, _ = self._match(queries, np.broadcast_to(rows, (len(queries), len(rows))))
            out[queries] = relevant.sum(axis=1)
        return out
