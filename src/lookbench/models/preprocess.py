"""Model preprocessing (resize, crop, scale, normalise) from PIL images to NCHW float32 arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from lookbench._util.hashing import json_sha256

_RESAMPLE = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


@dataclass(frozen=True)
class ResizePlan:
    """An image resized to `width` x `height`, then cropped at (`left`, `top`) to the model's square input (for
    `longest`, pasted at that offset on a `fill` canvas)."""

    width: int
    height: int
    left: int
    top: int


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

    def plan(self, width: int, height: int) -> ResizePlan:
        """Where an image of this size goes: its resized size, then the crop (for `longest`, the paste) offset."""
        if self.resize_mode == "squash":
            return ResizePlan(self.crop, self.crop, 0, 0)
        if self.resize_mode == "longest":
            scale = self.crop / max(width, height)
            new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
            return ResizePlan(new_w, new_h, (self.crop - new_w) // 2, (self.crop - new_h) // 2)
        short = self.resize or self.crop
        if short < self.crop:
            raise ValueError(f"resize {short} is smaller than crop {self.crop}")
        scale = short / min(width, height)
        new_w, new_h = max(short, round(width * scale)), max(short, round(height * scale))
        return ResizePlan(new_w, new_h, (new_w - self.crop) // 2, (new_h - self.crop) // 2)

    def resize_crop(self, image: Image.Image) -> Image.Image:
        """Geometric part: a `crop` x `crop` RGB image."""
        resample = _RESAMPLE[self.interpolation]
        w, h = image.size
        plan = self.plan(w, h)
        if self.resize_mode == "squash":
            return image.resize((self.crop, self.crop), resample)
        if self.resize_mode == "longest":
            canvas = Image.new("RGB", (self.crop, self.crop), (self.fill,) * 3)
            canvas.paste(image.resize((plan.width, plan.height), resample), (plan.left, plan.top))
            return canvas
        # Resample only the source region that survives the centre crop: resize-then-crop's pixels up to Pillow's
        # rounding of its weights (docs/models.md), a fraction of the work.
        sx, sy = w / plan.width, h / plan.height
        box = (plan.left * sx, plan.top * sy, (plan.left + self.crop) * sx, (plan.top + self.crop) * sy)
        return image.resize((self.crop, self.crop), resample, box=box)

    def affine(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel (scale, offset) with (pixel / 255 - mean) / std == pixel * scale - offset, shaped (3, 1, 1)."""
        std = np.asarray(self.std, dtype=np.float64)
        scale = (1.0 / (255.0 * std)).astype(np.float32)[:, None, None]
        offset = (np.asarray(self.mean, dtype=np.float64) / std).astype(np.float32)[:, None, None]
        return scale, offset

    def normalise_into(self, cropped: Image.Image, out: np.ndarray) -> None:
        """Write the normalised CHW pixels of an already resized and cropped RGB image into `out`."""
        scale, offset = self.affine()
        np.multiply(np.asarray(cropped).transpose(2, 0, 1), scale, out=out, casting="unsafe")
        out -= offset

    def into(self, image: Image.Image, out: np.ndarray) -> None:
        """Write one normalised CHW image into `out` (a (3, crop, crop) float32 view)."""
        self.normalise_into(self.resize_crop(image), out)

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
