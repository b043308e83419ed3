"""Images of a distribution: read as published, or cut to an item's box and stored as JPEG."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from lookbench.errors import DatasetImportError

CROP_QUALITY = 95
_DECODE_ERRORS = (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError)


@dataclass(frozen=True)
class StoredImage:
    """Encoded bytes as they go into the snapshot, with a file name for the Image struct and their sha256."""

    data: bytes
    name: str
    sha256: str
    size: tuple[int, int]


def read_image(path: Path, where: str) -> StoredImage:
    """The file's bytes unchanged, after checking the header identifies an image; errors name `where`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise DatasetImportError(f"{where}: image {path} is missing") from exc
    except OSError as exc:
        raise DatasetImportError(f"{where}: cannot read image {path} ({exc})") from exc
    try:
        with Image.open(io.BytesIO(data)) as im:
            size = im.size
    except _DECODE_ERRORS as exc:
        raise DatasetImportError(f"{where}: {path} is not a readable image ({type(exc).__name__}: {exc})") from exc
    return StoredImage(data, path.name, hashlib.sha256(data).hexdigest(), size)


def crop_image(path: Path, box: tuple[float, float, float, float], where: str) -> StoredImage:
    """The box `(x0, y0, x1, y1)` of an image, clipped to the image, as a JPEG; an empty box is an error."""
    try:
        with Image.open(path) as im:
            im.load()
            rgb = im.convert("RGB")
    except FileNotFoundError as exc:
        raise DatasetImportError(f"{where}: image {path} is missing") from exc
    except _DECODE_ERRORS as exc:
        raise DatasetImportError(f"{where}: {path} is not a readable image ({type(exc).__name__}: {exc})") from exc
    width, height = rgb.size
    x0, y0, x1, y1 = (round(v) for v in box)
    x0, x1 = max(0, min(x0, width)), max(0, min(x1, width))
    y0, y1 = max(0, min(y0, height)), max(0, min(y1, height))
    if x1 <= x0 or y1 <= y0:
        raise DatasetImportError(f"{where}: box {list(box)} holds no pixels of {path} ({width}x{height})")
    buf = io.BytesIO()
    rgb.crop((x0, y0, x1, y1)).save(buf, format="JPEG", quality=CROP_QUALITY)
    data = buf.getvalue()
    return StoredImage(
        data, f"{path.stem}_{x0}_{y0}_{x1}_{y1}.jpg", hashlib.sha256(data).hexdigest(), (x1 - x0, y1 - y0)
    )
