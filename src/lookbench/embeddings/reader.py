"""Decode encoded image bytes into RGB PIL images, turning every failure into one message."""

from __future__ import annotations

import io

from PIL import Image, UnidentifiedImageError

Image.MAX_IMAGE_PIXELS = 20_000 * 20_000


class BadImageError(Exception):
    """An image that has no bytes or does not decode."""


def decode_image(data: bytes | None, draft: int | None = None) -> Image.Image:
    """Decode bytes to an RGB image (alpha composited on white); raise BadImageError on any failure.

    `draft`: let JPEGs decode at a reduced DCT scale that keeps both sides >= `draft` pixels (faster, not bit-exact).
    """
    if not data:
        raise BadImageError("image has no bytes")
    try:
        with Image.open(io.BytesIO(data)) as im:
            if draft is not None and im.format == "JPEG":
                im.draft("RGB", (draft, draft))
            im.load()
            if im.mode in ("RGBA", "LA", "P"):
                rgba = im.convert("RGBA")
                background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                return Image.alpha_composite(background, rgba).convert("RGB")
            return im if im.mode == "RGB" else im.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise BadImageError(f"image does not decode ({type(exc).__name__}: {exc})") from exc
