"""Fingerprints of every image in the earlier versions of the output folder, cached per version."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lookbench._util.atomic import atomic_path
from lookbench._util.hashing import file_sha256, sha256_hex
from lookbench._util.images import BadImageError
from lookbench.errors import ReleaseError
from lookbench.search.duplicates.crops import GREY_BYTES, WINDOWS, WINDOWS_ID, CropPairs
from lookbench.search.duplicates.hashes import HASH_SIZE, fingerprint
from lookbench.search.duplicates.index import FingerprintIndex
from lookbench.search.duplicates.store import StoredCodes, open_store, remove_store, write_store
from lookbench.snapshot import NOISE, open_snapshot
from lookbench.snapshot.manifest import MANIFEST_NAME
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SPLITS

VERSION_RE = re.compile(r"^v\d{8}$")
FINGERPRINT_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("sha256", pa.string()),
        ("phash", pa.string()),
        ("windows", pa.binary()),
        ("grey", pa.binary()),
        ("aspect", pa.float64()),
    ]
)
CACHE_FORMAT = f"rgb-on-white-p{HASH_SIZE * HASH_SIZE}-{WINDOWS_ID}-views"
"""Part of the cache file name: hashes are of images decoded by lookbench._util.images (alpha composited on white), the
pHash size, the crop tier's window settings (`windows` is null for an image too flat to take part), and that each
row holds its crop view (`grey`, null exactly where `windows` is, and `aspect`): earlier formats are never read."""
HISTORY_NAME = re.compile(r"history-[0-9a-f]{16}-rgb-on-white-[A-Za-z0-9.-]+")
"""How `history_store` names a store folder (of this or an earlier cache format)."""
PHASH_BYTES = HASH_SIZE * HASH_SIZE // 8
HEX_RE = r"^[0-9a-f]*$"
WINDOW_BYTES = 8 * len(WINDOWS)
"""Bytes of one image's window hashes (big-endian uint64 each) in the cache."""
STORE_CHUNK = 16_384
"""Cache rows converted to arrays at a time while a store is written (their grey thumbnails: 256 MB)."""
CACHE_CHUNK = 4_096
"""Rows of a fingerprint cache held at a time: one parquet row group when it is written, one batch when it is read
(their grey thumbnails: 64 MB)."""
KEY_RE = re.compile(r"^(v\d{8})/([^/]+)/([^/#]+)#(\d+)$")


def earlier_versions(output: Path, version: str) -> list[Path]:
    """Published version folders in `output` older than `version`, oldest first."""
    if not output.is_dir():
        return []
    return sorted(p for p in output.iterdir() if p.is_dir() and VERSION_RE.match(p.name) and p.name < version)


def versions_fingerprint(output: Path, version: str) -> str:
    """sha256 over the earlier versions' names and manifests: changes when one is added, removed or replaced."""
    parts = []
    for folder in earlier_versions(output, version):
        manifest = folder / MANIFEST_NAME
        parts.append(f"{folder.name}\0{file_sha256(manifest) if manifest.is_file() else 'no manifest'}\n")
    return sha256_hex("".join(parts).encode())


def snapshot_parts(snap: Snapshot) -> list[tuple[str, str]]:
    """(subset, split) of every split of a snapshot, noise included."""
    parts = [(s, sp) for s in snap.subsets for sp in SPLITS]
    return parts + ([(NOISE, "gallery")] if snap.has_noise else [])


def snapshot_fingerprints(snap: Snapshot) -> Iterator[pa.RecordBatch]:
    """(key, sha256, phash, windows, grey, aspect) of every image of a snapshot, `CACHE_CHUNK` rows at a time; key is
    `version/subset/split#row`."""
    rows: list[dict[str, str | bytes | float | None]] = []
    for subset, split in snapshot_parts(snap):
        for start, images in snap.iter_images(subset, split):
            for offset, data in enumerate(images):
                if not data:
                    continue
                try:
                    found = fingerprint(data)
                except BadImageError as exc:
                    raise ReleaseError(f"{snap.root}/{subset}/{split} row {start + offset}: {exc}") from exc
                key = f"{snap.snapshot_id}/{subset}/{split}#{start + offset}"
                windows = found.windows
                rows.append(
                    {
                        "key": key,
                        "sha256": found.sha256,
                        "phash": found.phash,
                        "windows": None if windows is None else windows.astype(">u8").tobytes(),
                        "grey": None if windows is None else found.view.grey_bytes(),
                        "aspect": found.view.aspect,
                    }
                )
                if len(rows) == CACHE_CHUNK:
                    yield pa.RecordBatch.from_pylist(rows, schema=FINGERPRINT_SCHEMA)
                    rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=FINGERPRINT_SCHEMA)


def write_cache(batches: Iterable[pa.RecordBatch], path: Path) -> None:
    """Write fingerprint batches to `path` atomically, one parquet row group each (a failure leaves no file)."""
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, FINGERPRINT_SCHEMA, compression="zstd") as writer:
        for batch in batches:
            writer.write_batch(batch, row_group_size=len(batch))


class PublishedImages:
    """Image bytes of published rows by key, read one parquet row group at a time."""

    def __init__(self, output: Path) -> None:
        self.output = output
        self._layouts: dict[tuple[str, str, str], list[tuple[int, int, Path, int]]] = {}

    def _layout(self, version: str, subset: str, split: str) -> list[tuple[int, int, Path, int]]:
        """(first row, row count, file, row group) of every row group of a published split."""
        key = (version, subset, split)
        if key not in self._layouts:
            groups = []
            first = 0
            for path in Snapshot(self.output / version).files(subset, split):
                meta = pq.ParquetFile(path).metadata
                for group in range(meta.num_row_groups):
                    rows = meta.row_group(group).num_rows
                    groups.append((first, rows, path, group))
                    first += rows
            self._layouts[key] = groups
        return self._layouts[key]

    def __call__(self, key: str) -> bytes:
        """The encoded image of `version/subset/split#row`."""
        found = KEY_RE.match(key)
        if found is None:
            raise ReleaseError(f"not a published row key: {key!r}")
        version, subset, split, text = found.groups()
        row = int(text)
        for first, rows, path, group in self._layout(version, subset, split):
            if first <= row < first + rows:
                value = _row_group_images(path, group)[row - first]
                return bytes(value.get("bytes") or b"") if isinstance(value, dict) else b""
        raise ReleaseError(f"{key}: no such published row")


def _row_group_images(path: Path, group: int) -> list[object]:
    # keyed on the file's identity too: a file written anew at the same path is read anew
    stat = path.stat()
    return _read_row_group_images(path, stat.st_ino, stat.st_mtime_ns, stat.st_size, group)


@lru_cache(maxsize=8)
def _read_row_group_images(path: Path, inode: int, mtime_ns: int, size: int, group: int) -> list[object]:
    return pq.ParquetFile(path).read_row_group(group, columns=["image"]).column(0).to_pylist()


@dataclass(frozen=True)
class CheckedCache:
    """A fingerprint cache file whose every row group passed `read_cached`'s checks, read back batch by batch."""

    path: Path
    rows: int

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The cache's rows, at most `CACHE_CHUNK` at a time."""
        return pq.ParquetFile(self.path).iter_batches(batch_size=CACHE_CHUNK)

    def read(self, columns: list[str]) -> pa.Table:
        """Some columns of the whole cache (the small ones: a whole `grey` column is 16 KB per image)."""
        return pq.read_table(self.path, columns=columns)


def check_batch(path: Path, batch: pa.RecordBatch) -> None:
    """Refuse (ReleaseError naming the file) rows of a fingerprint cache that are not well-formed."""
    for name, chars in (("sha256", 64), ("phash", 2 * PHASH_BYTES)):
        column = batch[name]
        good = pc.and_(pc.equal(pc.utf8_length(column), chars), pc.match_substring_regex(column, HEX_RE))
        if column.null_count or pc.all(good).as_py() is False:
            raise ReleaseError(f"{path}: {name} values that are not {chars} lowercase hex digits")
    for name, size in (("windows", WINDOW_BYTES), ("grey", GREY_BYTES)):
        sizes = pc.binary_length(batch[name]).drop_null()
        if len(sizes) and pc.min_max(sizes).as_py() != {"min": size, "max": size}:
            raise ReleaseError(f"{path}: {name} values of the wrong size (expected {size} bytes)")
    if pc.any(pc.not_equal(pc.is_valid(batch["grey"]), pc.is_valid(batch["windows"]))).as_py():
        raise ReleaseError(f"{path}: grey thumbnails not exactly on the rows with window hashes")
    aspect = batch["aspect"]
    if aspect.null_count or pc.any(pc.invert(pc.greater(aspect, 0.0))).as_py() or pc.any(pc.is_inf(aspect)).as_py():
        raise ReleaseError(f"{path}: aspect values that are not finite and above 0")


def read_cached(path: Path) -> CheckedCache:
    """A fingerprint cache file, checked batch by batch (ReleaseError naming the file if it is unreadable or not
    one): at most `CACHE_CHUNK` rows are held at a time."""
    try:
        file = pq.ParquetFile(path)
        if not file.schema_arrow.equals(FINGERPRINT_SCHEMA):
            raise ReleaseError(f"{path}: not a fingerprint cache of this format (columns {file.schema_arrow.names})")
        rows = 0
        for batch in file.iter_batches(batch_size=CACHE_CHUNK):
            check_batch(path, batch)
            rows += batch.num_rows
    except (OSError, pa.ArrowException) as exc:
        raise ReleaseError(f"{path}: unreadable fingerprint cache ({exc})") from exc
    if rows != file.metadata.num_rows:
        raise ReleaseError(f"{path}: unreadable fingerprint cache ({rows} rows read, {file.metadata.num_rows} listed)")
    return CheckedCache(path, rows)


def cached_snapshot_fingerprints(
    snap: Snapshot, cache: Path, on_problem: Callable[[Path, str], None] | None = None
) -> CheckedCache:
    """`snapshot_fingerprints`, kept in `cache` under the version's name and content hash and written one row group
    at a time; a cache file that cannot be read is recomputed and rewritten, and `on_problem` told why."""
    cached = cache / f"{snap.root.name}-{snap.content_hash[:16]}-{CACHE_FORMAT}.parquet"
    if cached.is_file():
        try:
            return read_cached(cached)
        except ReleaseError as exc:
            if on_problem is not None:
                on_problem(cached, f"{exc}; recomputed")
    write_cache(snapshot_fingerprints(snap), cached)
    return CheckedCache(cached, pq.ParquetFile(cached).metadata.num_rows)


def fixed_width_bytes(column: pa.ChunkedArray, width: int) -> np.ndarray:
    """The values of a string or binary column whose every value is `width` bytes, as one uint8 array."""
    array = column.combine_chunks()
    offsets = np.frombuffer(array.buffers()[1], np.int32)[array.offset : array.offset + len(array) + 1]
    if not len(array):
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer(array.buffers()[2], np.uint8)[offsets[0] : offsets[0] + width * len(array)]


def hex_words(column: pa.ChunkedArray, nbytes: int) -> np.ndarray:
    """A column of `2 * nbytes`-digit lowercase hex strings as (n, nbytes / 8) big-endian uint64 words, converted
    in numpy (no Python object per row)."""
    nibbles = np.zeros(256, dtype=np.uint8)
    nibbles[np.frombuffer(b"0123456789abcdef", np.uint8)] = np.arange(16, dtype=np.uint8)
    hexes = nibbles[fixed_width_bytes(column, 2 * nbytes)].reshape(-1, 2 * nbytes)
    words = np.ascontiguousarray((hexes[:, 0::2] << 4) | hexes[:, 1::2]).view(">u8").astype(np.uint64)
    return words.reshape(-1, nbytes // 8)


def table_codes(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pHash words, window hashes, which rows have windows) of a checked fingerprint cache table."""
    windows = table["windows"]
    filled = pc.fill_null(windows, pa.scalar(bytes(WINDOW_BYTES), pa.binary()))
    raw = fixed_width_bytes(filled, WINDOW_BYTES).view(">u8").astype(np.uint64).reshape(-1, len(WINDOWS))
    return hex_words(table["phash"], PHASH_BYTES), raw, windows.is_valid().to_numpy(zero_copy_only=False)


def store_chunks(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[pa.Table]:
    """Fingerprint batches regrouped into tables of exactly `size` rows (the last one shorter): the same chunks,
    and so the same store bytes, however the cache was split into row groups."""
    pending: list[pa.RecordBatch] = []
    held = 0
    for batch in batches:
        while batch.num_rows:
            take = min(size - held, batch.num_rows)
            pending.append(batch.slice(0, take))
            held += take
            batch = batch.slice(take)
            if held == size:
                yield pa.Table.from_batches(pending)
                pending, held = [], 0
    if held:
        yield pa.Table.from_batches(pending)


def stored_codes(table: pa.Table) -> StoredCodes:
    """A checked fingerprint cache table as arrays (a row without windows has an all-zero grey thumbnail)."""
    phashes, windows, present = table_codes(table)
    grey = fixed_width_bytes(pc.fill_null(table["grey"], pa.scalar(bytes(GREY_BYTES), pa.binary())), GREY_BYTES)
    aspect = table["aspect"].to_numpy().astype(np.float64, copy=False)[:, None]
    sha = hex_words(table["sha256"], 32)
    keys = table["key"].combine_chunks()  # one record batch in the store's keys file however the rows were read
    return StoredCodes(keys, sha, phashes, windows, present[:, None], grey.reshape(-1, GREY_BYTES), aspect)


def history_store(
    output: Path, version: str, cache: Path, on_problem: Callable[[Path, str], None] | None = None
) -> tuple[Path | None, list[str]]:
    """The folder of the memory-mapped store (`store.py`) of all earlier versions' fingerprints (verified against
    their manifests), under `cache` and named by those versions, and their names: built from the per-version caches
    when it is missing, rebuilt (and `on_problem` told why) when it is damaged. None when they hold no image."""
    folders = earlier_versions(output, version)
    names = [folder.name for folder in folders]
    folder = cache / f"history-{versions_fingerprint(output, version)[:16]}-{CACHE_FORMAT}"
    if folder.is_dir():
        try:
            open_store(folder)
            return folder, names
        except ReleaseError as exc:
            if on_problem is not None:
                on_problem(folder, f"{exc}; rebuilt")
    caches = [cached_snapshot_fingerprints(open_snapshot(f), cache, on_problem) for f in folders]
    rows = sum(checked.rows for checked in caches)
    if rows == 0:
        return None, names
    parts = (stored_codes(table) for checked in caches for table in store_chunks(checked.batches(), STORE_CHUNK))
    write_store(folder, parts, rows, len(WINDOWS))
    return folder, names


def prune_history_stores(cache: Path, keep: Path) -> list[str]:
    """Remove the history stores in `cache` other than `keep` (superseded: their earlier versions are not the
    latest build's), and return their names: only folders named like `history_store` names them and holding
    exactly a store's files (`store.remove_store`); anything else is left alone."""
    removed = []
    for folder in sorted(cache.glob("history-*")):
        if folder != keep and HISTORY_NAME.fullmatch(folder.name) and remove_store(folder):
            removed.append(folder.name)
    return removed


def history_index(
    output: Path, version: str, cache: Path, on_problem: Callable[[Path, str], None] | None = None
) -> tuple[FingerprintIndex, list[str]]:
    """An index over all earlier versions (verified against their manifests), searched in their memory-mapped
    store, and their names."""
    folder, names = history_store(output, version, cache, on_problem)
    return store_index(output, folder), names


def store_index(output: Path, folder: Path | None, crop_pairs: CropPairs = "all") -> FingerprintIndex:
    """An index over a history store (none: empty) whose images are the published rows in `output`."""
    images = PublishedImages(output)
    if folder is None:
        return FingerprintIndex(images, crop_pairs=crop_pairs)
    return FingerprintIndex.of_store(images, open_store(folder), crop_pairs)
