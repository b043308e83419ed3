"""Training data: snapshot splits with item classes and taxonomy targets, images packed in one memory-mapped file."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from lookbench._util.atomic import write_text_atomic
from lookbench._util.dates import snapshot_date
from lookbench._util.hashing import order_key, parts_sha256, sha256_digest, sha256_stream
from lookbench.errors import SnapshotError, TrainError
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.named import open_location
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, SPLITS, TRAIN
from lookbench.snapshot.synth_manifest import recorded_dropped_categories
from lookbench.taxonomy.designs import Labels
from lookbench.taxonomy.loader import load_taxonomy
from lookbench.train.config import (
    TrainData,
    Validation,
    reported_validation_message,
)
from lookbench.train.labels import LabelSpace, Targets, encode_targets

PACK_FORMAT = 1


def refuse_reported_validation(validation: Validation | None, reported: list[str], where: str) -> None:
    """Refuse (unless allowed) a validation snapshot whose content is one of the snapshots the run is reported on,
    whatever folder or name it is reached by."""
    if validation is None or validation.allow_evaluation_snapshot:
        return
    checked = open_location(validation.snapshot).content_hash
    for location in reported:
        if open_location(location).content_hash == checked:
            raise TrainError(reported_validation_message(f"{validation.snapshot} (= {location})", where))


def resolve_parts(snapshot: Snapshot, parts: list[str]) -> list[tuple[str, str]]:
    """`subset/split` names as (subset, split) pairs, each checked to exist; `*`: every `train` split, or every
    split present when the snapshot has no `train` split (a release whose queries and galleries are the pairs)."""
    if "*" in parts:
        found = [(s, TRAIN) for s in snapshot.subsets if snapshot.has_split(s, TRAIN)]
        if not found:
            found = [(s, sp) for s in (*snapshot.subsets, NOISE) for sp in SPLITS if _present(snapshot, s, sp)]
        if not found:
            raise TrainError(f"{snapshot.root}: no splits to train on")
        return found
    pairs = []
    for part in parts:
        subset, split = part.split("/")
        snapshot.files(subset, split)
        pairs.append((subset, split))
    return pairs


def _present(snapshot: Snapshot, subset: str, split: str) -> bool:
    try:
        snapshot.files(subset, split)
    except SnapshotError:
        return False
    return True


class PackedImages:
    """The encoded images of many parquet rows in one file (`images.bin`, `offsets.npy`), memory-mapped.

    Picklable by path, so DataLoader workers reopen the map instead of copying the bytes.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.offsets = np.load(folder / "offsets.npy")
        self.sha256 = np.load(folder / "sha256.npy")
        self._data: np.ndarray | None = None

    @property
    def data(self) -> np.ndarray:
        if self._data is None:
            size = int(self.offsets[-1])
            self._data = (
                np.memmap(self.folder / "images.bin", dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
            )
        return self._data

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, row: int) -> bytes:
        return self.data[int(self.offsets[row]) : int(self.offsets[row + 1])].tobytes()

    def sha256_hex(self, row: int) -> str:
        """The sha256 of row `row`'s encoded bytes."""
        return bytes(self.sha256[row]).hex()

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": self.folder}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["folder"])  # type: ignore[misc]


def pack_images(snapshot: Snapshot, pairs: list[tuple[str, str]], folder: Path) -> PackedImages:
    """Copy the image bytes of `pairs` (in order) into `folder`, written beside it and renamed into place."""
    if (folder / "meta.json").is_file():
        return PackedImages(folder)
    # a private temporary folder: a concurrent packer of the same data writes its own and one rename wins
    tmp = folder.with_name(f"{folder.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    tmp.mkdir(parents=True)
    offsets = [0]
    digests: list[bytes] = []
    with (tmp / "images.bin").open("wb") as out:
        for subset, split in pairs:
            for start, images in snapshot.iter_images(subset, split, batch_size=256):
                for offset, data in enumerate(images):
                    if not data:
                        raise TrainError(
                            f"snapshot {snapshot.snapshot_id} {subset}/{split} row {start + offset}: no bytes"
                        )
                    out.write(data)
                    offsets.append(offsets[-1] + len(data))
                    digests.append(sha256_digest(data))
    np.save(tmp / "offsets.npy", np.asarray(offsets, dtype=np.int64))
    np.save(tmp / "sha256.npy", np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(-1, 32))
    meta = {"format": PACK_FORMAT, "snapshot": snapshot.snapshot_id, "parts": [f"{s}/{sp}" for s, sp in pairs]}
    write_text_atomic(tmp / "meta.json", json.dumps(meta, indent=2))
    try:
        tmp.rename(folder)
    except OSError:
        if not (folder / "meta.json").is_file():
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return PackedImages(folder)


@dataclass(frozen=True)
class ImageRows:
    """Row i of a training set is image `rows[i]` of store `stores[store[i]]`."""

    stores: list[PackedImages]
    store: np.ndarray
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> bytes:
        return self.stores[int(self.store[i])][int(self.rows[i])]

    def sha256_hex(self, i: int) -> str:
        """The sha256 of row i's encoded bytes."""
        return self.stores[int(self.store[i])].sha256_hex(int(self.rows[i]))

    def take(self, rows: np.ndarray) -> ImageRows:
        """The given rows, in that order."""
        return ImageRows(self.stores, self.store[rows], self.rows[rows])


@dataclass(frozen=True)
class SourceInfo:
    """What one training source contributed, for the model card."""

    snapshot: str
    location: str
    content_hash: str
    parts: list[str]
    rows: int
    items: int
    sources: list[str]
    dropped_categories: list[str]
    """Categories the release left out because every design was excluded (a Synth `--exhausted-categories drop`)."""


@dataclass
class TrainingSet:
    """Images, their item class (dense 0..C-1), taxonomy targets, dates and where each row came from."""

    images: ImageRows
    classes: np.ndarray
    class_names: list[str]
    targets: Targets
    first_seen_at: np.ndarray
    origin: list[str]
    sources: list[SourceInfo]
    space: LabelSpace
    labels: list[Labels]
    """(category, attribute set) per row, as the snapshot holds them (category empty where unlabelled)."""

    def __len__(self) -> int:
        return len(self.classes)

    @property
    def num_classes(self) -> int:
        """Distinct items."""
        return len(self.class_names)

    def fingerprint(self) -> str:
        """sha256 of what is trained on: every row's image bytes (by digest), item and label targets, in order."""
        digest = sha256_stream()
        for name in self.class_names:
            digest.update(name.encode() + b"\0")
        digest.update(np.ascontiguousarray(self.classes).tobytes())
        for row in range(len(self.images)):
            digest.update(bytes.fromhex(self.images.sha256_hex(row)))
        t = self.targets
        for array in (t.category, t.single, t.multi_mask, *(t.multi[k] for k in sorted(t.multi))):
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()

    def select(self, rows: np.ndarray) -> TrainingSet:
        """The given rows, their classes renumbered densely (0..C-1, in the order of the original numbers)."""
        rows = np.asarray(rows, dtype=np.int64)
        kept = self.classes[rows]
        names, dense = np.unique(kept, return_inverse=True)
        return TrainingSet(
            self.images.take(rows),
            dense.astype(np.int64),
            [self.class_names[int(c)] for c in names],
            self.targets.take(rows),
            self.first_seen_at[rows],
            [self.origin[int(r)] for r in rows],
            self.sources,
            self.space,
            [self.labels[int(r)] for r in rows],
        )

    def training_cutoff(self) -> str | None:
        """The latest `first_seen_at` (ISO date) of the training rows: what the model may have seen."""
        dates = self.first_seen_at[~np.isnat(self.first_seen_at)]
        return None if not len(dates) else str(dates.max().astype("datetime64[D]"))


def _stable_order(items: list[str], seed: int) -> list[str]:
    """Items in a seeded order that does not depend on row order (nested fractions stay nested)."""
    return sorted(items, key=lambda item: order_key(f"{seed}\0{item}"))


def _keep_rows(labels: SplitLabels, source: TrainData, seed: int) -> np.ndarray:
    """Rows of items with at least `min_images` images, within the seeded `fraction` of items."""
    counts: dict[str, int] = {}
    for item in labels.item_id:
        if item:  # noise rows may leave item_ID empty: no identity to learn
            counts[item] = counts.get(item, 0) + 1
    eligible = [item for item, n in counts.items() if n >= source.min_images]
    order = _stable_order(eligible, seed)
    chosen = set(order[: max(1, int(np.ceil(source.fraction * len(order))))]) if order else set()
    return np.asarray([i for i, item in enumerate(labels.item_id) if item in chosen], dtype=np.int64)


def _source_values(snapshot: Snapshot, pairs: list[tuple[str, str]]) -> list[str]:
    found: set[str] = set()
    for subset, split in pairs:
        for path in snapshot.files(subset, split):
            if "source" in pq.read_schema(path).names:
                found.update(str(v) for v in pq.read_table(path, columns=["source"])["source"].to_pylist() if v)
    return sorted(found)


def load_training_set(sources: list[TrainData], seed: int, cache_dir: Path) -> TrainingSet:
    """Read every training source, pack its images (once, cached by content) and build classes and targets."""
    taxonomy = load_taxonomy()
    space = LabelSpace.of(taxonomy)
    stores: list[PackedImages] = []
    store_index: list[np.ndarray] = []
    store_rows: list[np.ndarray] = []
    item_ids: list[str] = []
    origin: list[str] = []
    targets: list[Targets] = []
    label_sets: list[Labels] = []
    dates: list[np.ndarray] = []
    infos: list[SourceInfo] = []
    for number, source in enumerate(sources):
        snapshot = open_location(source.snapshot)
        pairs = resolve_parts(snapshot, source.parts)
        key = parts_sha256(snapshot.content_hash, f"{pairs}")[:24]
        store = pack_images(snapshot, pairs, cache_dir / "train-data" / key)
        labels = SplitLabels.concat([snapshot.labels(s, sp) for s, sp in pairs])
        if len(labels) != len(store):
            raise TrainError(f"{store.folder}: {len(store)} packed images for {len(labels)} rows; delete it and rerun")
        names = [f"{snapshot.snapshot_id}/{s}/{sp}#{r}" for s, sp in pairs for r in range(snapshot.num_rows(s, sp))]
        keep = _keep_rows(labels, source, seed)
        if not len(keep):
            raise TrainError(f"data.train[{number}] ({source.snapshot}): no rows left (min_images {source.min_images})")
        kept = labels.take(keep)
        fallback = snapshot_date(snapshot.snapshot_id)
        row_dates = (
            kept.first_seen_at.copy()
            if kept.first_seen_at is not None
            else np.full(len(kept), np.datetime64("NaT"), dtype="datetime64[us]")
        )
        if fallback is not None:
            row_dates[np.isnat(row_dates)] = fallback
        stores.append(store)
        store_index.append(np.full(len(keep), len(stores) - 1, dtype=np.int64))
        store_rows.append(keep)
        item_ids.extend(kept.item_id)
        origin.extend(names[int(r)] for r in keep)
        targets.append(encode_targets(kept, space, taxonomy))
        label_sets.extend((kept.category[r], kept.attribute_set(r)) for r in range(len(kept)))
        dates.append(row_dates)
        infos.append(
            SourceInfo(
                snapshot=snapshot.snapshot_id,
                location=snapshot.location,
                content_hash=snapshot.content_hash,
                parts=[f"{s}/{sp}" for s, sp in pairs],
                rows=len(keep),
                items=len(set(kept.item_id)),
                sources=_source_values(snapshot, pairs),
                dropped_categories=list(recorded_dropped_categories(snapshot.root)),
            )
        )
    class_names, classes = np.unique(np.asarray(item_ids, dtype=object), return_inverse=True)
    return TrainingSet(
        images=ImageRows(stores, np.concatenate(store_index), np.concatenate(store_rows)),
        classes=classes.astype(np.int64),
        class_names=[str(c) for c in class_names],
        targets=Targets.concat(targets),
        first_seen_at=np.concatenate(dates),
        origin=origin,
        sources=infos,
        space=space,
        labels=label_sets,
    )
