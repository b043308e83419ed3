"""The Protocol a search backend implements, and its result type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class SearchResult:
    """Top-K corpus rows per query: `indices` (Q, K) int64 and `scores` (Q, K) float32, best first."""

    indices: np.ndarray
    scores: np.ndarray


@runtime_checkable
class SearchBackend(Protocol):
    """Finds the K corpus rows with the highest cosine similarity to each query."""

    name: str

    def search(
        self, queries: np.ndarray, corpus: np.ndarray, k: int, exclude: np.ndarray | None = None
    ) -> SearchResult:
        """Rank `corpus` rows for each row of `queries` (both L2-normalised); `exclude` marks rows never returned."""
        ...
