"""Contact sheets: sample queries beside their gallery positive and hard negatives, with labels."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from PIL import Image, ImageDraw, ImageOps

from lookbench.atomic import atomic_path
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot

THUMB = 128
CAPTION = 30


def _thumb(data: bytes, caption: str, border: tuple[int, int, int]) -> Image.Image:
    tile = Image.new("RGB", (THUMB, THUMB + CAPTION), (255, 255, 255))
    image = ImageOps.contain(Image.open(io.BytesIO(data)).convert("RGB"), (THUMB - 6, THUMB - 6))
    tile.paste(image, ((THUMB - image.width) // 2, (THUMB - image.height) // 2))
    draw = ImageDraw.Draw(tile)
    draw.rectangle([0, 0, THUMB - 1, THUMB - 1], outline=border, width=3)
    for k, line in enumerate(caption.split("\n")[:2]):
        draw.text((3, THUMB + 2 + 13 * k), line[:22], fill=(0, 0, 0))
    return tile


def _caption(row: dict[str, Any]) -> str:
    return f"{row['category']}\n{row['main_attribute']}"


def _bytes(row: dict[str, Any]) -> bytes:
    return bytes(row["image"]["bytes"])


def contact_sheet(snapshot: Path, subset: str, rows: int = 8) -> Image.Image:
    """One subset's sheet: per row a query (blue), its exact product (green), its hard negatives (red)."""
    snap = open_snapshot(snapshot)
    queries = pq.read_table(snap.files(subset, "query")[0]).slice(0, rows).to_pylist()
    gallery = pq.read_table(snap.files(subset, "gallery")[0]).to_pylist()
    by_id = {str(r["item_ID"]): r for r in gallery}
    negatives: dict[str, list[dict[str, Any]]] = {}
    for r in gallery:
        if r.get("hard_negative_of"):
            negatives.setdefault(str(r["hard_negative_of"]), []).append(r)
    width = max(2 + len(v) for v in negatives.values()) if negatives else 2
    sheet = Image.new("RGB", (THUMB * width, (THUMB + CAPTION) * len(queries)), (235, 235, 235))
    for y, query in enumerate(queries):
        item = str(query["item_ID"])
        tiles = [_thumb(_bytes(query), _caption(query), (40, 90, 220))]
        if item in by_id:
            tiles.append(_thumb(_bytes(by_id[item]), _caption(by_id[item]), (30, 160, 60)))
        tiles += [_thumb(_bytes(n), _caption(n), (210, 40, 40)) for n in negatives.get(item, [])]
        for x, tile in enumerate(tiles):
            sheet.paste(tile, (x * THUMB, y * (THUMB + CAPTION)))
    return sheet


def write_previews(snapshot: Path, out: Path, rows: int = 8) -> list[Path]:
    """Write `<out>/<subset>.png` for every subset of the snapshot; return the files."""
    snap = open_snapshot(snapshot)
    if not snap.subsets:
        raise SnapshotError(f"{snapshot}: no subsets to preview")
    written = []
    for subset in snap.subsets:
        target = out / f"{subset}.png"
        with atomic_path(target) as tmp:
            contact_sheet(snap.root, subset, rows).save(tmp, format="PNG")
        written.append(target)
    return written
