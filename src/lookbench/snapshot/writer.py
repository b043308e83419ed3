"""Write snapshot splits as parquet in the released layout, loadable by `datasets` as images."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.atomic import atomic_path
from lookbench.errors import SnapshotError
from lookbench.snapshot.features import huggingface_metadata
from lookbench.snapshot.schema import OPTIONAL_COLUMNS, REQUIRED_COLUMNS


def image_value(data: bytes | None, path: str | None = None) -> dict[str, Any] | None:
    """A Hugging Face Image struct value; None for a missing image."""
    return None if data is None else {"bytes": data, "path": path}


def rows_to_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Build a split table from row dicts; known columns get their contract types, extras are inferred."""
    if not rows:
        raise SnapshotError("cannot write an empty split")
    names: list[str] = []
    for row in rows:
        names.extend(k for k in row if k not in names)
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        raise SnapshotError(f"rows lack required column(s): {', '.join(missing)}")
    known = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}
    arrays = []
    fields = []
    for name in names:
        values = [row.get(name) for row in rows]
        dtype = known.get(name)
        try:
            array = pa.array(values, type=dtype) if dtype is not None else pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise SnapshotError(f"column {name!r}: {exc}") from exc
        arrays.append(array)
        fields.append(pa.field(name, array.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def write_split(table: pa.Table, path: Path | str, row_group_size: int = 512) -> Path:
    """Atomically write one split's table to `path` with Hugging Face feature metadata."""
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise SnapshotError(f"{path}: table lacks required column(s): {', '.join(missing)}")
    if table.num_rows == 0:
        raise SnapshotError(f"{path}: refusing to write an empty split")
    metadata = dict(table.schema.metadata or {})
    metadata[b"huggingface"] = huggingface_metadata(table.schema)
    table = table.replace_schema_metadata(metadata)
    target = Path(path)
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, row_group_size=row_group_size, compression="zstd")
    return target


class SplitWriter:
    """Stream one split to parquet, a row group per `write`; the file appears complete at `close` or not at all."""

    def __init__(self, path: Path | str, schema: pa.Schema) -> None:
        missing = [c for c in REQUIRED_COLUMNS if c not in schema.names]
        if missing:
            raise SnapshotError(f"{path}: schema lacks required column(s): {', '.join(missing)}")
        metadata = dict(schema.metadata or {})
        metadata[b"huggingface"] = huggingface_metadata(schema)
        self.schema = schema.with_metadata(metadata)
        self.path = Path(path)
        self.rows = 0
        self._context = atomic_path(self.path)
        self._writer = pq.ParquetWriter(self._context.__enter__(), self.schema, compression="zstd")

    def write(self, table: pa.Table) -> None:
        """Append `table` (cast to the split's schema) as one row group."""
        self._writer.write_table(table.cast(self.schema), row_group_size=max(1, table.num_rows))
        self.rows += table.num_rows

    def close(self) -> Path:
        """Finish the file and move it into place; an empty split is refused."""
        self._writer.close()
        if self.rows == 0:
            self._context.__exit__(SnapshotError, None, None)
            raise SnapshotError(f"{self.path}: refusing to write an empty split")
        self._context.__exit__(None, None, None)
        return self.path

    def abort(self) -> None:
        """Discard the partial file."""
        self._writer.close()
        self._context.__exit__(SnapshotError, None, None)
