"""Street2Shop ("Where to Buy It"): `meta/json/retrieval_<cat>.json` (shop photos of each product),
`test_pairs_<cat>.json` and `train_pairs_<cat>.json` (street photos with the product's box), and the photos as
downloaded from `photos.txt` (`images/<photo id>.<ext>`, the id as written or zero-padded to 9 digits).

One subset per category, `street2shop_<cat>`: the category's test street crops searched against every shop photo
of the category, as the paper evaluates each category separately.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.datasets.legacy.context import ImportContext
from lookbench.datasets.legacy.source import json_field
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SubsetCard

EXTRAS = {"photo_id": pa.string(), "product_id": pa.string()}


def _meta_dir(ctx: ImportContext) -> Path:
    for folder in ("meta/json", "json", "meta/meta/json", ""):
        path = ctx.dist.root / folder
        if any(path.glob("retrieval_*.json")):
            return path
    raise DatasetImportError(f"{ctx.dist.root}: missing meta/json/retrieval_<category>.json files")


def _records(ctx: ImportContext, path: Path) -> list[tuple[str, dict[str, Any]]]:
    return ctx.dist.json_records(path, "records")


def _photo(ctx: ImportContext, photo: int) -> Path:
    index = ctx.dist.image_index(ctx.dist.root / "images")
    if not index:
        index = ctx.dist.image_index(ctx.dist.root / "photos")
    found = index.get(f"{photo:09d}") or index.get(str(photo))
    return found if found is not None else ctx.dist.root / "images" / f"{photo:09d}.jpg"


def _pair_box(record: dict[str, Any], where: str) -> tuple[float, float, float, float]:
    bbox = json_field(record, "bbox", dict, where)
    values = []
    for key in ("left", "top", "width", "height"):
        value = json_field(bbox, key, (int, float), f"{where}: bbox")
        values.append(float(value))
    left, top, width, height = values
    if width <= 0 or height <= 0:
        raise DatasetImportError(f"{where}: bbox has no area ({bbox})")
    return (left, top, left + width, top + height)


def _write_pairs(ctx: ImportContext, path: Path, subset: str, category: str, split: str) -> int:
    written = 0
    for where, record in _records(ctx, path):
        product = json_field(record, "product", int, where)
        photo = json_field(record, "photo", int, where)
        image = _photo(ctx, photo)
        stored = ctx.crop(image, _pair_box(record, where), where)
        if stored is None:
            continue
        ctx.add_category_row(
            (subset, split),
            EXTRAS,
            stored,
            where,
            image,
            category,
            str(product),
            outfit_id=str(photo),
            bbox=list(_pair_box(record, where)),
            photo_id=str(photo),
            product_id=str(product),
        )
        written += 1
    return written


def import_street2shop(ctx: ImportContext) -> dict[str, SubsetCard]:
    """Per category: `test_pairs` street crops as queries, `retrieval` shop photos as gallery, `train_pairs`
    street crops as train."""
    if ctx.options.detections is not None or ctx.options.tirg_queries is not None:
        raise DatasetImportError("street2shop takes neither --detections nor --tirg-queries")
    meta = _meta_dir(ctx)
    for test in sorted(meta.glob("test_pairs_*.json")):
        retrieval = meta / f"retrieval_{test.stem.removeprefix('test_pairs_')}.json"
        if not retrieval.is_file():
            raise DatasetImportError(f"{meta}: missing list file {retrieval.name} for {test.name}")
    cards: dict[str, SubsetCard] = {}
    for retrieval in sorted(meta.glob("retrieval_*.json")):
        category = retrieval.stem.removeprefix("retrieval_")
        subset = f"street2shop_{category}"
        test = meta / f"test_pairs_{category}.json"
        if not test.is_file():
            raise DatasetImportError(f"{meta}: missing list file test_pairs_{category}.json for {retrieval.name}")
        _write_pairs(ctx, test, subset, category, "query")
        seen: set[tuple[int, int]] = set()
        for where, record in _records(ctx, retrieval):
            product = json_field(record, "product", int, where)
            photo = json_field(record, "photo", int, where)
            if (product, photo) in seen:
                continue
            seen.add((product, photo))
            image = _photo(ctx, photo)
            stored = ctx.image(image, where)
            if stored is None:
                continue
            ctx.add_category_row(
                (subset, "gallery"),
                EXTRAS,
                stored,
                where,
                image,
                category,
                str(product),
                photo_id=str(photo),
                product_id=str(product),
            )
        train = meta / f"train_pairs_{category}.json"
        if ctx.options.train and train.is_file():
            _write_pairs(ctx, train, subset, category, "train")
        cards[subset] = SubsetCard(
            title=f"Street2Shop {category}",
            description=f"test street crops of {category} against every {category} shop photo; match = same product",
        )
    return cards
