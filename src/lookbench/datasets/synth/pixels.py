"""Per-channel arithmetic on (h, w, 3) images: numpy broadcasts a (h, w) field or a 3-vector over a 3-wide last
axis several times slower than it runs one channel at a time, and the results are the same to the bit."""

from __future__ import annotations

import numpy as np
from PIL import Image


def scale_channels(rgb: np.ndarray, field: np.ndarray, offset: np.ndarray | None = None) -> np.ndarray:
    """`rgb * field[..., None] (+ offset[..., None])`, computed in place in `rgb` (float32), one channel at a time."""
    for c in range(rgb.shape[-1]):
        channel = rgb[..., c]
        channel *= field
        if offset is not None:
            channel += offset
    return rgb


def gain_lut(gain: np.ndarray) -> list[int]:
    """The 768-entry `Image.point` table of `clip(uint8 * float32(gain[c]), 0, 255)` per RGB channel: the uint8
    result of the float32 product for every input level, so mapping an image through it equals the product."""
    levels = np.arange(256, dtype=np.float32)[:, None] * np.asarray(gain, dtype=np.float32)[None, :]
    table: list[int] = np.clip(levels, 0, 255).astype(np.uint8).T.ravel().tolist()
    return table


def apply_gain(image: Image.Image, gain: np.ndarray) -> np.ndarray:
    """`clip(float32(image) * float32(gain), 0, 255)` as uint8 (h, w, 3), through a lookup table."""
    return np.asarray(image.point(gain_lut(gain)))
