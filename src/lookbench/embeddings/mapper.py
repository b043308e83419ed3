"""Model preprocessing (resize, crop, scale, normalise) from PIL images to NCHW float32 arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from lookbench.hashing import json_sha256

_RESAMPLE = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class Preprocess(BaseModel):
    """One model's input definition; applied exactly once, so tensors are never normalised twice.

    `resize_mode`: `shortest` resizes the shorter side to `resize` then centre-crops `crop`;
    `squash` resizes both sides to `crop` ignoring aspect ratio; `longest` fits the longer side in `crop` and pads.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    crop: int = Field(gt=0)
    resize: int | None = None
    resize_mode: Literal["shortest", "squash", "longest"] = "shortest"
    interpolation: Literal["bilinear", "bicubic"] = "bicubic"
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD
    fill: int = 0

    def fingerprint(self) -> str:
        """A short hash of every field: part of the cache key."""
        return json_sha256(self.model_dump())[:16]

    @property
    def draft_size(self) -> int:
        """The side a JPEG may be draft-decoded down to without going below what the resize needs."""
        return self.resize or self.crop

    def resize_crop(self, image: Image.Image) -> Image.Image:
        """Geometric part: a `crop` x `crop` RGB image."""
        resample = _RESAMPLE[self.interpolation]
        w, h = image.size
        if self.resize_mode == "squash":
            return image.resize((self.crop, self.crop), resample)
        if self.resize_mode == "longest":
            scale = self.crop / max(w, h)
            new = (max(1, round(w * scale)), max(1, round(h * scale)))
            canvas = Image.new("RGB", (self.crop, self.crop), (self.fill,) * 3)
            canvas.paste(image.resize(new, resample), ((self.crop - new[0]) // 2, (self.crop - new[1]) // 2))
            return canvas
        short = self.resize or self.crop
        if short < self.crop:
            raise ValueError(f"resize {short} is smaller than crop {self.crop}")
        # Resample only the source region that survives the centre crop (same pixels, a fraction of the work).
        scale = short / min(w, h)
        new_w, new_h = max(short, round(w * scale)), max(short, round(h * scale))
        left, top = (new_w - self.crop) // 2, (new_h - self.crop) // 2
        sx, sy = w / new_w, h / new_h
        box = (left * sx, top * sy, (left + self.crop) * sx, (top + self.crop) * sy)
        return image.resize((self.crop, self.crop), resample, box=box)

    def _affine(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel (scale, offset) with (pixel / 255 - mean) / std == pixel * scale - offset."""
        std = np.asarray(self.std, dtype=np.float64)
        scale = (1.0 / (255.0 * std)).astype(np.float32)[:, None, None]
        offset = (np.asarray(self.mean, dtype=np.float64) / std).astype(np.float32)[:, None, None]
        return scale, offset

    def into(self, image: Image.Image, out: np.ndarray) -> None:
        """Write one normalised CHW image into `out` (a (3, crop, crop) float32 view)."""
        scale, offset = self._affine()
        pixels = np.asarray(self.resize_crop(image)).transpose(2, 0, 1)
        np.multiply(pixels, scale, out=out, casting="unsafe")
        out -= offset

    def __call__(self, image: Image.Image) -> np.ndarray:
        """One CHW float32 array, scaled to [0, 1] and normalised by mean/std."""
        out = np.empty((3, self.crop, self.crop), dtype=np.float32)
        self.into(image, out)
        return out

    def batch(self, images: Sequence[Image.Image]) -> np.ndarray:
        """Stack several images into an NCHW array."""
        out = np.empty((len(images), 3, self.crop, self.crop), dtype=np.float32)
        for i, image in enumerate(images):
            self.into(image, out[i])
        return out
