"""The history's fingerprints on disk, memory-mapped: one folder per set of earlier versions, written atomically and
checked against its manifest (row count, every file's sha256) before it is mapped.

Codes are `.npy` matrices opened with `mmap_mode="r"` and keys an uncompressed Arrow IPC file read zero-copy from
a memory map, so a history of a million images holds no Python object per image: its pages are the operating
system's file cache, read when a look-up touches them. Each image's crop view (its grey thumbnail and aspect) is
stored too, so a crop-tier candidate's view is read, not decoded from its published image.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa
from pydantic import ValidationError

from lookbench._util.atomic import atomic_folder
from lookbench._util.configfile import StrictConfig
from lookbench._util.hashing import file_sha256
from lookbench.errors import ReleaseError
from lookbench.search.duplicates.crops import GREY_BYTES, CropView

MANIFEST = "manifest.json"
Manifest = TypeVar("Manifest", bound=StrictConfig)
KEYS_FILE = "keys.arrow"
MATRICES: dict[str, tuple[type[np.generic], int]] = {
    "sha": (np.uint64, 4),
    "phash": (np.uint64, 4),
    "windows": (np.uint64, 0),
    "present": (np.uint64, 1),
    "grey": (np.uint8, GREY_BYTES),
    "aspect": (np.float64, 1),
}
"""Each matrix file: its dtype and values per row (0: the window count, given by the writer)."""


class StoreManifest(StrictConfig):
    """What a store folder holds: its row count and the sha256 of every file."""

    rows: int
    files: dict[str, str]


@dataclass(frozen=True)
class StoredCodes:
    """One version's (or a whole history's) fingerprints as arrays: keys, uint64 codes per row (`present` is (n, 1):
    1 for a row with window hashes, 0 for an image too flat), and each row's crop view: its grey thumbnail (n,
    GREY_BYTES) uint8 (zeros for a row without windows) and aspect (n, 1) float64."""

    keys: pa.ChunkedArray | pa.Array
    sha: np.ndarray
    phash: np.ndarray
    windows: np.ndarray
    present: np.ndarray
    grey: np.ndarray
    aspect: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)

    def view(self, row: int) -> CropView:
        """The crop view of a row with window hashes, as `CropView.of` gives it for the decoded image."""
        return CropView.of_grey(self.grey[row], float(self.aspect[row, 0]))


def write_store(folder: Path, parts: Iterable[StoredCodes], rows: int, windows: int) -> None:
    """Write `parts` (`rows` in all) into `folder` atomically: a crash leaves the previous folder or none.

    Each matrix is streamed to its `.npy` file part by part (written, not memory-mapped: a mapping written through
    keeps every page it touched resident until it closes, the whole 16 GB of a million thumbnails)."""
    widths = {name: width or windows for name, (_, width) in MATRICES.items()}
    with atomic_folder(folder) as tmp, ExitStack() as files:
        sinks = {name: files.enter_context(open(tmp / f"{name}.npy", "wb")) for name in MATRICES}
        for name, (dtype, _) in MATRICES.items():
            header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False}
            np.lib.format.write_array_header_1_0(sinks[name], header | {"shape": (rows, widths[name])})
        schema = pa.schema([("key", pa.string())])
        start = 0
        with pa.OSFile(str(tmp / KEYS_FILE), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
            for part in parts:
                start += len(part)
                if start > rows:
                    raise ValueError(f"store parts hold more than {rows} rows")
                for name, (dtype, _) in MATRICES.items():
                    values = np.ascontiguousarray(np.asarray(getattr(part, name), dtype=dtype)).reshape(len(part), -1)
                    if values.shape[1] != widths[name]:
                        raise ValueError(f"store part's {name}: {values.shape[1]} values per row, not {widths[name]}")
                    sinks[name].write(values.data)  # the buffer itself: no copy of a 268 MB chunk
                writer.write_table(pa.table({"key": part.keys}, schema=schema))
        if start != rows:
            raise ValueError(f"store parts hold {start} rows, not {rows}")
        files.close()
        names = [f"{name}.npy" for name in MATRICES] + [KEYS_FILE]
        manifest = StoreManifest(rows=rows, files={name: file_sha256(tmp / name) for name in names})
        (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n", encoding="utf-8")


def store_files(folder: Path) -> list[Path] | None:
    """The files of a store folder this module wrote, or None when it is anything else: a link, a manifest that
    does not parse or lists files a store never holds, any entry beyond the manifest and the files it lists, or a
    listed file that is not a regular file (its contents are not checked: damaged stores are ours to remove too)."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    try:
        manifest = StoreManifest.model_validate_json((folder / MANIFEST).read_bytes())
    except (OSError, ValidationError):
        return None
    own = {f"{name}.npy" for name in MATRICES} | {KEYS_FILE}
    names = set(manifest.files) | {MANIFEST}
    if not set(manifest.files) <= own or {entry.name for entry in folder.iterdir()} != names:
        return None
    files = [folder / name for name in sorted(names)]
    return files if all(f.is_file() and not f.is_symlink() for f in files) else None


def remove_store(folder: Path) -> bool:
    """Delete a store folder this module wrote (`store_files`), file by file; anything else is left alone."""
    files = store_files(folder)
    if files is None:
        return False
    for file in files:
        file.unlink()
    folder.rmdir()
    return True


def read_manifest(path: Path, kind: type[Manifest], what: str) -> Manifest:
    """A folder's manifest (ReleaseError naming the file if it is missing or does not parse)."""
    try:
        return kind.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise ReleaseError(f"{path}: not a readable {what} manifest ({exc})") from exc


def open_store(folder: Path) -> StoredCodes:
    """The store in `folder`, memory-mapped (ReleaseError naming the file if anything is missing or differs)."""
    path = folder / MANIFEST
    manifest = read_manifest(path, StoreManifest, "fingerprint store")
    for name, digest in manifest.files.items():
        file = folder / name
        if not file.is_file() or file_sha256(file) != digest:
            raise ReleaseError(f"{file}: missing or changed since it was written (sha256 differs from {path})")
    matrices = {}
    for name, (dtype, width) in MATRICES.items():
        file = folder / f"{name}.npy"
        if f"{name}.npy" not in manifest.files:
            raise ReleaseError(f"{path}: lists no {name}.npy")
        try:
            matrix = np.load(file, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise ReleaseError(f"{file}: not a .npy matrix ({exc})") from exc
        shape = (manifest.rows, width or (matrix.shape[-1] if matrix.ndim == 2 else -1))
        if matrix.dtype != dtype or matrix.shape != shape:
            expected = f"{np.dtype(dtype)} with {manifest.rows} rows" + (f" of {width}" if width else "")
            raise ReleaseError(f"{file}: {matrix.dtype} {matrix.shape}, expected {expected}")
        matrices[name] = matrix
    try:
        keys = pa.ipc.open_file(pa.memory_map(str(folder / KEYS_FILE))).read_all()
    except (OSError, pa.ArrowException) as exc:
        raise ReleaseError(f"{folder / KEYS_FILE}: unreadable keys ({exc})") from exc
    if keys.schema.names != ["key"] or keys.num_rows != manifest.rows:
        raise ReleaseError(f"{folder / KEYS_FILE}: {keys.num_rows} keys, expected {manifest.rows}")
    return StoredCodes(
        keys=keys["key"],
        sha=matrices["sha"],
        phash=matrices["phash"],
        windows=matrices["windows"],
        present=matrices["present"],
        grey=matrices["grey"],
        aspect=matrices["aspect"],
    )
