"""Small WebP (or JPEG) thumbnails of snapshot rows as data URIs, reading only the rows asked for."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable

from PIL import features

from lookbench._util.images import BadImageError, decode_image
from lookbench.snapshot.reader import Snapshot

THUMB_SIZE = 112
QUALITY = 70
THUMB_FORMAT = "WEBP" if features.check("webp") else "JPEG"
"""WebP thumbnails are about half the size of JPEG ones at the same quality; JPEG where Pillow lacks WebP."""


def thumbnail_uri(data: bytes | None, size: int = THUMB_SIZE) -> str | None:
    """A `data:image/webp;base64,...` (or jpeg) thumbnail, or None if there is no decodable image."""
    try:
        im = decode_image(data, draft=size)
    except BadImageError:
        return None
    im.thumbnail((size, size))
    buf = io.BytesIO()
    if THUMB_FORMAT == "WEBP":
        im.save(buf, format="WEBP", quality=QUALITY, method=6)
    else:
        im.save(buf, format="JPEG", quality=QUALITY, optimize=True)
    return f"data:image/{THUMB_FORMAT.lower()};base64," + base64.b64encode(buf.getvalue()).decode("ascii")


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


class ImageTable:
    """Each distinct thumbnail stored once: pages refer to images by a short id."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def add(self, uri: str | None) -> str | None:
        """The id of a data URI (None stays None); equal images share one id."""
        if uri is None:
            return None
        return self.ids.setdefault(uri, str(len(self.ids)))

    def by_id(self) -> dict[str, str]:
        """{id: data URI}, for the page's JSON block."""
        return {image_id: uri for uri, image_id in self.ids.items()}
