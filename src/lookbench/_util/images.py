"""The one image-decode policy: encoded bytes in, a fully decoded image or a BadImageError out.

Every decode checks the pixel count against `MAX_PIXELS` before any pixel data is read, so a small file that claims
a huge canvas (a decompression bomb) costs nothing; Pillow's process-wide `Image.MAX_IMAGE_PIXELS` is left alone.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager

from PIL import Image, UnidentifiedImageError

MAX_PIXELS = 80_000_000
"""Largest canvas decoded (below Pillow's own bomb limit of about 179 M pixels, so that limit never fires first)."""

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_DECODE_ERRORS = (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError)


class BadImageError(ValueError):
    """Bytes that are empty, not an image, truncated or too large to decode."""


def undecodable(exc: BaseException) -> BadImageError:
    """The error for bytes a decoder refused; the same words for the same bytes in any process (Pillow names the
    in-memory file by its address, which is left out)."""
    detail = _ADDRESS.sub("", str(exc))
    return BadImageError(f"image does not decode ({type(exc).__name__}: {detail})")


@contextmanager
def opened(data: bytes | None, max_pixels: int = MAX_PIXELS) -> Iterator[Image.Image]:
    """The image of `data`, opened and size-checked but not yet decoded; failures become BadImageError."""
    if not data:
        raise BadImageError("image has no bytes")
    try:
        with Image.open(io.BytesIO(data)) as im:
            width, height = im.size
            if width * height > max_pixels:
                raise BadImageError(f"image too large ({width}x{height} pixels; the limit is {max_pixels})")
            yield im
    except BadImageError:
        raise
    except _DECODE_ERRORS as exc:
        raise undecodable(exc) from exc


def decode_image(data: bytes | None, draft: int | None = None, max_pixels: int = MAX_PIXELS) -> Image.Image:
    """Decode bytes to an RGB image (alpha composited on white).

    `draft`: let JPEGs decode at a reduced DCT scale that keeps both sides >= `draft` pixels (faster, not bit-exact).
    """
    with opened(data, max_pixels) as im:
        try:
            if draft is not None and im.format == "JPEG":
                im.draft("RGB", (draft, draft))
            im.load()
            if im.mode in ("RGBA", "LA", "P"):
                rgba = im.convert("RGBA")
                background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                return Image.alpha_composite(background, rgba).convert("RGB")
            return im if im.mode == "RGB" else im.convert("RGB")
        except _DECODE_ERRORS as exc:
            raise undecodable(exc) from exc


def image_size(data: bytes | None, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """(width, height) of bytes that fully decode (truncated downloads and HTML served as images fail)."""
    with opened(data, max_pixels) as im:
        try:
            im.load()
        except _DECODE_ERRORS as exc:
            raise undecodable(exc) from exc
        return im.size
