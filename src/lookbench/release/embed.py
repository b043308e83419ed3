"""Embed a batch of work-table images with any provider, by writing them as a one-split snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.models.registry import resolve_model
from lookbench.release.features import SPEC, ColourGradientFeatures
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.writer import image_value, rows_to_table, write_split

SUBSET = "real_studio_flat"


def provider_for(spec: str) -> EmbeddingProvider:
    """The built-in `features:colour-gradient`, or whatever `resolve_model` makes of the spec."""
    return ColourGradientFeatures() if spec == SPEC else resolve_model(spec)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def embed_images(provider: EmbeddingProvider, images: list[bytes], folder: Path) -> np.ndarray:
    """A (len(images), dim) array, via a throw-away snapshot under `folder`."""
    if not images:
        return np.zeros((0, 0))
    rows: list[dict[str, Any]] = [
        {
            "image": image_value(data),
            "raw_image": None,
            "category": "unknown",
            "main_attribute": "",
            "other_attributes": [],
            "bbox": None,
            "item_ID": str(i),
            "task": "embed",
            "difficulty": "",
        }
        for i, data in enumerate(images)
    ]
    root = folder / "v00000000"
    write_split(rows_to_table(rows), root / SUBSET / "query.parquet")
    write_split(rows_to_table(rows), root / SUBSET / "gallery.parquet")
    return np.asarray(provider.embed_split(open_snapshot(root, verify=False), SUBSET, "gallery"))
