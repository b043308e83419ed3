"""Validation and normalisation of embedding matrices."""

from __future__ import annotations

import numpy as np

from lookbench.errors import EmbeddingError


def check_embeddings(array: np.ndarray, rows: int, where: str, dim: int | None = None) -> np.ndarray:
    """Check shape and values of an embedding matrix and return it L2-normalised as float32."""
    if array.ndim != 2:
        raise EmbeddingError(f"{where}: expected a 2-d array (rows, dim), got shape {array.shape}")
    if array.shape[0] != rows:
        raise EmbeddingError(f"{where}: {array.shape[0]} rows of embeddings for {rows} parquet rows")
    if dim is not None and array.shape[1] != dim:
        raise EmbeddingError(f"{where}: dimension {array.shape[1]} does not match {dim} of the other splits")
    if not np.issubdtype(array.dtype, np.floating):
        raise EmbeddingError(f"{where}: embeddings must be floating point, got {array.dtype}")
    out = np.asarray(array, dtype=np.float32)
    finite = np.isfinite(out).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise EmbeddingError(f"{where}: NaN or infinite values in row(s) {_rows(bad)}")
    norms = np.linalg.norm(out, axis=1)
    zero = norms <= 1e-12
    if zero.any():
        raise EmbeddingError(f"{where}: zero vector(s) in row(s) {_rows(np.flatnonzero(zero))}")
    return np.ascontiguousarray(out / norms[:, None], dtype=np.float32)


def _rows(indices: np.ndarray, limit: int = 10) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:limit])
    more = f" and {len(indices) - limit} more" if len(indices) > limit else ""
    return shown + more
