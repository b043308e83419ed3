"""Validation and normalisation of embedding matrices."""

from __future__ import annotations

import numpy as np

from lookbench.errors import EmbeddingError


def check_embeddings(array: np.ndarray, rows: int, where: str, dim: int | None = None) -> np.ndarray:
    """Check shape and values of an embedding matrix and return it L2-normalised as float32.

    Only NaN, infinite and all-zero rows are errors: any finite non-zero row normalises, whatever its scale.
    """
    if array.ndim != 2:
        raise EmbeddingError(f"{where}: expected a 2-d array (rows, dim), got shape {array.shape}")
    if array.shape[0] != rows:
        raise EmbeddingError(f"{where}: {array.shape[0]} rows of embeddings for {rows} parquet rows")
    if dim is not None and array.shape[1] != dim:
        raise EmbeddingError(f"{where}: dimension {array.shape[1]} does not match {dim} of the other splits")
    if array.dtype == np.bool_ or not (
        np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
    ):
        raise EmbeddingError(f"{where}: embeddings must be real numbers, got {array.dtype}")
    # work in the input's own precision (at least float32) so that huge or tiny finite values survive
    work = np.asarray(array, dtype=np.result_type(array.dtype, np.float32))
    finite = np.isfinite(work).all(axis=1)
    if not finite.all():
        raise EmbeddingError(f"{where}: NaN or infinite values in row(s) {_rows(np.flatnonzero(~finite))}")
    largest = np.abs(work).max(axis=1, initial=0.0)
    zero = largest == 0
    if zero.any():
        raise EmbeddingError(f"{where}: zero vector(s) in row(s) {_rows(np.flatnonzero(zero))}")
    # scaling each row by a power of two near its largest magnitude is exact, and keeps the squared norm from
    # overflowing or underflowing; ordinary vectors normalise bit for bit as without it
    _, exponent = np.frexp(largest)
    scaled = np.ldexp(work, -exponent[:, None])
    scaled /= np.linalg.norm(scaled, axis=1)[:, None]
    return np.ascontiguousarray(scaled, dtype=np.float32)


def _rows(indices: np.ndarray, limit: int = 10) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:limit])
    more = f" and {len(indices) - limit} more" if len(indices) > limit else ""
    return shown + more
