"""Models that embed images for the builder (dedup, probes, distractor mining), resolved from a model spec."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from lookbench.errors import LookBenchError, ReleaseError


@runtime_checkable
class ImageEmbedder(Protocol):
    """A provider that embeds encoded images directly (the model providers of `resolve_model`)."""

    spec: str

    def embed_images(self, images: Sequence[bytes]) -> np.ndarray:
        """A (len(images), dim) array, one row per image."""
        ...


def image_embedder(spec: str, setting: str) -> ImageEmbedder:
    """The model of a config setting, loaded now; ReleaseError naming the setting if it cannot embed images."""
    from lookbench.models.embed_options import EmbedOptions
    from lookbench.models.registry import resolve_model

    try:
        provider = resolve_model(spec, EmbedOptions(progress=False))
    except (LookBenchError, ImportError, OSError) as exc:
        raise ReleaseError(f"{setting} {spec!r} cannot be loaded: {exc}") from exc
    if not isinstance(provider, ImageEmbedder):
        raise ReleaseError(f"{setting} {spec!r} cannot embed images (it reads precomputed embeddings)")
    return provider


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)
