"""The Protocol every model adapter implements: a batch of inputs in, one vector per input out."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from lookbench.embeddings.mapper import Preprocess

InputKind = Literal["tensor", "image", "bytes"]
"""What `encode` receives: an NCHW float32 array made by `preprocess`, a list of RGB PIL images, or encoded bytes."""


@runtime_checkable
class Encoder(Protocol):
    """A loaded model. `model_id` + `revision` + the preprocessing fingerprint key the embedding cache."""

    model_id: str
    revision: str
    input_kind: InputKind
    preprocess: Preprocess | None

    def encode(self, batch: Any) -> np.ndarray:
        """Return a (len(batch), dim) float array."""
        ...

    def describe(self) -> dict[str, Any]:
        """Metadata for result files (architecture, weights source, output used...)."""
        ...
