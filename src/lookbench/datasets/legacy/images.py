"""Images of a distribution: read as published, or cut to an item's box and stored as JPEG."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from lookbench._util.hashing import sha256_hex
from lookbench._util.images import BadImageError, decode_image, opened
from lookbench.errors import DatasetImportError

CROP_QUALITY = 95


@dataclass(frozen=True)
class StoredImage:
    """Encoded bytes as they go into the snapshot, with a file name for the Image struct and their sha256."""

    data: bytes
    name: str
    sha256: str
    size: tuple[int, int]


def _read(path: Path, where: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise DatasetImportError(f"{where}: image {path} is missing") from exc
    except OSError as exc:
        raise DatasetImportError(f"{where}: cannot read image {path} ({exc})") from exc


def read_image(path: Path, where: str) -> StoredImage:
    """The file's bytes unchanged, after checking (lookbench._util.images' policy) that the header is an image of a size
    that may be decoded; errors name `where`."""
    data = _read(path, where)
    try:
        with opened(data) as im:
            size = im.size
    except BadImageError as exc:
        raise DatasetImportError(f"{where}: {path} is not a readable image ({exc})") from exc
    return StoredImage(data, path.name, sha256_hex(data), size)


def crop_image(path: Path, box: tuple[float, float, float, float], where: str) -> StoredImage:
    """The box `(x0, y0, x1, y1)` of an image, clipped to the image, as a JPEG; an empty box is an error."""
    try:
        rgb = decode_image(_read(path, where))
    except BadImageError as exc:
        raise DatasetImportError(f"{where}: {path} is not a readable image ({exc})") from exc
    width, height = rgb.size
    x0, y0, x1, y1 = (round(v) for v in box)
    x0, x1 = max(0, min(x0, width)), max(0, min(x1, width))
    y0, y1 = max(0, min(y0, height)), max(0, min(y1, height))
    if x1 <= x0 or y1 <= y0:
        raise DatasetImportError(f"{where}: box {list(box)} holds no pixels of {path} ({width}x{height})")
    buf = io.BytesIO()
    rgb.crop((x0, y0, x1, y1)).save(buf, format="JPEG", quality=CROP_QUALITY)
    data = buf.getvalue()
    return StoredImage(data, f"{path.stem}_{x0}_{y0}_{x1}_{y1}.jpg", sha256_hex(data), (x1 - x0, y1 - y0))
