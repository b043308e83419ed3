"""Arrow arrays from numpy arrays and Python strings and back, built from buffers.

`pyarrow.array` and `Array.to_numpy` import pandas whenever it is installed (pyarrow's pandas shim checks for
pandas-typed input and output): 0.9 s of CPU per process, more than every metric of a real-scale eval together.
These helpers build and read the same arrays from their buffers and never touch that shim.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa


def _bitmap(flags: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.packbits(flags, bitorder="little"))


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-D numeric or boolean numpy array as an Arrow array of the same type (no nulls)."""
    if values.ndim != 1:
        raise ValueError(f"expected a 1-D array, got shape {values.shape}")
    if values.dtype == np.bool_:
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, _bitmap(values)])
    if values.dtype.kind not in "iuf":
        raise TypeError(f"expected a numeric or boolean array, got {values.dtype}")
    native = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))
    return pa.Array.from_buffers(pa.from_numpy_dtype(native.dtype), len(native), [None, pa.py_buffer(native)])


def timestamps(values: np.ndarray, tz: str | None = None) -> pa.Array:
    """datetime64 values as Arrow microsecond timestamps (in `tz`), NaT as null."""
    micros = np.ascontiguousarray(values.astype("datetime64[us]").view(np.int64))
    valid = ~np.isnat(values)
    bitmap = None if valid.all() else _bitmap(valid)
    return pa.Array.from_buffers(
        pa.timestamp("us", tz=tz), len(micros), [bitmap, pa.py_buffer(micros)], null_count=int((~valid).sum())
    )


def strings(values: Sequence[str | None]) -> pa.Array:
    """Python strings (None as null) as an Arrow string array."""
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError("strings over 2 GiB in total need a large_string array")
    nulls = np.fromiter((v is None for v in values), dtype=bool, count=len(encoded))
    bitmap = _bitmap(~nulls) if nulls.any() else None
    buffers = [bitmap, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers, null_count=int(nulls.sum()))


def rows_of(table: pa.Table, mask: np.ndarray) -> pa.Table:
    """The rows `mask` marks, in order; a contiguous run is sliced, sparing the import of pyarrow.compute that
    `Table.filter` costs (a run's per-query table holds each subset's rows together)."""
    rows = np.flatnonzero(mask)
    if len(rows) and rows[-1] - rows[0] + 1 == len(rows):
        return table.slice(int(rows[0]), len(rows))
    return table.filter(from_numpy(mask))


def _flags(buffer: pa.Buffer | None, start: int, n: int) -> np.ndarray:
    bits = np.zeros(0, np.uint8) if buffer is None else np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(bits, count=start + n, bitorder="little")[start:].astype(bool)


def _combined(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def to_numpy(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow column without nulls as a numpy array (a copy)."""
    array = _combined(column)
    if array.null_count:
        raise ValueError(f"{array.null_count} null value(s) in a column read as numbers")
    start, n = array.offset, len(array)
    data = array.buffers()[1]
    if pa.types.is_boolean(array.type):
        return _flags(data, start, n)
    if not (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)):
        raise TypeError(f"expected a numeric or boolean column, got {array.type}")
    dtype = np.dtype(array.type.to_pandas_dtype())
    if data is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=start + n)[start:].copy()


def to_datetimes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A timestamp column as datetime64[us] (its UTC instants), null as NaT."""
    array = _combined(column)
    if not pa.types.is_timestamp(array.type):
        raise TypeError(f"expected a timestamp column, got {array.type}")
    if array.type.unit != "us":
        array = array.cast(pa.timestamp("us", tz=array.type.tz))
    start, n = array.offset, len(array)
    validity, data = array.buffers()[:2]
    micros = np.zeros(n, np.int64) if data is None else np.frombuffer(data, np.int64, count=start + n)[start:]
    out = micros.astype("datetime64[us]")
    if array.null_count:
        out[~_flags(validity, start, n)] = np.datetime64("NaT")
    return out
