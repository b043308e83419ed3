"""Exact cosine top-K on the CPU: blocked float32 matrix products, a candidate pool, exact rescoring."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from itertools import islice
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from lookbench._util.cores import usable_cores
from lookbench.search.backend import MAX_K, CheckedSearch, Corpus, SearchResult, max_row_norm
from lookbench.search.candidates import CandidatePool, merged_result, score_margin

__all__ = ["MAX_K", "ExactSearch"]

MAX_WORKERS = 8
"""Threads scanning corpus blocks at most."""


class ExactSearch(CheckedSearch):
    """The reference backend: every score is computed, and results do not depend on the BLAS library or blocking.

    Each (query block, corpus block) product feeds a `CandidatePool`, which keeps the rows whose float32 score is
    within the rounding margin of the running K-th best; the survivors are ranked by exact score (float64
    accumulation, see `lookbench.search.candidates`), ties by `lookbench.search.ties`. Memory is bounded by
    `query_block * corpus_block` scores plus a few candidates per query, whatever the corpus size.

    With several cores, `workers` threads each scan every n-th corpus block (of `corpus_block / workers` rows) into
    their own pool, with the BLAS library's threads shared out among them (one each on up to `MAX_WORKERS` cores):
    one thread per product spends no CPU waiting for a partner thread, which on a busy machine cost a quarter of the
    products' CPU time. The pools' candidates are ranked together, so the result is the one-pool result.
    """

    name = "exact"
    exact = True

    def __init__(self, query_block: int = 1024, corpus_block: int = 4096, workers: int | None = None) -> None:
        self.query_block = query_block
        self.corpus_block = corpus_block
        self.workers = workers

    def describe(self) -> dict[str, Any]:
        """Backend name (its results do not depend on the block sizes or the threads)."""
        return {"backend": self.name}

    def _search(
        self, q: np.ndarray, rows: Corpus, k: int, exclude: np.ndarray | None, q_ties: np.ndarray
    ) -> SearchResult:
        margin = score_margin(rows.dim, max_row_norm(q), rows.max_norm())
        cores = usable_cores()
        blocks = sum(-(-len(part) // self.corpus_block) for part in rows.parts)
        workers = max(1, min(self.workers or min(cores, MAX_WORKERS), blocks))
        size = -(-self.corpus_block // workers)  # the workers' score blocks together hold query x corpus block
        indices = np.full((len(q), k), -1, dtype=np.int64)
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        limits = threadpool_limits(max(1, cores // workers), user_api="blas") if workers > 1 else nullcontext()
        with limits, ThreadPoolExecutor(workers) as threads:
            for qs in range(0, len(q), self.query_block):
                block, ties = q[qs : qs + self.query_block], q_ties[qs : qs + self.query_block]
                scans = [
                    threads.submit(self._scan, block, ties, rows, k, margin, exclude, size, w, workers)
                    for w in range(workers)
                ]
                found = merged_result([scan.result() for scan in scans])
                indices[qs : qs + len(block)] = found.indices
                scores[qs : qs + len(block)] = found.scores
        return SearchResult(indices=indices, scores=scores)

    def _scan(
        self,
        block: np.ndarray,
        ties: np.ndarray,
        rows: Corpus,
        k: int,
        margin: float,
        exclude: np.ndarray | None,
        size: int,
        worker: int,
        workers: int,
    ) -> CandidatePool:
        """The candidates of `block`'s queries among the corpus blocks of `size` rows worker, worker + workers, ..."""
        pool = CandidatePool(block, ties, rows, k, margin)
        for offset, part in islice(rows.blocks(size), worker, None, workers):
            product = block @ part.T
            if exclude is not None:
                blocked = exclude[offset : offset + len(part)]
                if blocked.any():
                    product[:, blocked] = -np.inf
            pool.offer(product, offset)
        return pool
