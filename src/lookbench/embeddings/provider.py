"""The Protocol every source of embeddings implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from lookbench.snapshot.reader import Snapshot


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Supplies one embedding per parquet row of a split, in row order.

    A provider that skips undecodable images (``--on-bad-image skip``) also exposes ``skipped``:
    ``{(subset, split): {row: error message}}``; those rows hold zeros and the evaluator excludes them.
    """

    spec: str

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """Return a (rows, dim) float array for `subset/split` of `snapshot`."""
        ...

    def describe(self) -> dict[str, Any]:
        """Metadata recorded in result files: spec, revision, dimension and anything else that identifies it."""
        ...
