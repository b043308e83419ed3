"""Nearest-neighbour search over L2-normalised embeddings."""

from lookbench.search.backend import Corpus, SearchBackend, SearchResult
from lookbench.search.exact import ExactSearch
from lookbench.search.select import SEARCH_CHOICES, make_backend

__all__ = ["SEARCH_CHOICES", "Corpus", "ExactSearch", "SearchBackend", "SearchResult", "make_backend"]
