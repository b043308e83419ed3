"""Deterministic image encoding for snapshot rows."""

from __future__ import annotations

import io

from PIL import Image

JPEG_QUALITY = 90


def jpeg_bytes(image: Image.Image, quality: int = JPEG_QUALITY) -> bytes:
    """Baseline JPEG bytes of an RGB image at `quality`; the same pixels and quality always give the same bytes."""
    buf = io.BytesIO()
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    rgb.save(buf, format="JPEG", quality=quality, optimize=False, progressive=False)
    return buf.getvalue()
