"""The batch's fingerprints on disk, like the history's: a store (`search.duplicates.store`: codes, crop views)
beside a side file of what only a batch needs (its images' mirrors' pHashes and window hashes, encoded images), so
every worker of a sharded dedup maps the same bytes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from lookbench._util.atomic import atomic_folder
from lookbench._util.configfile import StrictConfig
from lookbench._util.hashing import file_sha256
from lookbench.errors import ReleaseError
from lookbench.search.duplicates.crops import WINDOWS
from lookbench.search.duplicates.hashes import to_words
from lookbench.search.duplicates.history import check_batch, stored_codes
from lookbench.search.duplicates.store import StoredCodes, open_store, read_manifest, write_store

STORE = "store"
SIDE_FILE = "side.arrow"
MANIFEST = "batch.json"
SIDE_SCHEMA = pa.schema([("phash_mirror", pa.string()), ("mirror_windows", pa.binary()), ("image", pa.binary())])


class BatchManifest(StrictConfig):
    """A batch folder: its row count and the side file's sha256 (the store checks its own files)."""

    rows: int
    side_sha256: str


@dataclass(frozen=True)
class BatchFingerprints:
    """The batch's stored fingerprints by row: codes and views, the mirrors' pHash words (n, 4) and window hashes
    (n, W; zeros for an image too flat), and encoded images."""

    stored: StoredCodes
    mirror: np.ndarray
    mirror_windows: np.ndarray
    images: pa.Array

    def __len__(self) -> int:
        return len(self.stored)

    def image(self, row: int) -> bytes:
        """The encoded image of a row (read from the mapped side file)."""
        return bytes(self.images[row].as_py())


def write_batch(
    folder: Path,
    rows: pa.Table,
    mirrors: Sequence[str],
    mirror_windows: Sequence[bytes | None],
    images: Sequence[bytes],
) -> None:
    """Write a batch folder atomically from fingerprint rows (`FINGERPRINT_SCHEMA`), their mirrors' pHashes and
    window hashes (big-endian uint64, as `windows`; None for an image too flat) and the images."""
    for batch in rows.to_batches():
        check_batch(folder, batch)
    with atomic_folder(folder) as tmp:
        write_store(tmp / STORE, [stored_codes(rows)], rows.num_rows, len(WINDOWS))
        side = pa.table(
            {"phash_mirror": list(mirrors), "mirror_windows": list(mirror_windows), "image": list(images)},
            schema=SIDE_SCHEMA,
        )
        with pa.OSFile(str(tmp / SIDE_FILE), "wb") as sink, pa.ipc.new_file(sink, SIDE_SCHEMA) as writer:
            writer.write_table(side)
        manifest = BatchManifest(rows=rows.num_rows, side_sha256=file_sha256(tmp / SIDE_FILE))
        (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n", encoding="utf-8")


def open_batch(folder: Path) -> BatchFingerprints:
    """The batch folder, memory-mapped (ReleaseError naming the file if anything is missing or differs)."""
    path = folder / MANIFEST
    manifest = read_manifest(path, BatchManifest, "batch fingerprint")
    side = folder / SIDE_FILE
    if not side.is_file() or file_sha256(side) != manifest.side_sha256:
        raise ReleaseError(f"{side}: missing or changed since it was written (sha256 differs from {path})")
    stored = open_store(folder / STORE)
    try:
        table = pa.ipc.open_file(pa.memory_map(str(side))).read_all()
    except (OSError, pa.ArrowException) as exc:
        raise ReleaseError(f"{side}: unreadable ({exc})") from exc
    if not table.schema.equals(SIDE_SCHEMA) or table.num_rows != manifest.rows or len(stored) != manifest.rows:
        raise ReleaseError(f"{side}: {table.num_rows} rows of {table.schema.names}, expected {manifest.rows}")
    mirror = to_words(table["phash_mirror"].to_pylist())
    return BatchFingerprints(
        stored, mirror, mirror_codes(side, table["mirror_windows"].to_pylist()), table["image"].combine_chunks()
    )


def mirror_codes(side: Path, values: list[bytes | None]) -> np.ndarray:
    """(n, W) uint64 window hashes of the side file's mirrors (zeros where null: an image too flat)."""
    codes = np.zeros((len(values), len(WINDOWS)), dtype=np.uint64)
    for row, value in enumerate(values):
        if value is None:
            continue
        if len(value) != 8 * len(WINDOWS):
            raise ReleaseError(
                f"{side}: row {row} holds {len(value)} bytes of mirror window hashes, not {8 * len(WINDOWS)}"
            )
        codes[row] = np.frombuffer(value, dtype=">u8")
    return codes
