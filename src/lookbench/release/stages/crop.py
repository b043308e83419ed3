"""Crop: rows carrying a full photo (`raw_image`) become the crop of their garment in that photo."""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from PIL import Image

from lookbench._util.hashing import json_sha256, sha256_hex
from lookbench._util.images import BadImageError, decode_image, opened
from lookbench.release.config import CropConfig
from lookbench.release.detect.base import Box, GarmentDetector, Photo, box_problem, clipped, iou
from lookbench.release.detect.truth import TruthDetector
from lookbench.release.detect.vlm import VLMDetector
from lookbench.release.records import Sample, write_table
from lookbench.release.sharding import UsageDelta, asked_fingerprint, http_needs, usage_of
from lookbench.release.stages.base import StageContext, StageResult, StageStats, run_items, samples_of, save_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiRejected, run_concurrently
from lookbench.shards.executor import Needs, Progress
from lookbench.shards.table import Mapped, TableJob
from lookbench.taxonomy import load_taxonomy

DROPPED_SCHEMA = pa.schema([("sample_id", pa.string()), ("reason", pa.string())])


class CropStats(StageStats):
    """Photos detected, crops cut, boxes dropped and why."""

    detector: dict[str, Any]
    photos: int
    photos_rejected: int
    crops: int
    rows_without_box: int
    boxes_tiny: int
    boxes_degenerate: int
    boxes_unmatched: int
    mean_iou_with_known_boxes: float | None


@dataclass
class PhotoRows:
    """A photo and the rows (one per garment) that carry it."""

    photo: Photo
    rows: list[Sample]


def encode_crop(photo: Image.Image, box: Box) -> bytes:
    """JPEG (q95) of the box, rounded outwards to whole pixels."""
    x0, y0, x1, y1 = box.bbox
    region = photo.crop((int(x0), int(y0), -int(-x1), -int(-y1))).convert("RGB")
    buf = io.BytesIO()
    region.save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def assign(rows: list[Sample], boxes: list[Box]) -> dict[int, Box]:
    """Row index -> box of its category: by IoU with a known box, else the largest free one."""
    free = list(boxes)
    chosen: dict[int, Box] = {}
    for index, row in sorted(enumerate(rows), key=lambda ir: ir[1].bbox is None):
        same = [b for b in free if b.category == row.category]
        if not same:
            continue
        known = tuple(row.bbox) if row.bbox else None
        best = max(same, key=lambda b: iou(b.bbox, known) if known else b.area)
        if known and iou(best.bbox, known) == 0:
            continue
        chosen[index] = best
        free.remove(best)
    return chosen


BOX = pa.struct([("category", pa.string()), ("bbox", pa.list_(pa.float64())), ("score", pa.float64())])
DETECTION_SCHEMA = pa.schema([("boxes", pa.list_(BOX)), ("rejected", pa.string())])
"""A shard's output: the boxes found in each photo, or why the detector refused it."""
PHOTO_SHARD_ITEMS = 64
"""Photos per detection shard (a GPU detector's shard: a minute or two of forward passes)."""


def make_detector(settings: CropConfig, cache: Path, slots: int | None = None) -> GarmentDetector:
    """The configured detector; a VLM's client keeps `slots` requests in flight (default: its api concurrency)."""
    if settings.detector == "vlm" and settings.api is not None:
        api = settings.api if slots is None else settings.api.model_copy(update={"concurrency": slots})
        return VLMDetector(api, load_taxonomy(), AnswerCache(cache))
    if settings.detector == "owl" and settings.owl is not None:
        from lookbench.release.detect.owl import OwlDetector

        return OwlDetector(settings.owl, load_taxonomy())
    return TruthDetector()


@dataclass(frozen=True)
class Detections:
    """Finds the garments of a shard's photos with the configured detector, opened once per worker."""

    settings: CropConfig
    cache: Path
    loaded: GarmentDetector | None = field(default=None, compare=False, repr=False)
    """The driver's detector, used when shards run in the driver's process (never sent to a worker)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (Detections, (self.settings, self.cache))

    def open(self, slots: int) -> Detecting:
        """The detector (a VLM's client with `slots` requests in flight)."""
        detector = self.loaded or make_detector(self.settings, self.cache, slots)
        usage = None
        if isinstance(detector, VLMDetector):
            usage = UsageDelta(detector.asker.client.usage, detector.asker.cache)
        return Detecting(detector, slots, usage)


@dataclass
class Detecting:
    """An opened `Detections`."""

    detector: GarmentDetector
    slots: int
    usage: UsageDelta | None

    def one(self, photo: Photo) -> dict[str, Any]:
        """The boxes of one photo, or why the detector refused it."""
        try:
            boxes = self.detector.detect(photo)
        except ApiRejected as exc:
            return {"boxes": [], "rejected": str(exc)}
        return {
            "boxes": [{"category": b.category, "bbox": list(b.bbox), "score": b.score} for b in boxes],
            "rejected": None,
        }

    def __call__(self, photos: list[Photo], progress: Progress) -> Mapped:
        """One row of boxes per photo, with the shard's usage when the detector asks an endpoint."""
        rows = list(run_concurrently(self.one, photos, self.slots))
        progress(len(photos))
        return self.usage.mapped(rows) if self.usage is not None else Mapped(rows)

    def close(self) -> None:
        """Nothing to release: the model goes with the process."""


def detect_as_shards(
    ctx: StageContext, stage: str, settings: CropConfig, detector: GarmentDetector, photos: list[Photo]
) -> tuple[list[list[Box]], list[str | None], dict[str, Any]]:
    """(boxes per photo, why each was refused or None, the detector's description with the usage of every shard)."""
    needs = Needs("cpu", stateful=True)
    fingerprint = json_sha256([settings.fingerprint(), detector.describe().get("revision")])
    if isinstance(detector, VLMDetector) and settings.api is not None:
        from lookbench.release.detect.vlm import PROMPT_VERSION

        needs = http_needs(settings.api)
        fingerprint = asked_fingerprint(settings.api, PROMPT_VERSION, detector.asker.attempts)
    elif detector.device.startswith("cuda"):
        needs = Needs("gpu", stateful=True)
    job = TableJob("detect", needs, DETECTION_SCHEMA, Detections(settings, ctx.state / "detection-cache", detector))
    keys = [f"{photo.sha256}:{photo.width}x{photo.height}" for photo in photos]
    result = run_items(ctx, stage, job, photos, keys, fingerprint, PHOTO_SHARD_ITEMS)
    boxes = [[Box(b["category"], tuple(b["bbox"]), b["score"]) for b in row["boxes"]] for row in result.rows]
    described = detector.describe()
    if settings.api is not None and isinstance(detector, VLMDetector):
        described = {**described, **usage_of(settings.api, result.stats)}
    return boxes, [row["rejected"] for row in result.rows], described


class CropStage:
    """One query per garment: crop, bbox, raw_image and outfit_id; tiny, degenerate and unmatched boxes counted."""

    name = "crop"
    stats_type = CropStats

    def __init__(self, settings: CropConfig) -> None:
        self.settings = settings

    def check(self) -> None:
        """The detector's dependencies (OWL: transformers and a reachable model)."""
        if self.settings.detector == "owl" and self.settings.owl is not None:
            from lookbench.release.detect.owl import check_owl

            check_owl(self.settings.owl)

    def fingerprint(self, ctx: StageContext) -> str:
        """The crop settings."""
        return self.settings.fingerprint()

    def detector(self, ctx: StageContext) -> GarmentDetector:
        """The configured detector backend."""
        return make_detector(self.settings, ctx.state / "detection-cache")

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        """Detect garments per photo, cut each row's crop; rows without a photo pass through unchanged."""
        settings = self.settings
        samples = samples_of(previous)
        photos = self._photos(ctx, [s for s in samples if s.raw_image])
        detector = self.detector(ctx)
        described = detector.describe()
        rejected: list[str] = []
        found: dict[str, list[Box]] = {sha: group.photo.known for sha, group in photos.items()}
        if not isinstance(detector, TruthDetector):  # the detector's calls run as shards
            boxes, refused, described = detect_as_shards(
                ctx, self.name, settings, detector, [group.photo for group in photos.values()]
            )
            found = dict(zip(photos, boxes, strict=True))
            for sha, why in zip(photos, refused, strict=True):
                if why is not None:
                    rejected.append(sha)
                    ctx.report("crop", f"photo {sha[:16]}", f"detector: {why}")
        counts: Counter[str] = Counter()
        dropped: list[dict[str, str]] = []
        ious: list[float] = []
        gone: set[str] = set()
        for sha, group in photos.items():
            photo = group.photo
            usable = []
            for box in found[sha]:
                box = clipped(box, photo.width, photo.height)
                problem = box_problem(box, photo.width, photo.height, settings.min_side, settings.min_area_fraction)
                counts[f"boxes_{problem}"] += problem is not None
                usable += [box] if problem is None else []
            assigned = assign(group.rows, usable)
            counts["boxes_unmatched"] += len(usable) - len(assigned)
            image = decode_image(photo.data)
            for index, row in enumerate(group.rows):
                chosen = assigned.get(index)
                if chosen is None:
                    dropped.append({"sample_id": row.sample_id, "reason": "no usable box of its category"})
                    gone.add(row.sample_id)
                    continue
                if row.bbox:
                    ious.append(iou(chosen.bbox, tuple(row.bbox)))
                row.replace_image(encode_crop(image, chosen))
                row.bbox = [float(v) for v in chosen.bbox]
                row.outfit_id = row.outfit_id or f"outfit-{sha[:16]}"
        kept = [s for s in samples if s.sample_id not in gone]
        write_table(pa.Table.from_pylist(dropped, schema=DROPPED_SCHEMA), ctx.folder(self.name) / "dropped.parquet")
        stats = CropStats(
            detector=described,
            photos=len(photos),
            photos_rejected=len(rejected),
            crops=sum(len(g.rows) for g in photos.values()) - len(dropped),
            rows_without_box=len(dropped),
            boxes_tiny=counts["boxes_tiny"],
            boxes_degenerate=counts["boxes_degenerate"],
            boxes_unmatched=counts["boxes_unmatched"],
            mean_iou_with_known_boxes=round(sum(ious) / len(ious), 4) if ious else None,
        )
        return StageResult(save_samples(ctx, self.name, kept), stats)

    def _photos(self, ctx: StageContext, scenes: list[Sample]) -> dict[str, PhotoRows]:
        """The photos of the rows that carry one (each detected once); undecodable photos are problems."""
        photos: dict[str, PhotoRows] = {}
        for row in scenes:
            assert row.raw_image is not None
            sha = sha256_hex(row.raw_image)
            if sha not in photos:
                try:
                    with opened(row.raw_image) as im:
                        width, height = im.size
                except BadImageError as exc:
                    ctx.report(row.source, row.source_url or row.sample_id, f"crop: the photo {exc}")
                    row.raw_image = None
                    continue
                photos[sha] = PhotoRows(Photo(sha, row.raw_image, width, height), [])
            if row.bbox:
                photos[sha].photo.known.append(Box(row.category, (row.bbox[0], row.bbox[1], row.bbox[2], row.bbox[3])))
            photos[sha].rows.append(row)
        return photos
