"""Exact cosine top-K on the CPU: blocked float32 matrix products, a candidate pool, exact rescoring."""

from __future__ import annotations

from typing import Any

import numpy as np

from lookbench.search.backend import MAX_K, CheckedSearch, Corpus, SearchResult, max_row_norm
from lookbench.search.candidates import CandidatePool, score_margin

__all__ = ["MAX_K", "ExactSearch"]


class ExactSearch(CheckedSearch):
    """The reference backend: every score is computed, and results do not depend on the BLAS library or blocking.

    Each (query block, corpus block) product feeds a `CandidatePool`, which keeps the rows whose float32 score is
    within the rounding margin of the running K-th best; the survivors are ranked by exact score (float64
    accumulation, see `lookbench.search.candidates`), ties to the lower corpus row. Memory is bounded by
    `query_block * corpus_block` scores plus a few candidates per query, whatever the corpus size.
    """

    name = "exact"
    exact = True

    def __init__(self, query_block: int = 1024, corpus_block: int = 8192) -> None:
        self.query_block = query_block
        self.corpus_block = corpus_block

    def describe(self) -> dict[str, Any]:
        """Backend name (its results do not depend on the block sizes)."""
        return {"backend": self.name}

    def _search(self, q: np.ndarray, rows: Corpus, k: int, exclude: np.ndarray | None) -> SearchResult:
        margin = score_margin(rows.dim, max_row_norm(q), rows.max_norm())
        indices = np.full((len(q), k), -1, dtype=np.int64)
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        for qs in range(0, len(q), self.query_block):
            block = q[qs : qs + self.query_block]
            pool = CandidatePool(block, rows, k, margin)
            for offset, part in rows.blocks(self.corpus_block):
                product = block @ part.T
                if exclude is not None:
                    blocked = exclude[offset : offset + len(part)]
                    if blocked.any():
                        product[:, blocked] = -np.inf
                pool.offer(product, offset)
            found = pool.result()
            indices[qs : qs + len(block)] = found.indices
            scores[qs : qs + len(block)] = found.scores
        return SearchResult(indices=indices, scores=scores)
