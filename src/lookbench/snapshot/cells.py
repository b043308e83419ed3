"""Reading parquet cells: one error naming the file for any read failure, and list-valued cells."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench._util.jsontext import loads
from lookbench.errors import SnapshotError


@contextlib.contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn any failure to read a parquet file into a SnapshotError naming the file."""
    try:
        yield
    except (pa.ArrowException, OSError) as exc:
        raise SnapshotError(f"{path}: not a readable parquet file ({type(exc).__name__}: {exc})") from exc


def list_cell(path: Path, row: int, column: str, value: Any, what: str = "a list") -> list[Any]:
    """A list-valued cell: null reads as empty and a string holding a JSON list is accepted."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = loads(text)
        except ValueError:
            value = None
        if not isinstance(value, list):
            raise SnapshotError(f"{path}: row {row}: {column} must be {what}, got text {text[:80]!r}")
    if not isinstance(value, list):
        raise SnapshotError(f"{path}: row {row}: {column} must be {what}, got {type(value).__name__}")
    return value
