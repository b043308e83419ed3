"""`features:<name>`: weight-free image features, no weights and no network.

- `colour-gradient`, 256 numbers: a 4x4x4 RGB histogram of the whole image and of its centre, and 4x4 cells of 8-bin
  magnitude-weighted histograms of unsigned gradient orientations, on a 64x64 resize. The builder's probes and
  distractor mining use it where no learned model is wanted.
- `thumbnail`, 192 numbers: the 8x8 RGB thumbnail minus its mean (cosine = correlation of the two thumbnails).
- `colour-histogram`, 512 numbers: the normalised 8x8x8 joint RGB histogram of the whole image on a 64x64 resize.

The last two are trivial baselines: what layout or colour alone scores on a snapshot (docs/synth.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from lookbench.embeddings.encoder import EncoderBase, InputKind
from lookbench.embeddings.mapper import Preprocess
from lookbench.embeddings.options import EmbedOptions
from lookbench.errors import LookBenchError
from lookbench.models.spec import ModelSpec

SIDE = 64
CELLS = 4
BINS = 8
THUMB = 8
HISTOGRAM_LEVELS = 8


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


def thumbnail(image: Image.Image, side: int = THUMB) -> np.ndarray:
    """The (side * side * 3,) RGB thumbnail (bilinear, 0-255) minus its mean; JPEGs decode at a reduced scale."""
    image.draft("RGB", (side * 4, side * 4))
    small = np.asarray(image.convert("RGB").resize((side, side), Image.Resampling.BILINEAR), dtype=np.float64).ravel()
    return small - small.mean()


def whole_colour_histogram(image: Image.Image) -> np.ndarray:
    """The normalised HISTOGRAM_LEVELS^3 joint RGB histogram of the image on a SIDE x SIDE resize."""
    rgb = np.asarray(image.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BILINEAR), dtype=np.int64)
    return colour_histogram(rgb, HISTOGRAM_LEVELS)


def image_features(image: Image.Image) -> np.ndarray:
    """Colour histogram (64) + centre colour histogram (64) + gradient histograms (128) of one RGB image."""
    rgb = np.asarray(image.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BILINEAR), dtype=np.int64)
    centre = rgb[SIDE // 4 : 3 * SIDE // 4, SIDE // 4 : 3 * SIDE // 4]
    grey = rgb.astype(np.float64).mean(axis=2)
    return np.concatenate([colour_histogram(rgb), colour_histogram(centre), gradient_histograms(grey)])


@dataclass(frozen=True)
class Feature:
    """One weight-free feature: how it is computed, its width, and its revision (part of the embedding cache key)."""

    compute: Callable[[Image.Image], np.ndarray]
    dimension: int
    revision: str


FEATURES = {
    "colour-gradient": Feature(image_features, 2 * 4**3 + CELLS * CELLS * BINS, "1"),
    "thumbnail": Feature(thumbnail, THUMB * THUMB * 3, "1"),
    "colour-histogram": Feature(whole_colour_histogram, HISTOGRAM_LEVELS**3, "1"),
}


class WeightFreeFeatures(EncoderBase):
    """The Encoder of `features:<name>`: decoded RGB images in, the feature's numbers out."""

    input_kind: InputKind = "image"
    preprocess: Preprocess | None = None

    def __init__(self, name: str = "colour-gradient") -> None:
        self.model_id = f"features:{name}"
        self.feature = FEATURES[name]
        self.revision = self.feature.revision

    def encode(self, batch: list[Image.Image]) -> np.ndarray:
        """A (len(batch), dimension) float array."""
        rows = [self.feature.compute(image) for image in batch]
        return np.asarray(rows, dtype=np.float32).reshape(len(batch), self.feature.dimension)

    def describe(self) -> dict[str, Any]:
        """Kind and dimension."""
        return {"kind": "features", "dimension": self.feature.dimension, "weights": "none"}


def load(spec: ModelSpec, options: EmbedOptions) -> WeightFreeFeatures:
    """The feature named by `features:<name>`."""
    argument = spec.argument
    if argument not in FEATURES:
        raise LookBenchError(f"unknown feature {argument!r}; known: {', '.join(FEATURES)}")
    return WeightFreeFeatures(argument)
