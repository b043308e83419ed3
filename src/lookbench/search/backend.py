"""The Protocol a search backend implements, its result type, and the corpus it searches."""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from lookbench._util.limits import MAX_K
from lookbench.search.ties import pair_order

Parts = np.ndarray | Sequence[np.ndarray]
"""One (rows, dim) array, or several whose rows follow each other (a gallery, then the shared noise pool)."""


@dataclass(frozen=True)
class SearchResult:
    """Top-K corpus rows per query: `indices` (Q, K) int64 and `scores` (Q, K) float32, best first."""

    indices: np.ndarray
    scores: np.ndarray


class Corpus:
    """Corpus rows kept in their parts, never concatenated: a noise pool shared by every subset stays one copy.

    `ties` (one uint64 key per row, see `lookbench.search.ties`) orders rows of equal score with each query's own
    key; without it the lower row wins.
    """

    def __init__(self, parts: Parts, ties: np.ndarray | None = None) -> None:
        arrays = [parts] if isinstance(parts, np.ndarray) else list(parts)
        if not arrays or any(a.ndim != 2 for a in arrays) or len({a.shape[1] for a in arrays}) != 1:
            raise ValueError(f"corpus parts must be 2-d arrays of one dimension, got {[a.shape for a in arrays]}")
        self.parts = arrays
        self.offsets = np.cumsum([0] + [len(a) for a in arrays])
        if ties is not None and ties.shape != (len(self),):
            raise ValueError(f"corpus tie keys must hold one key per row ({len(self)}), got shape {ties.shape}")
        self.ties = ties

    @classmethod
    def of(cls, corpus: CorpusLike) -> Corpus:
        """Wrap an array or a sequence of arrays (a Corpus passes through)."""
        return corpus if isinstance(corpus, Corpus) else cls(corpus)

    def tie_order(self, rows: np.ndarray, query_ties: np.ndarray) -> np.ndarray:
        """The sort keys that break ties among `rows` (global row numbers, each >= 0) for the queries whose tie keys
        `query_ties` holds, pair by pair: lower wins."""
        return rows if self.ties is None else pair_order(query_ties, self.ties[rows])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.parts[0].shape[1])

    def blocks(self, size: int) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, float32 rows) blocks of at most `size` rows; a block never spans two parts."""
        for offset, part in zip(self.offsets, self.parts, strict=False):
            for start in range(0, len(part), size):
                yield int(offset) + start, np.ascontiguousarray(part[start : start + size], dtype=np.float32)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of global row numbers `rows`, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(self.parts) == 1:
            return np.asarray(self.parts[0][rows], dtype=np.float32)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        which = np.searchsorted(self.offsets, rows, side="right") - 1
        for p, part in enumerate(self.parts):
            sel = np.flatnonzero(which == p)
            if len(sel):
                out[sel] = part[rows[sel] - self.offsets[p]]
        return out

    def max_norm(self) -> float:
        """The largest row norm (about 1 for L2-normalised vectors); bounds the rounding error of every score."""
        return max((max_row_norm(part) for part in self.parts), default=0.0)


CorpusLike = Parts | Corpus
"""What a backend searches: the parts as arrays (ties to the lower row), or a `Corpus` with its tie keys."""


_NORMS: dict[int, tuple[weakref.ref[np.ndarray], float]] = {}


def max_row_norm(array: np.ndarray, block: int = 16384) -> float:
    """The largest L2 norm of the rows of `array` (0 when empty), read in blocks.

    Remembered for read-only arrays (which cannot change under us), so the noise pool searched once per subset
    is measured once.
    """
    key = id(array)
    if key in _NORMS and _NORMS[key][0]() is array:
        return _NORMS[key][1]
    best = 0.0
    for start in range(0, len(array), block):
        rows = np.asarray(array[start : start + block], dtype=np.float32)
        squares = float(np.einsum("ij,ij->i", rows, rows, dtype=np.float64).max())
        if not np.isfinite(squares):  # NaN or infinity: the caller refuses it
            return float("nan")
        best = max(best, squares)
    norm = float(np.sqrt(best))
    if is_immutable(array):
        for stale in [k for k, (ref, _) in _NORMS.items() if ref() is None]:
            del _NORMS[stale]
        _NORMS[key] = (weakref.ref(array), norm)
    return norm


def is_immutable(array: np.ndarray) -> bool:
    """Read-only, and not a view of a writable array."""
    base = array.base
    return not array.flags.writeable and not (isinstance(base, np.ndarray) and base.flags.writeable)


def no_result(queries: int, k: int) -> SearchResult:
    """Every slot empty: -1 rows, -inf scores (no queries, or an empty corpus)."""
    return SearchResult(np.full((queries, k), -1, dtype=np.int64), np.full((queries, k), -np.inf, dtype=np.float32))


def search_inputs(
    queries: np.ndarray, corpus: CorpusLike, k: int, query_ties: np.ndarray | None
) -> tuple[np.ndarray, Corpus, np.ndarray]:
    """Every backend's argument checks: float32 contiguous queries, the corpus in its parts, the queries' tie keys
    (zeros when not given)."""
    rows = Corpus.of(corpus)
    if not 1 <= k <= MAX_K:
        raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
    if queries.ndim != 2 or queries.shape[1] != rows.dim:
        raise ValueError(f"shape mismatch: queries {queries.shape}, corpus dim {rows.dim}")
    if query_ties is not None and query_ties.shape != (len(queries),):
        raise ValueError(f"query tie keys must hold one key per query ({len(queries)}), got {query_ties.shape}")
    keys = np.zeros(len(queries), dtype=np.uint64) if query_ties is None else query_ties.astype(np.uint64)
    return np.ascontiguousarray(queries, dtype=np.float32), rows, keys


@runtime_checkable
class SearchBackend(Protocol):
    """Finds the K corpus rows with the highest cosine similarity to each query."""

    name: str
    exact: bool
    """True when results equal `ExactSearch`'s row for row; approximate backends get their recall measured."""

    def search(
        self,
        queries: np.ndarray,
        corpus: CorpusLike,
        k: int,
        exclude: np.ndarray | None = None,
        query_ties: np.ndarray | None = None,
    ) -> SearchResult:
        """Rank `corpus` rows for each row of `queries` (both L2-normalised); `exclude` marks rows never returned,
        `query_ties` (a key per query) orders each query's ties with the corpus's tie keys."""
        ...

    def describe(self) -> dict[str, Any]:
        """Backend name and the settings that change its results, for the result file."""
        ...


class CheckedSearch:
    """The shared front of the backends: argument checks and empty inputs, then `_search` on float32 queries and
    the corpus in its parts."""

    name: str
    exact: bool

    def search(
        self,
        queries: np.ndarray,
        corpus: CorpusLike,
        k: int,
        exclude: np.ndarray | None = None,
        query_ties: np.ndarray | None = None,
    ) -> SearchResult:
        """Top-K rows of `corpus` for each query, best first; -1 / -inf pad queries with fewer than K rows."""
        q, rows, q_ties = search_inputs(queries, corpus, k, query_ties)
        if len(q) == 0 or len(rows) == 0:
            return no_result(len(q), k)
        return self._search(q, rows, k, exclude, q_ties)

    def _search(
        self, q: np.ndarray, rows: Corpus, k: int, exclude: np.ndarray | None, q_ties: np.ndarray
    ) -> SearchResult:
        """The backend's own search, on at least one query and one corpus row."""
        raise NotImplementedError
