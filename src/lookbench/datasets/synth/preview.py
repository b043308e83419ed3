"""Contact sheets: queries beside their gallery positive and hard negatives; a grid of distractors."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from PIL import Image, ImageDraw, ImageOps

from lookbench._util.atomic import atomic_path
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import NOISE

THUMB = 128
CAPTION = 30
NOISE_COLUMNS = 6
FORMATS = {".png": "PNG", ".jpg": "JPEG"}


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


def noise_sheet(snapshot: Path, count: int = 24) -> Image.Image:
    """A grid of the first distractors, captioned with category and the photo convention (`shot`) when recorded."""
    snap = open_snapshot(snapshot)
    table = pq.read_table(snap.files(NOISE, "gallery")[0]).slice(0, count)
    rows = table.to_pylist()
    lines = max(1, -(-len(rows) // NOISE_COLUMNS))
    sheet = Image.new("RGB", (THUMB * NOISE_COLUMNS, (THUMB + CAPTION) * lines), (235, 235, 235))
    for k, row in enumerate(rows):
        caption = f"{row['category']}\n{row.get('shot') or row['main_attribute']}"
        tile = _thumb(_bytes(row), caption, (120, 120, 120))
        sheet.paste(tile, ((k % NOISE_COLUMNS) * THUMB, (k // NOISE_COLUMNS) * (THUMB + CAPTION)))
    return sheet


def write_previews(snapshot: Path, out: Path, rows: int = 8, suffix: str = ".png") -> list[Path]:
    """Write `<out>/<subset><suffix>` for every subset of the snapshot and `<out>/noise<suffix>`; return the files."""
    if suffix not in FORMATS:
        raise SnapshotError(f"contact sheets are written as {' or '.join(FORMATS)}, not {suffix!r}")
    snap = open_snapshot(snapshot)
    if not snap.subsets:
        raise SnapshotError(f"{snapshot}: no subsets to preview")
    sheets = [(subset, contact_sheet(snap.root, subset, rows)) for subset in snap.subsets]
    if snap.has_noise:
        sheets.append((NOISE, noise_sheet(snap.root, rows * 3)))
    written = []
    for name, sheet in sheets:
        target = out / f"{name}{suffix}"
        with atomic_path(target) as tmp:
            sheet.save(tmp, format=FORMATS[suffix], **({"quality": 82} if suffix == ".jpg" else {}))
        written.append(target)
    return written
