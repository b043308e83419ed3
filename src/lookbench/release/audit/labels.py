"""The label-rule consistency check: does the fine-match rule let a perfect labeller find every query's match, and
does any distractor carry a query's labels (then a perfect labeller ties with it)?"""

from __future__ import annotations

import numpy as np

from lookbench.metrics.relevance import WORD, bitsets
from lookbench.results.audit_schema import LabelConsistency
from lookbench.snapshot.labels import SplitLabels


def _carries_all(queries: SplitLabels, rows: SplitLabels) -> np.ndarray:
    """(Q,) True where some row has the query's category and every attribute of the query."""
    q_sets = [queries.attribute_set(i) for i in range(len(queries))]
    vocab = {a: i for i, a in enumerate(sorted(set().union(*q_sets)))}
    words = -(-len(vocab) // WORD)
    q_bits = bitsets(q_sets, vocab, words)
    r_bits = bitsets([rows.attribute_set(i) for i in range(len(rows))], vocab, words)
    q_cat = np.asarray(queries.category, dtype=object)
    r_cat = np.asarray(rows.category, dtype=object)
    out = np.zeros(len(queries), dtype=bool)
    for category in set(q_cat.tolist()):
        qs = np.flatnonzero(q_cat == category)
        candidates = r_bits[r_cat == category]
        for start in range(0, len(qs), 64):
            block = qs[start : start + 64]
            missing = q_bits[block, None, :] & ~candidates[None, :, :]
            out[block] = (missing == 0).all(axis=2).any(axis=1)
    return out


def label_consistency(queries: SplitLabels, gallery: SplitLabels, noise: SplitLabels | None) -> LabelConsistency:
    """One subset's check (rule `main` for the gallery ceiling; both rules for the noise carriers)."""
    keys = list(zip(queries.category, queries.main_attribute, strict=True))
    in_gallery = set(zip(gallery.category, gallery.main_attribute, strict=True))
    in_noise = set() if noise is None else set(zip(noise.category, noise.main_attribute, strict=True))
    return LabelConsistency(
        queries=len(queries),
        with_gallery_fine_match=sum(key in in_gallery for key in keys),
        noise_carries_main=sum(key in in_noise for key in keys),
        noise_carries_all=0 if noise is None else int(_carries_all(queries, noise).sum()),
    )
