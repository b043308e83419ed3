"""A simple real image feature (colour histogram + gradient-orientation histograms) behind the provider interface."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from PIL import Image

from lookbench.snapshot.reader import Snapshot

SPEC = "features:colour-gradient"
SIDE = 64
CELLS = 4
BINS = 8


def colour_histogram(rgb: np.ndarray, levels: int = 4) -> np.ndarray:
    """Normalised joint RGB histogram with `levels` per channel."""
    codes = (rgb // (256 // levels)).astype(np.int64)
    index = codes[..., 0] * levels * levels + codes[..., 1] * levels + codes[..., 2]
    hist = np.bincount(index.ravel(), minlength=levels**3).astype(np.float64)
    return hist / max(hist.sum(), 1.0)


def gradient_histograms(grey: np.ndarray) -> np.ndarray:
    """HOG-like: per cell of a CELLS x CELLS grid, a magnitude-weighted histogram of unsigned orientations."""
    gy, gx = np.gradient(grey)
    magnitude = np.hypot(gx, gy)
    angle = np.mod(np.arctan2(gy, gx), np.pi)
    bins = np.minimum((angle / np.pi * BINS).astype(np.int64), BINS - 1)
    step = grey.shape[0] // CELLS
    parts = []
    for r in range(CELLS):
        for c in range(CELLS):
            window = (slice(r * step, (r + 1) * step), slice(c * step, (c + 1) * step))
            hist = np.bincount(bins[window].ravel(), weights=magnitude[window].ravel(), minlength=BINS)
            parts.append(hist / (np.linalg.norm(hist) + 1e-9))
    return np.concatenate(parts)


def image_features(data: bytes) -> np.ndarray:
    """Colour histogram (64) + centre colour histogram (64) + gradient histograms (128) of one image."""
    with Image.open(io.BytesIO(data)) as im:
        rgb = np.asarray(im.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BILINEAR), dtype=np.int64)
    centre = rgb[SIDE // 4 : 3 * SIDE // 4, SIDE // 4 : 3 * SIDE // 4]
    grey = rgb.astype(np.float64).mean(axis=2)
    return np.concatenate([colour_histogram(rgb), colour_histogram(centre), gradient_histograms(grey)])


class ColourGradientFeatures:
    """Embeds every row of a split with `image_features`; no weights, no network."""

    spec = SPEC

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """A (rows, 256) float array."""
        vectors = [image_features(data or b"") for _, images in snapshot.iter_images(subset, split) for data in images]
        return np.asarray(vectors, dtype=np.float64)

    def describe(self) -> dict[str, Any]:
        """Spec and dimension."""
        return {"spec": self.spec, "dimension": 256}
