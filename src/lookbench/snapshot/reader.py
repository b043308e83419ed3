"""Open a LookBench snapshot folder, read labels and stream images, with validation."""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.errors import SnapshotError
from lookbench.snapshot.labels import SplitLabels, normalise_label
from lookbench.snapshot.manifest import file_sha256, verify_manifest
from lookbench.snapshot.schema import NOISE, REQUIRED_COLUMNS, SPLITS, SUBSETS
from lookbench.snapshot.source import resolve_snapshot_dir

NAMED_BY = ("MANIFEST.json", "synth_manifest.json")
"""Files whose `name` field names the snapshot (a name that is not a plain file-name-safe word is ignored)."""


class Snapshot:
    """A snapshot on local disk: `<subset>/{query,gallery}.parquet` plus `noise/gallery*.parquet`."""

    def __init__(self, root: Path, location: str | None = None) -> None:
        self.root = root
        self.location = location or str(root)
        self._labels: dict[tuple[str, str], SplitLabels] = {}
        self._check_folders()

    @property
    def snapshot_id(self) -> str:
        """The version folder's name, e.g. `v20251201`."""
        return self.root.name

    @cached_property
    def name(self) -> str:
        """The name results are filed under: the `name` a manifest declares (a Synth release names its size and
        seed, e.g. `v20260601-synth-small-seed0`), else the version folder's name."""
        for manifest in NAMED_BY:
            try:
                declared = json.loads((self.root / manifest).read_text(encoding="utf-8")).get("name")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(declared, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,100}", declared):
                return declared
        return self.snapshot_id

    def _check_folders(self) -> None:
        for child in sorted(self.root.iterdir()):
            if not child.is_dir() or child.name.startswith((".", "_")):
                continue
            if child.name not in (*SUBSETS, NOISE) and any(child.glob("*.parquet")):
                raise SnapshotError(
                    f"{child}: unknown subset {child.name!r}; known subsets: {', '.join(SUBSETS)} and {NOISE}"
                )

    @cached_property
    def subsets(self) -> list[str]:
        """The task subsets present, in the canonical order."""
        return [s for s in SUBSETS if (self.root / s).is_dir()]

    @property
    def has_noise(self) -> bool:
        """True if the snapshot has a distractor pool."""
        return bool(self._find_files(NOISE, "gallery"))

    def check_subsets(self, names: Sequence[str]) -> list[str]:
        """Validate requested subset names against the snapshot; return them in canonical order."""
        for name in names:
            if name not in SUBSETS:
                raise SnapshotError(f"unknown subset {name!r}; known subsets: {', '.join(SUBSETS)}")
            if name not in self.subsets:
                raise SnapshotError(f"subset {name!r} is not in snapshot {self.root}")
        return [s for s in SUBSETS if s in names]

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

    def files(self, subset: str, split: str) -> list[Path]:
        """The parquet file(s) of one split; a clear error if there are none."""
        if split not in SPLITS:
            raise SnapshotError(f"unknown split {split!r}; expected one of {SPLITS}")
        if subset == NOISE and split == "query":
            raise SnapshotError("the noise subset has a gallery split only")
        found = self._find_files(subset, split)
        if not found:
            raise SnapshotError(f"missing {split} split of {subset!r}: no {self.root / subset / split}.parquet")
        return found

    def all_files(self) -> list[Path]:
        """Every parquet file of the snapshot, sorted."""
        return sorted(self.root.rglob("*.parquet"))

    def _schema_of(self, path: Path) -> pa.Schema:
        try:
            return pq.read_schema(path)
        except Exception as exc:
            raise SnapshotError(f"{path}: not a readable parquet file ({exc})") from exc

    def check_columns(self, subset: str, split: str) -> None:
        """Raise if a file of the split lacks a required column."""
        for path in self.files(subset, split):
            names = set(self._schema_of(path).names)
            missing = [c for c in REQUIRED_COLUMNS if c not in names]
            if missing:
                raise SnapshotError(f"{path}: missing column(s) {', '.join(missing)}")

    def num_rows(self, subset: str, split: str) -> int:
        """Row count of a split, from parquet metadata."""
        return sum(pq.ParquetFile(p).metadata.num_rows for p in self.files(subset, split))

    def labels(self, subset: str, split: str) -> SplitLabels:
        """Normalised labels of a split (cached)."""
        key = (subset, split)
        if key not in self._labels:
            parts = [self._read_labels(p) for p in self.files(subset, split)]
            labels = SplitLabels.concat(parts)
            if not len(labels):
                raise SnapshotError(f"empty split: {subset}/{split} of {self.root} has no rows")
            self._check_duplicate_ids(subset, split, labels)
            self._labels[key] = labels
        return self._labels[key]

    def corpus_labels(self, subset: str) -> SplitLabels:
        """The task corpus: the subset's gallery followed by every noise row."""
        parts = [self.labels(subset, "gallery")]
        if self.has_noise:
            parts.append(self.labels(NOISE, "gallery"))
        return SplitLabels.concat(parts)

    def _check_duplicate_ids(self, subset: str, split: str, labels: SplitLabels) -> None:
        seen: dict[str, int] = {}
        for row, item in enumerate(labels.item_id):
            if item in seen:
                raise SnapshotError(f"{subset}/{split}: duplicate item_ID {item!r} at rows {seen[item]} and {row}")
            seen[item] = row

    def _read_labels(self, path: Path) -> SplitLabels:
        names = set(self._schema_of(path).names)
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if missing:
            raise SnapshotError(f"{path}: missing column(s) {', '.join(missing)}")
        columns = ["category", "main_attribute", "other_attributes", "item_ID"]
        columns += [c for c in ("outfit_id", "first_seen_at") if c in names]
        table = pq.read_table(path, columns=columns)
        n = table.num_rows
        categories = [normalise_label(v) for v in table["category"].to_pylist()]
        mains = [normalise_label(v) for v in table["main_attribute"].to_pylist()]
        others: list[list[str]] = []
        for row, value in enumerate(table["other_attributes"].to_pylist()):
            if value is not None and not isinstance(value, list):
                raise SnapshotError(f"{path}: row {row}: other_attributes must be a list of strings")
            others.append([s for s in (normalise_label(v) for v in value or []) if s])
        item_ids = []
        for row, value in enumerate(table["item_ID"].to_pylist()):
            if value is None or str(value).strip() == "":
                raise SnapshotError(f"{path}: row {row}: item_ID is empty")
            item_ids.append(str(value))
        for row, cat in enumerate(categories):
            if not cat:
                raise SnapshotError(f"{path}: row {row}: category is empty")
        if "outfit_id" in names:
            outfit = [None if v is None else str(v) for v in table["outfit_id"].to_pylist()]
        else:
            outfit = self._raw_image_keys(path, n)
        dates = None
        if "first_seen_at" in names:
            col = table["first_seen_at"]
            if not pa.types.is_timestamp(col.type):
                try:
                    col = col.cast(pa.timestamp("us", tz="UTC"))
                except pa.ArrowInvalid as exc:
                    raise SnapshotError(f"{path}: first_seen_at is not a timestamp ({exc})") from exc
            dates = np.array(col.cast(pa.timestamp("us")).to_numpy(zero_copy_only=False), dtype="datetime64[us]")
        return SplitLabels(categories, mains, others, item_ids, outfit, dates)

    def _raw_image_keys(self, path: Path, n: int) -> list[str | None]:
        keys: list[str | None] = []
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=256, columns=["raw_image"]):
            for value in batch.column(0).to_pylist():
                data = value.get("bytes") if isinstance(value, dict) else None
                keys.append(hashlib.sha1(data).hexdigest() if data else None)
        return keys

    def iter_images(
        self, subset: str, split: str, batch_size: int = 64, column: str = "image"
    ) -> Iterator[tuple[int, list[bytes | None]]]:
        """Yield (first row index, encoded image bytes) batches of a split, in row order."""
        start = 0
        for path in self.files(subset, split):
            pf = pq.ParquetFile(path)
            for batch in pf.iter_batches(batch_size=batch_size, columns=[column]):
                values = batch.column(0).to_pylist()
                yield start, [v.get("bytes") if isinstance(v, dict) else None for v in values]
                start += len(values)

    def validate(self, subsets: Sequence[str] | None = None, check_images: bool = False) -> list[str]:
        """Check columns, labels and (optionally) that every image decodes; return a summary per split."""
        from PIL import Image

        names = list(subsets) if subsets is not None else self.subsets
        if not names:
            raise SnapshotError(f"{self.root}: no subsets found")
        splits = [(s, sp) for s in names for sp in SPLITS]
        if self.has_noise:
            splits.append((NOISE, "gallery"))
        lines = []
        for subset, split in splits:
            self.check_columns(subset, split)
            labels = self.labels(subset, split)
            if check_images:
                for start, images in self.iter_images(subset, split):
                    for offset, data in enumerate(images):
                        where = f"{subset}/{split} row {start + offset} ({self.files(subset, split)[0].parent})"
                        if not data:
                            raise SnapshotError(f"{where}: image has no bytes")
                        try:
                            with Image.open(io.BytesIO(data)) as im:
                                im.verify()
                        except Exception as exc:
                            raise SnapshotError(f"{where}: image does not decode ({exc})") from exc
            lines.append(f"{subset}/{split}: {len(labels)} rows")
        return lines

    @cached_property
    def content_hash(self) -> str:
        """sha256 over every parquet file's relative path and sha256: identifies the exact data."""
        digest = hashlib.sha256()
        for path in self.all_files():
            digest.update(f"{path.relative_to(self.root).as_posix()}\0{file_sha256(path)}\n".encode())
        return digest.hexdigest()


def open_snapshot(location: str | Path, verify: bool = True) -> Snapshot:
    """Open a snapshot from a local folder or an `hf://` location; check its MANIFEST.json when it has one."""
    root = resolve_snapshot_dir(location)
    if verify:
        verify_manifest(root)
    return Snapshot(root, location=str(location))
