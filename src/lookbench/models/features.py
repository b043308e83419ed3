"""`features:colour-gradient`: a weight-free image feature (colour histograms + gradient-orientation histograms).

256 numbers per image: a 4x4x4 RGB histogram of the whole image and of its centre, and 4x4 cells of 8-bin
magnitude-weighted histograms of unsigned gradient orientations, on a 64x64 resize. No weights, no network; the
builder's probes and distractor mining use it where no learned model is wanted.
"""

from __future__ import annotations

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
FEATURES = {"colour-gradient": "1"}
"""Feature name -> revision (part of the embedding cache key)."""


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


def image_features(image: Image.Image) -> np.ndarray:
    """Colour histogram (64) + centre colour histogram (64) + gradient histograms (128) of one RGB image."""
    rgb = np.asarray(image.convert("RGB").resize((SIDE, SIDE), Image.Resampling.BILINEAR), dtype=np.int64)
    centre = rgb[SIDE // 4 : 3 * SIDE // 4, SIDE // 4 : 3 * SIDE // 4]
    grey = rgb.astype(np.float64).mean(axis=2)
    return np.concatenate([colour_histogram(rgb), colour_histogram(centre), gradient_histograms(grey)])


class ColourGradientFeatures(EncoderBase):
    """The Encoder of `features:colour-gradient`: decoded RGB images in, 256 numbers each out."""

    input_kind: InputKind = "image"
    preprocess: Preprocess | None = None

    def __init__(self, name: str = "colour-gradient") -> None:
        self.model_id = f"features:{name}"
        self.revision = FEATURES[name]

    def encode(self, batch: list[Image.Image]) -> np.ndarray:
        """A (len(batch), 256) float array."""
        return np.asarray([image_features(image) for image in batch], dtype=np.float32).reshape(len(batch), -1)

    def describe(self) -> dict[str, Any]:
        """Kind and dimension."""
        return {"kind": "features", "dimension": 256, "weights": "none"}


def load(spec: ModelSpec, options: EmbedOptions) -> ColourGradientFeatures:
    """The feature named by `features:<name>`."""
    argument = spec.argument
    if argument not in FEATURES:
        raise LookBenchError(f"unknown feature {argument!r}; known: {', '.join(FEATURES)}")
    return ColourGradientFeatures(argument)
