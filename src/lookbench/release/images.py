"""Checks that bytes are a complete, decodable image."""

from __future__ import annotations

import io

from PIL import Image, UnidentifiedImageError

MAX_PIXELS = 80_000_000


def check_image(data: bytes) -> tuple[int, int]:
    """Return (width, height) if `data` fully decodes as an image; raise ValueError otherwise."""
    if not data:
        raise ValueError("empty image")
    try:
        with Image.open(io.BytesIO(data)) as im:
            size = im.size
            if size[0] * size[1] > MAX_PIXELS:
                raise ValueError(f"image too large ({size[0]}x{size[1]} pixels)")
            im.load()
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ValueError(f"not a decodable image ({exc})") from exc
    return size
