"""The colour check of a perceptual match: how much of two images differs in colour, pixel by pixel, in CIELAB.

pHash sees luminance only, so colour variants of one design (and many hard negatives) share it. A candidate pair
is compared on 64x64 thumbnails: a pixel counts as different when its colour is more than `DELTA_E` (CIE76) away
from every pixel of the 3x3 neighbourhood at the same place in the other image (so a re-sampled edge does not
count), in both directions. The measured thresholds are in docs/release.md.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

SIDE = 64
DELTA_E = 20.0
_WHITE = np.array([0.95047, 1.0, 1.08883])
_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])


def lab_thumbnail(image: Image.Image) -> np.ndarray:
    """A (SIDE, SIDE, 3) CIELAB thumbnail of an RGB image (area-averaged)."""
    small = image.convert("RGB").resize((4 * SIDE, 4 * SIDE), Image.Resampling.BOX)
    rgb = np.asarray(small.resize((SIDE, SIDE), Image.Resampling.BOX), dtype=np.float64) / 255.0
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = linear @ _XYZ.T / _WHITE
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    lab = np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)
    return lab.astype(np.float32)


def _nearest_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pixel of `a`, the smallest colour distance to `b`'s 3x3 neighbourhood at the same place."""
    padded = np.pad(b, ((1, 1), (1, 1), (0, 0)), mode="edge")
    height, width = a.shape[:2]
    best = np.full((height, width), np.inf, dtype=np.float32)
    for dy in range(3):
        for dx in range(3):
            shifted = padded[dy : dy + height, dx : dx + width]
            best = np.minimum(best, np.sqrt(((a - shifted) ** 2).sum(axis=-1)))
    return best


def colour_difference(a: np.ndarray, b: np.ndarray) -> float:
    """Share of pixels (0-1) whose colour differs by more than DELTA_E, either way round."""
    differs = (_nearest_distance(a, b) > DELTA_E) | (_nearest_distance(b, a) > DELTA_E)
    return float(differs.mean())
