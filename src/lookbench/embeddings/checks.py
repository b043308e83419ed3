"""Validation and normalisation of embedding matrices."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Literal

import numpy as np

from lookbench.errors import EmbeddingError

BLOCK_ROWS = 4096
"""Rows checked and normalised at a time: one pass over the input, working set in cache."""
_SAFE = (2.0**-60, 2.0**60)
"""Rows whose norm lies outside this range are scaled by a power of two before the division (exact, so the result
is the same as for the row at a normal scale)."""


def check_embeddings(
    array: np.ndarray,
    rows: int,
    where: str,
    dim: int | None = None,
    ignore_rows: Collection[int] = (),
    in_place: bool = False,
) -> np.ndarray:
    """Check shape and values of an embedding matrix and return it L2-normalised as a read-only float32 array.

    Only NaN, infinite and all-zero rows are errors: any finite non-zero row normalises, whatever its scale. Each
    row is divided by its norm, summed in float64: the result is the same for any positive scale of the row
    (powers of two exactly) and never overflows. `ignore_rows` (skipped images) are not checked and become the
    unit vector (1, 0, ..., 0). `in_place`: the caller owns `array` and it may be normalised where it is (when it is
    a writable C-contiguous float32 array), which saves a copy of the largest split.
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
    if array.shape[1] == 0:
        raise EmbeddingError(f"{where}: embeddings have dimension 0")
    ignored = np.zeros(rows, dtype=bool)
    ignored[np.asarray(list(ignore_rows), dtype=np.int64)] = True
    reuse = in_place and array.dtype == np.float32 and array.flags.c_contiguous and array.flags.writeable
    out = array if reuse else np.empty(array.shape, dtype=np.float32)
    bad: list[np.ndarray] = []
    zero: list[np.ndarray] = []
    for start in range(0, rows, BLOCK_ROWS):
        stop = min(start + BLOCK_ROWS, rows)
        block = out[start:stop]
        _load(array[start:stop], block)
        skip = ignored[start:stop]
        if skip.any():
            block[skip] = 0.0
            block[skip, 0] = 1.0
        norms = _normalise(block)
        bad.append(start + np.flatnonzero(~np.isfinite(norms)))
        zero.append(start + np.flatnonzero(norms == 0))
    _raise(where, "NaN or infinite values", np.concatenate(bad))
    _raise(where, "zero vector(s)", np.concatenate(zero))
    _freeze(out)
    return out


def _freeze(array: np.ndarray) -> None:
    """Make `array` and the arrays it views read-only: the search then remembers its norms (`is_immutable`)."""
    view: object = array
    while isinstance(view, np.ndarray):
        view.flags.writeable = False
        view = view.base


def _load(source: np.ndarray, block: np.ndarray) -> None:
    """Copy `source` rows into the float32 `block`; float64 rows are first scaled by a power of two (exact), so
    huge but finite values survive the cast."""
    if source.dtype.itemsize <= 4:
        if source is not block and not np.shares_memory(source, block):
            block[...] = source
        return
    wide = np.asarray(source, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        peak = np.maximum(wide.max(axis=1), -wide.min(axis=1))
    block[...] = np.ldexp(wide, -_exponent(peak)[:, None])


def _exponent(peak: np.ndarray) -> np.ndarray:
    """e with peak = m * 2**e (0.5 <= m < 1) for finite, non-zero peaks; 0 elsewhere (scaling by 2**-e is exact)."""
    usable = np.isfinite(peak) & (peak > 0)
    return np.where(usable, np.frexp(np.where(usable, peak, 1.0))[1], 0)


def _normalise(block: np.ndarray) -> np.ndarray:
    """Divide each float32 row by its norm and return the norms (float64: squares of float32 values cannot
    overflow or underflow there). Rows that are zero or not finite are left alone; their norm says which."""
    norms = np.sqrt(np.einsum("ij,ij->i", block, block, dtype=np.float64))
    usable = np.isfinite(norms) & (norms > 0)
    odd = np.flatnonzero(usable & ((norms < _SAFE[0]) | (norms > _SAFE[1])))
    if len(odd):  # a norm float32 cannot hold, or a subnormal one: bring the row near 1 first
        scaled = np.ldexp(block[odd], -_exponent(norms[odd])[:, None])
        block[odd] = scaled
        norms[odd] = np.sqrt(np.einsum("ij,ij->i", scaled, scaled, dtype=np.float64))
    np.divide(block, np.where(usable, norms, 1.0).astype(np.float32)[:, None], out=block)
    return norms


def _raise(where: str, problem: str, rows: np.ndarray) -> None:
    if len(rows):
        raise EmbeddingError(f"{where}: {problem} in row(s) {_rows(rows)}")


def _rows(indices: np.ndarray, limit: int = 10) -> str:
    shown = ", ".join(str(int(i)) for i in indices[:limit])
    more = f" and {len(indices) - limit} more" if len(indices) > limit else ""
    return shown + more


def load_npy(path: Path, mmap_mode: Literal["r"] | None = None) -> np.ndarray:
    """The array of a `.npy` file; bytes that are not one (an `.npz` archive among them) raise an EmbeddingError."""
    try:
        loaded = np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except Exception as exc:  # numpy raises many kinds on bytes that are no array
        raise EmbeddingError(f"{path}: not a readable .npy file ({exc})") from exc
    if not isinstance(loaded, np.ndarray):  # np.load opens whatever the bytes are: an .npz gives an archive
        loaded.close()
        raise EmbeddingError(f"{path}: an .npz archive, not a .npy array")
    return loaded
