"""Crop stage: rows carrying a full photo (`raw_image`) become the crop of their garment in that photo."""

from __future__ import annotations

import hashlib
import io
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
from PIL import Image

from lookbench.release.crops.base import Box, GarmentDetector, Photo, box_problem, clipped, iou
from lookbench.release.crops.owl import OwlDetector
from lookbench.release.crops.truth import TruthDetector
from lookbench.release.crops.vlm import VLMDetector
from lookbench.release.part2_config import CropConfig
from lookbench.release.sample import write_table
from lookbench.release.stages.base import BuildContext, StageResult, read_samples, write_samples
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiRejected, run_concurrently
from lookbench.taxonomy import load_taxonomy


def make_detector(config: CropConfig, ctx: BuildContext) -> GarmentDetector:
    """The configured detector backend."""
    if config.detector == "vlm" and config.api is not None:
        return VLMDetector(config.api, load_taxonomy(), AnswerCache(ctx.config.state_dir / "detection-cache"))
    if config.detector == "owl" and config.owl is not None:
        return OwlDetector(config.owl, load_taxonomy())
    return TruthDetector()


def encode_crop(photo: Image.Image, box: Box) -> bytes:
    """JPEG (q95) of the box, rounded outwards to whole pixels."""
    x0, y0, x1, y1 = box.bbox
    region = photo.crop((int(x0), int(y0), -int(-x1), -int(-y1))).convert("RGB")
    buf = io.BytesIO()
    region.save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def _photos(rows: list[dict[str, Any]]) -> dict[str, Photo]:
    photos: dict[str, Photo] = {}
    for row in rows:
        sha = hashlib.sha256(row["raw_image"]).hexdigest()
        if sha not in photos:
            with Image.open(io.BytesIO(row["raw_image"])) as im:
                photos[sha] = Photo(sha, row["raw_image"], im.width, im.height)
        if row.get("bbox"):
            photos[sha].known.append(Box(row["category"], tuple(row["bbox"])))  # type: ignore[arg-type]
        row["_photo"] = sha
    return photos


def _assign(rows: list[dict[str, Any]], boxes: list[Box]) -> dict[int, Box]:
    """Row index -> box of its category: by IoU with a known box, else the largest free one."""
    free = list(boxes)
    chosen: dict[int, Box] = {}
    for index, row in sorted(enumerate(rows), key=lambda ir: ir[1].get("bbox") is None):
        same = [b for b in free if b.category == row["category"]]
        if not same:
            continue
        known = row.get("bbox")
        best = max(same, key=lambda b: iou(b.bbox, tuple(known)) if known else b.area)
        if known and iou(best.bbox, tuple(known)) == 0:
            continue
        chosen[index] = best
        free.remove(best)
    return chosen


class CropStage:
    """One query per garment: crop, bbox, raw_image and outfit_id; tiny, degenerate and unmatched boxes counted."""

    name = "crop"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        """Detect garments per photo, cut each row's crop; rows without a photo pass through unchanged."""
        config = ctx.config.crop or CropConfig.model_validate({})
        table = read_samples(previous)
        rows = table.to_pylist()
        scenes = [r for r in rows if r.get("raw_image")]
        photos = _photos(scenes)
        detector = make_detector(config, ctx)
        workers = config.api.concurrency if config.api else 1
        rejected: list[str] = []

        def detect(sha: str) -> list[Box]:
            try:
                return detector.detect(photos[sha])
            except ApiRejected as exc:
                rejected.append(sha)
                ctx.problems.append({"source": "crop", "url": f"photo {sha[:16]}", "error": f"detector: {exc}"})
                return []

        found = dict(zip(photos, run_concurrently(detect, list(photos), workers), strict=True))
        counts: Counter[str] = Counter()
        dropped: list[dict[str, Any]] = []
        ious: list[float] = []
        by_photo: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in scenes:
            by_photo[row.pop("_photo")].append(row)
        for sha, members in by_photo.items():
            photo = photos[sha]
            usable = []
            for box in found[sha]:
                box = clipped(box, photo.width, photo.height)
                problem = box_problem(box, photo.width, photo.height, config.min_side, config.min_area_fraction)
                counts[f"boxes_{problem}"] += problem is not None
                usable += [box] if problem is None else []
            assigned = _assign(members, usable)
            counts["boxes_unmatched"] += len(usable) - len(assigned)
            with Image.open(io.BytesIO(photo.data)) as im:
                im.load()
                for index, row in enumerate(members):
                    found_box = assigned.get(index)
                    if found_box is None:
                        dropped.append({"sample_id": row["sample_id"], "reason": "no usable box of its category"})
                        row["_drop"] = True
                        continue
                    if row.get("bbox"):
                        ious.append(iou(found_box.bbox, tuple(row["bbox"])))
                    row["image"] = encode_crop(im, found_box)
                    row["image_sha256"] = hashlib.sha256(row["image"]).hexdigest()
                    row["bbox"] = [float(v) for v in found_box.bbox]
                    row["outfit_id"] = row.get("outfit_id") or f"outfit-{sha[:16]}"
        kept = [r for r in rows if not r.pop("_drop", False)]
        write_table(
            pa.Table.from_pylist(dropped, schema=pa.schema([("sample_id", pa.string()), ("reason", pa.string())])),
            ctx.folder(self.name) / "dropped.parquet",
        )
        stats = {
            "detector": detector.describe(),
            "photos": len(photos),
            "photos_rejected": len(rejected),
            "crops": len(scenes) - len(dropped),
            "rows_without_box": len(dropped),
            "boxes_tiny": counts["boxes_tiny"],
            "boxes_degenerate": counts["boxes_degenerate"],
            "boxes_unmatched": counts["boxes_unmatched"],
            "mean_iou_with_known_boxes": round(sum(ious) / len(ious), 4) if ious else None,
        }
        return StageResult(write_samples(ctx, self.name, pa.Table.from_pylist(kept, schema=table.schema)), stats)
