"""Deterministic image encoding for snapshot rows."""

from __future__ import annotations

import io

from PIL import Image

JPEG_QUALITY = 90


def jpeg_bytes(image: Image.Image) -> bytes:
    """Baseline JPEG bytes of an RGB image; the same pixels always give the same bytes."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False)
    return buf.getvalue()
