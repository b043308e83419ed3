"""FashionIQ: `captions/cap.<category>.<split>.json` (`candidate`, `target`, two `captions`),
`image_splits/split.<category>.<split>.json` (the split's image ids) and the images (`images/<asin>.<ext>` or
`resized_images/<category>/`).

One composed subset per category (`composed_dress`, `composed_shirt`, `composed_toptee`), scored on the `val`
split (the test split's targets are not published): each caption pair is a query whose reference is the
candidate image and whose text is the two captions joined as CLIP4Cir's evaluation joins them; the gallery is the
split's images. The official evaluation leaves the candidate in the gallery, so the query's own id is
`candidate/<asin>` and nothing is removed from the ranking. The train split holds every train image, with the
caption pairs it is the candidate of.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from lookbench.datasets.legacy.context import ImportContext
from lookbench.datasets.legacy.source import json_field
from lookbench.errors import DatasetImportError
from lookbench.snapshot.card import SubsetCard
from lookbench.snapshot.composed import MAX_TEXT_CHARS

CATEGORIES = ("dress", "shirt", "toptee")
SCORED_SPLIT = "val"
QUERY_EXTRAS = {
    "modification_text": pa.string(),
    "target_ids": pa.list_(pa.string()),
    "captions": pa.list_(pa.string()),
}
TRAIN_EXTRAS = {"caption_texts": pa.list_(pa.string()), "caption_targets": pa.list_(pa.string())}


def join_captions(captions: list[str]) -> str:
    """The two relative captions as one modification text, as CLIP4Cir's `validate.py` builds it:
    `f"{c1.strip('.?, ').capitalize()} and {c2.strip('.?, ')}"` (the starter kit instead joins the two token lists
    with an `<and>` token for its own vocabulary)."""
    first, second = (c.strip(".?, ") for c in captions)
    return f"{first.capitalize()} and {second}"


def _image(ctx: ImportContext, category: str, asin: str) -> Path:
    for folder in (
        ctx.dist.root / "images",
        ctx.dist.root / "resized_images" / category,
        ctx.dist.root / "resized_images",
    ):
        found = ctx.dist.image_index(folder).get(asin)
        if found is not None:
            return found
    return ctx.dist.root / "images" / f"{asin}.png"


def _split_images(ctx: ImportContext, category: str, split: str) -> tuple[Path, list[tuple[str, str]]]:
    """The split file and its image ids, each with the `file:line` naming it (first listing of a repeated id)."""
    path = ctx.dist.find(f"split.{category}.{split}.json", "image_splits", "")
    assert path is not None
    images: dict[str, str] = {}
    for where, asin in ctx.dist.json_records(path, "image ids"):
        if not isinstance(asin, str) or not asin.strip() or "/" in asin or asin in (".", ".."):
            raise DatasetImportError(f"{where}: expected an image id (text without '/'), got {asin!r}")
        images.setdefault(asin, where)
    return path, [(where, asin) for asin, where in images.items()]


def _triplets(ctx: ImportContext, category: str, split: str) -> list[tuple[str, str, str, list[str]]]:
    path = ctx.dist.find(f"cap.{category}.{split}.json", "captions", "")
    assert path is not None
    out = []
    for where, record in ctx.dist.json_records(path, "caption records"):
        candidate = json_field(record, "candidate", str, where)
        target = json_field(record, "target", str, where)
        captions: Any = json_field(record, "captions", list, where)
        if len(captions) != 2 or not all(isinstance(c, str) for c in captions):
            raise DatasetImportError(f"{where}: captions must be a list of two texts, got {captions!r:.200}")
        if not any(c.strip(".?, ") for c in captions):
            raise DatasetImportError(f"{where}: both captions are empty")
        text = join_captions(captions)
        if len(text) > MAX_TEXT_CHARS:
            raise DatasetImportError(f"{where}: the captions are {len(text):,} characters (at most {MAX_TEXT_CHARS:,})")
        out.append((where, candidate, target, list(captions)))
    return out


def import_fashioniq(ctx: ImportContext) -> dict[str, SubsetCard]:
    """A composed subset per category present in `captions/`."""
    if ctx.options.detections is not None or ctx.options.tirg_queries is not None:
        raise DatasetImportError("fashioniq takes neither --detections nor --tirg-queries")
    present = [c for c in CATEGORIES if ctx.dist.find(f"cap.{c}.{SCORED_SPLIT}.json", "captions", "", required=False)]
    if not present:
        raise DatasetImportError(f"{ctx.dist.root}: missing list files captions/cap.<dress|shirt|toptee>.val.json")
    if len(present) < len(CATEGORIES):
        ctx.notes.append(f"only {', '.join(present)} present: the FashionIQ average needs all three categories")
    cards = {}
    for category in present:
        subset = f"composed_{category}"
        split_path, gallery = _split_images(ctx, category, SCORED_SPLIT)
        members = {asin for _, asin in gallery}
        for where, asin in gallery:
            _write(ctx, (subset, "gallery"), {}, where, category, asin, asin)
        for where, candidate, target, captions in _triplets(ctx, category, SCORED_SPLIT):
            for asin in (candidate, target):
                if asin not in members:
                    raise DatasetImportError(f"{where}: image {asin} is not in {ctx.dist.relative(split_path)}")
            _write(
                ctx,
                (subset, "query"),
                QUERY_EXTRAS,
                where,
                category,
                candidate,
                f"candidate/{candidate}",
                outfit_id=candidate,
                modification_text=join_captions(captions),
                target_ids=[target],
                captions=captions,
            )
        if ctx.options.train:
            _write_train(ctx, category, subset)
        cards[subset] = SubsetCard(title=f"FashionIQ {category}", description="val captions; Recall@10/50")
    return cards


def _write_train(ctx: ImportContext, category: str, subset: str) -> None:
    if ctx.dist.find(f"split.{category}.train.json", "image_splits", "", required=False) is None:
        ctx.notes.append(f"no image_splits/split.{category}.train.json: no train split for {subset}")
        return
    _, images = _split_images(ctx, category, "train")
    texts: dict[str, list[str]] = {}
    targets: dict[str, list[str]] = {}
    if ctx.dist.find(f"cap.{category}.train.json", "captions", "", required=False) is not None:
        for _where, candidate, target, captions in _triplets(ctx, category, "train"):
            texts.setdefault(candidate, []).append(join_captions(captions))
            targets.setdefault(candidate, []).append(target)
    for where, asin in images:
        _write(
            ctx,
            (subset, "train"),
            TRAIN_EXTRAS,
            where,
            category,
            asin,
            asin,
            caption_texts=texts.get(asin, []),
            caption_targets=targets.get(asin, []),
        )


def _write(
    ctx: ImportContext,
    split: tuple[str, str],
    extras: Mapping[str, pa.DataType],
    where: str,
    category: str,
    asin: str,
    item: str,
    **values: Any,
) -> None:
    path = _image(ctx, category, asin)
    stored = ctx.image(path, where)
    if stored is not None:
        ctx.add_category_row(split, extras, stored, where, path, category, item, **values)
