"""Small JPEG thumbnails of snapshot rows as data URIs, reading only the rows asked for."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable

from PIL import Image

from lookbench.snapshot.reader import Snapshot

THUMB_SIZE = 112
JPEG_QUALITY = 70


def thumbnail_uri(data: bytes | None, size: int = THUMB_SIZE) -> str | None:
    """A `data:image/jpeg;base64,...` thumbnail, or None if there is no decodable image."""
    if not data:
        return None
    try:
        with Image.open(io.BytesIO(data)) as im:
            im = im.convert("RGB")
            im.thumbnail((size, size))
            buf = io.BytesIO()
            im.save(buf, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    except Exception:
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def read_rows(
    snapshot: Snapshot, subset: str, split: str, rows: Iterable[int], column: str = "image"
) -> dict[int, bytes]:
    """Encoded image bytes of the given rows of one split (rows across shards are global indices)."""
    return snapshot.image_rows(subset, split, rows, column)


def thumbnails(
    snapshot: Snapshot, subset: str, split: str, rows: Iterable[int], column: str = "image", size: int = THUMB_SIZE
) -> dict[int, str]:
    """{row: thumbnail data URI} for the rows that have a decodable image."""
    out = {}
    for row, data in read_rows(snapshot, subset, split, rows, column).items():
        uri = thumbnail_uri(data, size)
        if uri is not None:
            out[row] = uri
    return out
