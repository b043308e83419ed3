"""Images as base64 data URLs, downscaled to the size a model is sent."""

from __future__ import annotations

import base64
import io

from PIL import Image

from lookbench._util.images import decode_image


def prepared(data: bytes, max_side: int) -> tuple[bytes, tuple[int, int]]:
    """JPEG bytes no larger than `max_side` on the longest side, and the size sent (BadImageError if undecodable)."""
    im = decode_image(data)
    scale = min(1.0, max_side / max(im.size))
    if scale < 1.0:
        im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=90)
    return buf.getvalue(), im.size


def data_url(jpeg: bytes) -> str:
    """A `data:image/jpeg;base64,...` URL."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def decode_data_url(url: str) -> bytes:
    """The bytes of a base64 data URL."""
    head, _, payload = url.partition(",")
    if not head.startswith("data:") or ";base64" not in head:
        raise ValueError("not a base64 data URL")
    return base64.b64decode(payload)
