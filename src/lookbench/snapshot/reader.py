"""Open a LookBench snapshot folder, read labels and stream images, with validation."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property, partial
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.arrow import to_datetimes, to_numpy
from lookbench._util.hashing import sha256_hex
from lookbench._util.jsontext import loads
from lookbench._util.labels import canonical_text, normalise_label
from lookbench.errors import SnapshotError
from lookbench.snapshot.card import DatasetCard, read_card
from lookbench.snapshot.cells import list_cell, reading
from lookbench.snapshot.composed import check_composed
from lookbench.snapshot.digests import DigestIndex, ImageDigests, hash_images
from lookbench.snapshot.features import class_names, features_of
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.manifest import verify_manifest
from lookbench.snapshot.schema import (
    COMPOSED_SPLITS,
    LABEL_COLUMNS,
    NOISE,
    REQUIRED_COLUMNS,
    SPLITS,
    SUBSETS,
    TRAIN,
    SubsetKind,
    is_composed_subset,
    subset_kind,
)
from lookbench.snapshot.source import resolve_snapshot_dir

NAMED_BY = ("MANIFEST.json", "synth_manifest.json")
"""Files whose `name` field names the snapshot (a name that is not a plain file-name-safe word is ignored)."""


def _is_text(dtype: pa.DataType) -> bool:
    if pa.types.is_dictionary(dtype):
        return _is_text(dtype.value_type)
    return pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or str(dtype) == "string_view"


def _is_binary(dtype: pa.DataType) -> bool:
    return pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or str(dtype) == "binary_view"


def _image_bytes(value: Any) -> bytes | None:
    """The encoded bytes of one image cell: a Hugging Face Image struct or plain binary."""
    if isinstance(value, dict):
        value = value.get("bytes")
    return value if isinstance(value, bytes) and value else None


def _file_images(
    path: Path, column: str, batch_size: int, start: int = 0, stop: int | None = None
) -> Iterator[list[bytes | None]]:
    """Batches of one file's encoded images in row order (rows [start, stop) of the file, reading only the row
    groups that hold them); None where a row has none (or the column is absent)."""
    with reading(path):
        pf = pq.ParquetFile(path)
        rows = pf.metadata.num_rows
        stop = rows if stop is None else min(stop, rows)
        if column not in pf.schema_arrow.names:
            for first in range(start, stop, batch_size):
                yield [None] * min(batch_size, stop - first)
            return
        groups, skip = _row_groups(pf.metadata, start, stop)
        batches = pf.iter_batches(batch_size=batch_size, columns=[column], row_groups=groups)
    left = stop - start
    while left > 0:
        with reading(path):
            batch = next(batches, None)
            if batch is None:
                return
            values = [_image_bytes(v) for v in batch.column(0).to_pylist()]
        if skip:
            values, skip = values[skip:], max(0, skip - len(values))
        if values:
            values = values[:left]
            left -= len(values)
            yield values


def _row_groups(meta: pq.FileMetaData, start: int, stop: int) -> tuple[list[int], int]:
    """The row groups holding rows [start, stop) of a file, and how many rows of the first precede `start`."""
    groups: list[int] = []
    skip = 0
    first = 0
    for group in range(meta.num_row_groups):
        count = meta.row_group(group).num_rows
        if first + count > start and first < stop:
            if not groups:
                skip = start - first
            groups.append(group)
        first += count
    return groups, skip


def _hash_file_images(path: Path, column: str, algorithm: str = "sha256") -> ImageDigests:
    return hash_images(_file_images(path, column, 256), algorithm)


def _attribute_list(path: Path, row: int, value: Any, normalise: Callable[[Any], str] = normalise_label) -> list[str]:
    """`other_attributes` of one row, normalised: a list (null reads as empty; a JSON-list string is accepted)."""
    values = list_cell(path, row, "other_attributes", value, "a list of strings")
    return [s for s in (normalise(v) for v in values) if s]


def _text_lists(column: pa.ChunkedArray, normalise: _Normalised) -> list[list[str]] | None:
    """`other_attributes` of every row when the column is lists of text with no null row: all items normalised at
    once, then cut at the lists' offsets; None for any other column (the checked reader takes it row by row)."""
    kind = column.type
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not _is_text(kind.value_type):
        return None
    if column.null_count:
        return None
    lists = column.combine_chunks()
    if not len(lists):
        return []
    items = normalise.column(lists.flatten().to_pylist())
    offsets = to_numpy(lists.offsets)  # not np.asarray: that imports pandas where it is installed
    bounds = (offsets - offsets[0]).tolist()
    rows = [items[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]
    return [list(filter(None, row)) for row in rows] if "" in items else rows


class Snapshot:
    """A snapshot on local disk: `<subset>/{query,gallery}.parquet` plus `noise/gallery*.parquet`."""

    def __init__(self, root: Path, location: str | None = None, digests: DigestIndex | None = None) -> None:
        self.root = root
        self.location = location or str(root)
        self.digests = digests or DigestIndex.default()
        self._labels: dict[tuple[str, str], SplitLabels] = {}
        self._warnings: dict[str, None] = {}
        self.card: DatasetCard | None = read_card(root)
        """The dataset card (`DATASET.json`) of an imported benchmark; None for a LookBench snapshot."""
        self._check_folders()

    @property
    def snapshot_id(self) -> str:
        """The version folder's name, e.g. `v20251201`."""
        return self.root.name

    @cached_property
    def name(self) -> str:
        """The name results are filed under: the `name` a manifest declares (a Synth release names its renderer, size
        and seed, e.g. `v20260601-synth-6-small-seed0`), else the version folder's name."""
        for manifest in NAMED_BY:
            try:
                declared = loads((self.root / manifest).read_text(encoding="utf-8")).get("name")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(declared, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,100}", declared):
                return declared
        return self.snapshot_id

    @property
    def declared_subsets(self) -> tuple[str, ...]:
        """Subsets named by the dataset card, in its order (none for a LookBench snapshot)."""
        return tuple(self.card.subsets) if self.card is not None else ()

    def _check_folders(self) -> None:
        for child in sorted(self.root.iterdir()):
            if not child.is_dir() or child.name.startswith((".", "_")):
                continue
            known = child.name in self.kinds or child.name == NOISE
            if not known and (any(child.glob("*.parquet")) or any(child.glob("*/*.parquet"))):
                raise SnapshotError(
                    f"{child}: unknown subset {child.name!r}; known subsets: "
                    f"{', '.join((*SUBSETS, *self.declared_subsets))}, {NOISE} and composed[_NAME]"
                )

    @cached_property
    def kinds(self) -> dict[str, SubsetKind]:
        """The task subsets present and their kinds, decided once from their folders' names: the four image subsets
        in canonical order, the card's in its order, then the other composed ones by name."""
        folders = {p.name: subset_kind(p.name) for p in self.root.iterdir() if p.is_dir()}
        composed = sorted(name for name, kind in folders.items() if kind == "composed")
        names = dict.fromkeys((*SUBSETS, *self.declared_subsets, *composed))
        return {s: folders[s] for s in names if s in folders}

    @cached_property
    def subsets(self) -> list[str]:
        """The task subsets present, in the order of `kinds`."""
        return list(self.kinds)

    def subsets_of_kind(self, kind: SubsetKind) -> list[str]:
        """The task subsets present of one kind, in the order of `kinds`."""
        return [name for name, of in self.kinds.items() if of == kind]

    @property
    def has_noise(self) -> bool:
        """True if the snapshot has a distractor pool."""
        return bool(self._find_files(NOISE, "gallery"))

    def check_subsets(self, names: Sequence[str]) -> list[str]:
        """Validate requested subset names against the snapshot; return them in canonical order."""
        for name in names:
            if name not in (*SUBSETS, *self.declared_subsets) and not is_composed_subset(name):
                raise SnapshotError(
                    f"unknown subset {name!r}; known subsets: "
                    f"{', '.join((*SUBSETS, *self.declared_subsets))} and composed[_NAME]"
                )
            if name not in self.subsets:
                raise SnapshotError(f"subset {name!r} is not in snapshot {self.root}")
        return [s for s in self.subsets if s in names]

    def _find_files(self, subset: str, split: str) -> list[Path]:
        folder = self.root / subset
        if not folder.is_dir():
            return []
        single = folder / f"{split}.parquet"
        if single.is_file():
            return [single]
        shards = sorted(folder.glob(f"{split}-*.parquet")) + sorted(folder.glob(f"{split}_*.parquet"))
        if shards:
            return shards
        return sorted((folder / split).glob("*.parquet")) if (folder / split).is_dir() else []

    def splits_of(self, subset: str) -> tuple[str, ...]:
        """The scored splits a subset may have (a composed one adds `validation`); `train` is optional for every."""
        return COMPOSED_SPLITS if self.kinds.get(subset) == "composed" else SPLITS

    def files(self, subset: str, split: str) -> list[Path]:
        """The parquet file(s) of one split; a clear error if there are none."""
        splits = (*self.splits_of(subset), TRAIN)
        if split not in splits:
            raise SnapshotError(f"unknown split {split!r} of {subset!r}; expected one of {splits}")
        if subset == NOISE and split == "query":
            raise SnapshotError("the noise subset has a gallery split only")
        found = self._find_files(subset, split)
        if not found:
            raise SnapshotError(f"missing {split} split of {subset!r}: no {self.root / subset / split}.parquet")
        return found

    def _validated(self, subset: str, split: str) -> bool:
        """Whether `validate` checks the split: query and gallery always, except in a training-only subset (a
        `train` split and no scored one, as `lookbench synth --purpose train` writes); optional splits if present."""
        if split in ("validation", TRAIN):
            return self.has_split(subset, split)
        return not self.has_split(subset, TRAIN) or any(self.has_split(subset, sp) for sp in self.splits_of(subset))

    def has_split(self, subset: str, split: str) -> bool:
        """True if the split has at least one file (e.g. an optional `train` or composed `validation` split)."""
        return bool(self._find_files(subset, split))

    def all_files(self) -> list[Path]:
        """Every parquet file of the snapshot, sorted."""
        return sorted(self.root.rglob("*.parquet"))

    def _schema_of(self, path: Path) -> pa.Schema:
        with reading(path):
            return pq.read_schema(path)

    def check_columns(self, subset: str, split: str) -> None:
        """Raise if a file of the split lacks a required column or has no usable image column."""
        for path in self.files(subset, split):
            self._checked_schema(path)

    def _checked_schema(self, path: Path) -> pa.Schema:
        schema = self._schema_of(path)
        missing = [c for c in REQUIRED_COLUMNS if c not in schema.names]
        if missing:
            raise SnapshotError(f"{path}: missing column(s) {', '.join(missing)}")
        image = schema.field("image").type
        if not (_is_binary(image) or (pa.types.is_struct(image) and image.get_field_index("bytes") >= 0)):
            raise SnapshotError(
                f"{path}: column image is {image}; expected a Hugging Face Image struct {{bytes, path}} or binary"
            )
        return schema

    def num_rows(self, subset: str, split: str) -> int:
        """Row count of a split, from parquet metadata."""
        total = 0
        for path in self.files(subset, split):
            with reading(path):
                total += pq.ParquetFile(path).metadata.num_rows
        return total

    @property
    def warnings(self) -> list[str]:
        """What the labels read so far make doubtful (silent zeros, guessed types), in the order found."""
        return list(self._warnings)

    def _warn(self, message: str) -> None:
        self._warnings.setdefault(message, None)

    def labels(self, subset: str, split: str) -> SplitLabels:
        """Normalised labels of a split (cached)."""
        key = (subset, split)
        if key not in self._labels:
            parts = [self._read_labels(p, noise=subset == NOISE) for p in self.files(subset, split)]
            labels = SplitLabels.concat(parts)
            if not len(labels):
                raise SnapshotError(f"empty split: {subset}/{split} of {self.root} has no rows")
            if subset != NOISE and not any(labels.main_attribute):
                self._warn(
                    f"{subset}/{split}: main_attribute is empty in every row; under the default fine rule (main) "
                    "these rows fine-match only rows whose main_attribute is empty too"
                )
            self._labels[key] = labels
        return self._labels[key]

    def corpus_labels(self, subset: str) -> SplitLabels:
        """The task corpus: the subset's gallery followed by every noise row."""
        parts = [self.labels(subset, "gallery")]
        if self.has_noise:
            parts.append(self.labels(NOISE, "gallery"))
        return SplitLabels.concat(parts)

    def check_task(self, subset: str, kind: SubsetKind) -> None:
        """Read a task's labels (failing on unscorable data) and warn about queries that cannot score; `kind` as
        the caller decided it (a run's plan, else `kinds`)."""
        queries = self.labels(subset, "query")
        if kind == "composed":
            for message in check_composed(self, subset):
                self._warn(message)
        present = set(self.labels(subset, "gallery").category)
        if self.has_noise:
            self.labels(NOISE, "gallery")
        absent = [c for c in queries.category if c not in present]
        if absent:
            names = sorted(set(absent))
            shown = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            self._warn(
                f"{subset}: {len(absent)} of {len(queries)} queries have a category absent from the gallery "
                f"({shown}); they score 0 on Coarse and Fine recall, MRR and nDCG"
            )

    def _read_labels(self, path: Path, noise: bool) -> SplitLabels:
        schema = self._checked_schema(path)
        names = set(schema.names)
        features = features_of(schema)
        columns = [*LABEL_COLUMNS, *(c for c in ("outfit_id", "first_seen_at") if c in names)]
        with reading(path):
            table = pq.ParquetFile(path).read(columns=columns)  # not pq.read_table: that imports pandas (0.25 s)
        normalise = _Normalised()
        with reading(path):
            others = _text_lists(table["other_attributes"], normalise)
        decoded = [c for c in LABEL_COLUMNS if others is None or c != "other_attributes"]
        values = {c: self._decoded(path, table, c, features.get(c)) for c in decoded}
        for column in () if noise else ("category", "main_attribute"):  # noise labels are never compared
            if class_names(features.get(column)) is None and not _is_text(schema.field(column).type):
                self._warn(
                    f"{path}: {column} is stored as {schema.field(column).type}, not text; its values are compared "
                    "as text (1 and 1.0 read as '1')"
                )
        categories = normalise.column(values["category"])
        mains = normalise.column(values["main_attribute"])
        if others is None:
            others = normalise.attributes(path, values["other_attributes"])
        items = list(map(canonical_text, values["item_ID"]))
        if None in items and not noise:
            raise SnapshotError(f"{path}: row {items.index(None)}: item_ID is empty")
        item_ids = [item or "" for item in items] if None in items else cast(list[str], items)
        if not noise:
            for row, cat in enumerate(categories):
                if not cat:
                    raise SnapshotError(f"{path}: row {row}: category is empty")
        if "outfit_id" in names:
            outfit = [canonical_text(v) for v in table["outfit_id"].to_pylist()]
        elif "raw_image" in names:
            outfit = self._raw_image_keys(path)
        else:
            outfit = [None] * table.num_rows
        dates = None
        if "first_seen_at" in names:
            col = table["first_seen_at"]
            if not pa.types.is_timestamp(col.type):
                try:
                    col = col.cast(pa.timestamp("us", tz="UTC"))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise SnapshotError(f"{path}: first_seen_at is not a timestamp ({exc})") from exc
            dates = to_datetimes(col)
        return SplitLabels(categories, mains, others, item_ids, outfit, dates)

    def _decoded(self, path: Path, table: pa.Table, column: str, feature: Any) -> list[Any]:
        """A column's Python values, `ClassLabel` integers replaced by their names."""
        with reading(path):
            values = table[column].to_pylist()
        names = class_names(feature)
        if names is None:
            return values

        def name_of(row: int, value: Any) -> Any:
            if value is None or isinstance(value, str):
                return value
            if isinstance(value, int) and value == -1:
                return None
            if not isinstance(value, int) or not 0 <= value < len(names):
                raise SnapshotError(
                    f"{path}: row {row}: {column} value {value!r} is not a class of its ClassLabel ({len(names)} names)"
                )
            return names[value]

        return [
            [name_of(row, v) for v in value] if isinstance(value, list) else name_of(row, value)
            for row, value in enumerate(values)
        ]

    def _raw_image_keys(self, path: Path) -> list[str | None]:
        """Outfit keys from the street photos: sha1 of the raw_image bytes, remembered by the digest index."""
        with reading(path):
            rows = pq.ParquetFile(path).metadata.num_rows
            compute = partial(_hash_file_images, path, "raw_image", "sha1")
            found = self.digests.image_digests(path, "raw_image.sha1", compute, rows)
        return [None if key is None else key.hex() for key in found.per_row()]

    def image_keys(self, subset: str, split: str, column: str = "image") -> list[bytes | None]:
        """sha256 digest of each row's image bytes, in row order (None: no bytes); remembered across runs."""
        keys: list[bytes | None] = []
        for path in self.files(subset, split):
            with reading(path):
                rows = pq.ParquetFile(path).metadata.num_rows
                found = self.digests.image_digests(path, column, partial(_hash_file_images, path, column), rows)
            keys.extend(found.per_row())
        return keys

    def iter_images(
        self,
        subset: str,
        split: str,
        batch_size: int = 64,
        column: str = "image",
        start: int = 0,
        stop: int | None = None,
    ) -> Iterator[tuple[int, list[bytes | None]]]:
        """Yield (first row index, encoded image bytes) batches of a split's rows [start, stop), in row order;
        only the files and row groups holding those rows are read."""
        first = 0
        for path in self.files(subset, split):
            if stop is not None and first >= stop:
                return
            with reading(path):
                count = pq.ParquetFile(path).metadata.num_rows
            if first + count > start:
                local_stop = None if stop is None else stop - first
                row = max(start, first)
                for values in _file_images(path, column, batch_size, row - first, local_stop):
                    yield row, values
                    row += len(values)
            first += count

    def image_rows(self, subset: str, split: str, rows: Iterable[int], column: str = "image") -> dict[int, bytes]:
        """Encoded image bytes of the given rows (global across shards), reading only those rows; rows without an
        image (or files without the column) are left out."""
        wanted = sorted(set(rows))
        out: dict[int, bytes] = {}
        start = 0
        for path in self.files(subset, split):
            with reading(path):
                pf = pq.ParquetFile(path)
                count = pf.metadata.num_rows
                local = [r - start for r in wanted if start <= r < start + count]
                if not local or column not in pf.schema_arrow.names:
                    start += count
                    continue
                values = pf.read(columns=[column])[column].take(local).to_pylist()
            for row, value in zip(local, values, strict=True):
                data = _image_bytes(value)
                if data:
                    out[start + row] = data
            start += count
        return out

    def validate(self, subsets: Sequence[str] | None = None, check_images: bool = False) -> list[str]:
        """Check columns, labels and (optionally) that every image decodes as `eval` decodes it; return a summary."""
        from lookbench._util.images import BadImageError, decode_image

        names = list(subsets) if subsets is not None else self.subsets
        if not names:
            raise SnapshotError(f"{self.root}: no subsets found")
        splits = [(s, sp) for s in names for sp in (*self.splits_of(s), TRAIN) if self._validated(s, sp)]
        if self.has_noise:
            splits.append((NOISE, "gallery"))
        lines = []
        for subset, split in splits:
            self.check_columns(subset, split)
            labels = self.labels(subset, split)
            if check_images:
                row = 0
                for path in self.files(subset, split):
                    for images in _file_images(path, "image", 64):
                        for data in images:
                            try:
                                decode_image(data)
                            except BadImageError as exc:
                                raise SnapshotError(f"{subset}/{split} row {row} ({path}): {exc}") from exc
                            row += 1
            lines.append(f"{subset}/{split}: {len(labels)} rows")
            # queries of a composed split share references by design; elsewhere a repeat means several photos
            shared = subset == NOISE or (self.kinds.get(subset) == "composed" and split != "gallery")
            repeats = labels.repeated_ids() if not shared else {}
            if repeats:
                item, rows = next(iter(repeats.items()))
                lines.append(
                    f"{subset}/{split}: {len(repeats)} item_ID(s) on more than one row (several photos of one "
                    f"product), e.g. {item!r} at rows {', '.join(map(str, rows[:5]))}"
                )
        for subset in names:
            if self._validated(subset, "query"):
                self.check_task(subset, self.kinds[subset])
        return lines

    @cached_property
    def content_hash(self) -> str:
        """sha256 over every parquet file's relative path and sha256: identifies the exact data."""
        lines = []
        for path in self.all_files():
            with reading(path):
                lines.append(f"{path.relative_to(self.root).as_posix()}\0{self.digests.file_sha256(path)}\n")
        return sha256_hex("".join(lines).encode())


class _Normalised(dict[Any, str]):
    """`normalise_label` remembered per distinct value (a split repeats few labels): `[]` is a C-level look-up
    whose misses normalise; calling it also takes unhashable values (passed through)."""

    def __missing__(self, value: Any) -> str:
        self[value] = result = normalise_label(value)
        return result

    def __call__(self, value: Any) -> str:
        try:
            return self[value]
        except TypeError:
            return normalise_label(value)

    def column(self, values: list[Any]) -> list[str]:
        """Every value of a column, normalised."""
        try:
            return list(map(self.__getitem__, values))
        except TypeError:
            return [self(v) for v in values]

    def attributes(self, path: Path, values: list[Any]) -> list[list[str]]:
        """`other_attributes` of every row (see `_attribute_list`); rows that are lists of labels take the short
        way when all are, else each row the checked one (null, JSON text, a wrong type, unhashable items)."""
        get = self.__getitem__
        if set(map(type, values)) <= {list}:
            try:
                return [list(filter(None, map(get, value))) for value in values]
            except TypeError:
                pass
        return [_attribute_list(path, row, value, self) for row, value in enumerate(values)]


def open_snapshot(location: str | Path, verify: bool = True) -> Snapshot:
    """Open a snapshot from a local folder or an `hf://` location; check its MANIFEST.json when it has one."""
    root = resolve_snapshot_dir(location)
    digests = DigestIndex.default()
    if verify:
        verify_manifest(root, sha256=digests.file_sha256)
    return Snapshot(root, location=str(location), digests=digests)
