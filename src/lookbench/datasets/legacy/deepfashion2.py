"""DeepFashion2 consumer-to-shop retrieval: per-image JSON (`source`, `pair_id`, `item1..N` with `category_name`,
`style`, `bounding_box`) under `validation/annos` (scored) and `train/annos` (train split), images under `*/image`.

Queries are consumer (`user`) items with style > 0; the gallery is every shop item. Item ids: `pair_id/style` for
style > 0 (the official match rule), a unique id otherwise. With `--detections`, boxes come from a detector's COCO
results file and the official selection is followed (each detection assigned to the ground-truth item of its
image it overlaps most; per ground-truth query item, the highest-scoring detection of the right category among
those assigned to it); a query item without one is kept with `detector_missed = true` and scores 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.datasets.legacy.context import ImportContext
from lookbench.datasets.legacy.source import json_field
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SubsetCard

SUBSET = "deepfashion2"
MATCH_IOU = 0.5
EXTRAS = {
    "pair_id": pa.int64(),
    "style": pa.int64(),
    "image_id": pa.string(),
    "item": pa.string(),
    "detector_missed": pa.bool_(),
    "detection_score": pa.float64(),
    "match_keys": pa.list_(pa.string()),
}
_ITEM = re.compile(r"item(\d+)")
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Item:
    """One annotated clothing item of an image."""

    key: str
    category_id: int
    category: str
    style: int
    box: Box


@dataclass(frozen=True)
class Annotation:
    """One image's JSON."""

    image_id: str
    path: Path
    source: str
    pair_id: int
    items: list[Item]


def _box(value: Any, where: str) -> Box:
    if not isinstance(value, list) or len(value) != 4 or not all(isinstance(v, (int, float)) for v in value):
        raise DatasetImportError(f"{where}: bounding_box must be [x1, y1, x2, y2] numbers, got {value!r}")
    x1, y1, x2, y2 = (float(v) for v in value)
    if x2 <= x1 or y2 <= y1:
        raise DatasetImportError(f"{where}: bounding_box {value} has no area")
    return (x1, y1, x2, y2)


def read_annotation(ctx: ImportContext, path: Path) -> Annotation:
    """One per-image JSON, validated."""
    data = ctx.dist.json(path)
    where = ctx.dist.relative(path)
    source = json_field(data, "source", str, where)
    if source not in ("user", "shop"):
        raise DatasetImportError(f"{where}: source must be 'user' or 'shop', got {source!r}")
    pair_id = json_field(data, "pair_id", int, where)
    items = []
    for key in sorted((k for k in data if _ITEM.fullmatch(k)), key=lambda k: int(k[4:])):
        at = f"{where}: {key}"
        record = data[key]
        style = json_field(record, "style", int, at)
        if style < 0:
            raise DatasetImportError(f"{at}: style must be >= 0, got {style}")
        category_id = json_field(record, "category_id", int, at)
        name = record.get("category_name") if isinstance(record, dict) else None
        items.append(
            Item(
                key,
                category_id,
                name if isinstance(name, str) else str(category_id),
                style,
                _box(json_field(record, "bounding_box", list, at), at),
            )
        )
    return Annotation(path.stem, path, source, pair_id, items)


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two `(x1, y1, x2, y2)` boxes (as pycocotools computes it for boxes)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


@dataclass(frozen=True)
class Detection:
    """A detector's box on one image."""

    category_id: int
    box: Box
    score: float
    where: str


def read_detections(ctx: ImportContext, path: Path) -> dict[str, list[Detection]]:
    """COCO results `[{image_id, category_id, bbox: [x, y, w, h], score}]` by six-digit image id."""
    out: dict[str, list[Detection]] = {}
    for where, record in ctx.dist.json_records(path, "detections"):
        image = json_field(record, "image_id", int, where)
        x, y, w, h = _box_xywh(json_field(record, "bbox", list, where), where)
        score = float(json_field(record, "score", (int, float), where))
        category = json_field(record, "category_id", int, where)
        out.setdefault(f"{image:06d}", []).append(Detection(category, (x, y, x + w, y + h), score, where))
    return out


def _box_xywh(value: list[Any], where: str) -> Box:
    if len(value) != 4 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        raise DatasetImportError(f"{where}: bbox must be [x, y, width, height] numbers, got {value!r}")
    x, y, w, h = (float(v) for v in value)
    if w <= 0 or h <= 0:
        raise DatasetImportError(f"{where}: bbox {value} has no area")
    return (x, y, w, h)


def match_key(pair_id: int, item: Item, image_id: str) -> str:
    """The official match: same pair_id and style, style > 0; a style-0 item matches nothing."""
    return f"{pair_id}/{item.style}" if item.style > 0 else f"{pair_id}/0/{image_id}/{item.key}"


def select_query_detections(items: list[Item], detections: list[Detection]) -> dict[str, Detection]:
    """The official choice of a detection per ground-truth item: detections go to the item they overlap most
    (argmax IoU over every item of the image, no threshold); per item the best-scoring one of its category."""
    chosen: dict[str, Detection] = {}
    for det in detections:
        overlaps = [iou(det.box, item.box) for item in items]
        item = items[max(range(len(items)), key=lambda i: overlaps[i])]
        if det.category_id != item.category_id:
            continue
        if item.key not in chosen or det.score > chosen[item.key].score:
            chosen[item.key] = det
    return chosen


def _split_dir(ctx: ImportContext, name: str, required: bool) -> tuple[Path, Path] | None:
    annos, images = ctx.dist.root / name / "annos", ctx.dist.root / name / "image"
    if not annos.is_dir():
        if required:
            raise DatasetImportError(f"{ctx.dist.root}: missing {name}/annos (the per-image JSON files)")
        return None
    return annos, images


def _write_items(ctx: ImportContext, annos: Path, images: Path, split: str) -> None:
    """Rows of one image set: `split` is `eval` (query and gallery) or `train`."""
    detections = read_detections(ctx, ctx.options.detections) if ctx.options.detections and split != "train" else None
    files = sorted(annos.glob("*.json"))
    if not files:
        raise DatasetImportError(f"{annos}: no annotation files")
    for path in files:
        ann = read_annotation(ctx, path)
        image_path = images / f"{ann.image_id}.jpg"
        where = ctx.dist.relative(path)
        common = {"pair_id": ann.pair_id, "image_id": ann.image_id, "outfit_id": ann.image_id}
        if split == "train":
            for item in ann.items:
                stored = ctx.crop(image_path, item.box, f"{where}: {item.key}")
                if stored is not None:
                    _add(ctx, "train", stored, where, image_path, ann, item, None, False, common)
            continue
        targets: list[tuple[Item, Box, float | None, bool]]
        if detections is None:
            targets = [(item, item.box, None, False) for item in ann.items if ann.source == "shop" or item.style > 0]
        elif ann.source == "user":
            chosen = select_query_detections(ann.items, detections.get(ann.image_id, []))
            targets = [
                (
                    item,
                    chosen[item.key].box if item.key in chosen else item.box,
                    chosen[item.key].score if item.key in chosen else None,
                    item.key not in chosen,
                )
                for item in ann.items
                if item.style > 0
            ]
        else:
            targets = []
            for number, det in enumerate(detections.get(ann.image_id, [])):
                best = max(ann.items, key=lambda it: iou(det.box, it.box), default=None)
                if best is not None and best.style > 0 and iou(det.box, best.box) >= MATCH_IOU:
                    targets.append((best, det.box, det.score, False))
                else:
                    fake = Item(f"detection{number}", det.category_id, best.category if best else "", 0, det.box)
                    targets.append((fake, det.box, det.score, False))
        split_of = "query" if ann.source == "user" else "gallery"
        for item, box, score, missed in targets:
            stored = ctx.crop(image_path, box, f"{where}: {item.key}")
            if stored is not None:
                keys = gallery_match_keys(ann, box) if split_of == "gallery" else None
                _add(ctx, split_of, stored, where, image_path, ann, item, score, missed, {**common, "match_keys": keys})


def gallery_match_keys(ann: Annotation, box: Box) -> list[str]:
    """The official rule for a retrieved shop box: it is correct for a query of pair P and style S when it overlaps a
    ground-truth item of P and S in its image by IoU >= 0.5 (so an outerwear box over a top answers the top)."""
    overlapped = [it for it in ann.items if it.style > 0 and iou(box, it.box) >= MATCH_IOU]
    return sorted({match_key(ann.pair_id, it, ann.image_id) for it in overlapped})


def _add(
    ctx: ImportContext,
    split: str,
    stored: Any,
    where: str,
    image_path: Path,
    ann: Annotation,
    item: Item,
    score: float | None,
    missed: bool,
    common: dict[str, Any],
) -> None:
    ctx.writer.split(SUBSET, split, EXTRAS).add(
        stored,
        f"{where}: {item.key}",
        ctx.dist.relative(image_path),
        category=item.category,
        main_attribute="",
        other_attributes=[],
        item_ID=match_key(ann.pair_id, item, ann.image_id),
        bbox=list(item.box),
        style=item.style,
        item=item.key,
        detector_missed=missed if split == "query" else None,
        detection_score=score,
        **common,
    )


def import_deepfashion2(ctx: ImportContext) -> dict[str, SubsetCard]:
    """Validation images as query (consumer items, style > 0) and gallery (shop items); train images as `train`."""
    if ctx.options.tirg_queries is not None:
        raise DatasetImportError("deepfashion2 takes no --tirg-queries")
    scored = _split_dir(ctx, "validation", required=True)
    assert scored is not None
    _write_items(ctx, *scored, split="eval")
    if ctx.options.detections is not None:
        ctx.notes.append(
            f"boxes from detections {ctx.options.detections}: query items the detector missed are kept with "
            "detector_missed = true and score 0; gallery items are the detections on shop images"
        )
    if ctx.options.train:
        train = _split_dir(ctx, "train", required=False)
        if train is None:
            ctx.notes.append("no train/annos: no train split written")
        else:
            _write_items(ctx, *train, split="train")
    return {
        SUBSET: SubsetCard(
            title="DeepFashion2",
            description="consumer items (style > 0) against every shop item of the validation set; "
            "match = same pair_id and style",
        )
    }
