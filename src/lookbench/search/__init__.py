"""Nearest-neighbour search over L2-normalised embeddings."""

from lookbench.search.backend import SearchBackend, SearchResult
from lookbench.search.exact import ExactSearch

__all__ = ["ExactSearch", "SearchBackend", "SearchResult"]
