"""Writing an imported dataset as a lookbench snapshot: streamed splits in a staging folder, renamed into place.

The output appears only once every split, the dataset card, its README and the manifest are written; an
interrupted import leaves no half-written snapshot (only a hidden staging folder, removed on the next run).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.outfolder import refuse_unlisted
from lookbench.datasets.legacy.images import StoredImage
from lookbench.errors import DatasetImportError, SnapshotError
from lookbench.snapshot.card import CARD_NAME, DatasetCard, card_json
from lookbench.snapshot.features import huggingface_metadata
from lookbench.snapshot.manifest import write_manifest
from lookbench.snapshot.schema import OPTIONAL_COLUMNS, REQUIRED_COLUMNS
from lookbench.snapshot.writer import image_value

PROVENANCE_COLUMNS: dict[str, pa.DataType] = {
    "source": pa.string(),
    "source_file": pa.string(),
    "source_record": pa.string(),
    "license": pa.string(),
    "image_sha256": pa.string(),
}
"""Written on every row: the dataset, the image's path in the distribution, the list-file line or record that
defined the row, the licence, and the sha256 of the stored image bytes."""

BATCH_ROWS = 256


class SplitSink:
    """Rows of one split, written to parquet in batches with a fixed schema."""

    def __init__(self, path: Path, extras: Mapping[str, pa.DataType], source: str, licence: str) -> None:
        self.path = path
        self.source = source
        self.licence = licence
        known = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS, **PROVENANCE_COLUMNS}
        names = [*REQUIRED_COLUMNS, "bbox", "outfit_id", *PROVENANCE_COLUMNS, *extras]
        fields = [pa.field(n, extras[n] if n in extras else known[n]) for n in dict.fromkeys(names)]
        schema = pa.schema(fields)
        self.schema = schema.with_metadata({b"huggingface": huggingface_metadata(schema)})
        self.rows = 0
        self._batch: list[dict[str, Any]] = []
        self._writer: pq.ParquetWriter | None = None

    def add(self, image: StoredImage, record: str, source_file: str, **values: Any) -> None:
        """Append one row: its image, the `file:line` (or record) that defined it, its image's path, and columns."""
        unknown = [k for k in values if k not in self.schema.names]
        if unknown:
            raise SnapshotError(f"{self.path}: column(s) {', '.join(unknown)} not declared for this split")
        row = {
            **values,
            "image": image_value(image.data, image.name),
            "source": self.source,
            "source_file": source_file,
            "source_record": record,
            "license": self.licence,
            "image_sha256": image.sha256,
        }
        self._batch.append(row)
        if len(self._batch) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        columns = {}
        for name in self.schema.names:
            try:
                columns[name] = pa.array([row.get(name) for row in self._batch], type=self.schema.field(name).type)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                first = self._batch[0].get("source_record")
                raise SnapshotError(f"{self.path}: column {name!r} near {first}: {exc}") from exc
        table = pa.table(columns, schema=self.schema)
        if self._writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.path, self.schema, compression="zstd")
        self._writer.write_table(table, row_group_size=BATCH_ROWS)
        self.rows += len(self._batch)
        self._batch = []

    def close(self) -> int:
        """Write what is buffered and close the file; return the row count (0: no file was written)."""
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        return self.rows


class SnapshotWriter:
    """A staging folder beside `out/name` that becomes the snapshot on `finish`, or disappears on an error."""

    def __init__(self, out: Path, name: str, source: str, licence: str, overwrite: bool = False) -> None:
        self.target = out / name
        if self.target.exists() and not overwrite:
            raise DatasetImportError(f"{self.target} already exists; pass --overwrite to replace it")
        if overwrite:
            refuse_unlisted(self.target)
        self.staging = out / f".{name}.staging"
        self.source = source
        self.licence = licence
        self._sinks: dict[tuple[str, str], SplitSink] = {}
        self.counts: dict[str, dict[str, int]] = {}

    def __enter__(self) -> SnapshotWriter:
        if self.staging.exists():
            shutil.rmtree(self.staging)
        self.staging.mkdir(parents=True)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None:
            for sink in self._sinks.values():
                if sink._writer is not None:
                    sink._writer.close()
            shutil.rmtree(self.staging, ignore_errors=True)

    def split(self, subset: str, split: str, extras: Mapping[str, pa.DataType] | None = None) -> SplitSink:
        """The sink for `subset/split` (created on first use with its extra columns)."""
        key = (subset, split)
        if key not in self._sinks:
            path = self.staging / subset / f"{split}.parquet"
            self._sinks[key] = SplitSink(path, extras or {}, self.source, self.licence)
        return self._sinks[key]

    def finish(self, card: DatasetCard, readme: Callable[[DatasetCard], str]) -> Path:
        """Close every split, write the card, README and manifest, and move the snapshot into place."""
        for (subset, split), sink in self._sinks.items():
            rows = sink.close()
            if rows:
                self.counts.setdefault(subset, {})[split] = rows
        for subset, entry in card.subsets.items():
            for split in ("query", "gallery"):
                if not self.counts.get(subset, {}).get(split):
                    raise DatasetImportError(f"{card.name}: subset {subset} has no {split} rows; nothing to evaluate")
            entry.splits = dict(sorted(self.counts.get(subset, {}).items()))
        (self.staging / CARD_NAME).write_text(card_json(card), encoding="utf-8")
        (self.staging / "README.md").write_text(readme(card), encoding="utf-8")
        write_manifest(self.staging, dataset=card.name, protocol=card.protocol)
        if self.target.exists():
            old = self.target.with_name(f".{self.target.name}.replaced")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(self.target, old)
            os.replace(self.staging, self.target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.staging, self.target)
        return self.target
