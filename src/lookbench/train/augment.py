"""Training augmentations: timm's `create_transform`, or built-in PIL ones where timm or torchvision are absent.

Each image is augmented from its own seed (`sampler.sample_seed`), so a batch is the same whatever the number of
DataLoader workers, and a resumed run sees the very pixels an uninterrupted one would have.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image, ImageEnhance

from lookbench.errors import TrainError
from lookbench.models.preprocess import Preprocess
from lookbench.train.config import Augment

Transform = Callable[[Image.Image, int], Any]
"""(RGB image, seed) -> CHW float32 tensor, normalised with the backbone's mean and std."""


def evaluation_preprocess(preprocess: Preprocess, size: int) -> Preprocess:
    """The backbone's evaluation preprocessing scaled to a `size` crop (same resize-to-crop ratio)."""
    if size == preprocess.crop:
        return preprocess
    resize = None if preprocess.resize is None else round(size * preprocess.resize / preprocess.crop)
    return preprocess.model_copy(update={"crop": size, "resize": resize})


def timm_available() -> bool:
    """True when timm and torchvision import (timm's transforms are built on torchvision)."""
    try:
        import timm.data  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        return False
    return True


def timm_transform(cfg: Augment, size: int, preprocess: Preprocess) -> Transform:
    """timm's ImageNet training transform (random resized crop, flip, colour jitter, RandAugment, erasing)."""
    import timm.data
    import torch

    transform = timm.data.create_transform(
        input_size=size,
        is_training=True,
        scale=cfg.scale,
        ratio=cfg.ratio,
        hflip=cfg.hflip,
        vflip=0.0,
        color_jitter=cfg.color_jitter,
        auto_augment=cfg.auto_augment,
        interpolation=preprocess.interpolation,
        mean=preprocess.mean,
        std=preprocess.std,
        re_prob=cfg.random_erasing,
    )

    def apply(image: Image.Image, seed: int) -> Any:
        state = random.getstate()
        with torch.random.fork_rng(devices=[]):
            random.seed(seed)
            torch.manual_seed(seed)
            try:
                return transform(image)
            finally:
                random.setstate(state)

    return apply


def random_resized_crop_box(
    width: int, height: int, scale: tuple[float, float], ratio: tuple[float, float], rng: np.random.Generator
) -> tuple[int, int, int, int]:
    """A box covering a random area fraction in `scale` with aspect ratio in `ratio` (torchvision's algorithm)."""
    area = width * height
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target = area * rng.uniform(*scale)
        aspect = math.exp(rng.uniform(*log_ratio))
        w = round(math.sqrt(target * aspect))
        h = round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            x = int(rng.integers(0, width - w + 1))
            y = int(rng.integers(0, height - h + 1))
            return x, y, x + w, y + h
    in_ratio = width / height
    if in_ratio < ratio[0]:
        w, h = width, round(width / ratio[0])
    elif in_ratio > ratio[1]:
        w, h = round(height * ratio[1]), height
    else:
        w, h = width, height
    x, y = (width - w) // 2, (height - h) // 2
    return x, y, x + w, y + h


def basic_transform(cfg: Augment, size: int, preprocess: Preprocess) -> Transform:
    """Random resized crop, horizontal flip and brightness/contrast/saturation jitter, in PIL and numpy only."""
    if cfg.auto_augment or cfg.random_erasing:
        raise TrainError("augment.auto_augment and augment.random_erasing need timm: pip install 'lookbench[train]'")
    import torch

    resample = Image.Resampling.BICUBIC if preprocess.interpolation == "bicubic" else Image.Resampling.BILINEAR
    mean = np.asarray(preprocess.mean, dtype=np.float32).reshape(3, 1, 1)
    std = np.asarray(preprocess.std, dtype=np.float32).reshape(3, 1, 1)

    def apply(image: Image.Image, seed: int) -> Any:
        rng = np.random.default_rng(seed)
        box = random_resized_crop_box(image.width, image.height, cfg.scale, cfg.ratio, rng)
        out = image.resize((size, size), resample, box=box)
        if rng.uniform() < cfg.hflip:
            out = out.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        if cfg.color_jitter:
            enhancers = [ImageEnhance.Brightness, ImageEnhance.Contrast, ImageEnhance.Color]
            for index in rng.permutation(len(enhancers)):
                factor = rng.uniform(1 - cfg.color_jitter, 1 + cfg.color_jitter)
                out = enhancers[int(index)](out).enhance(factor)
        array = np.asarray(out, dtype=np.float32).transpose(2, 0, 1) / 255.0
        return torch.from_numpy((array - mean) / std)

    return apply


def resolved_backend(cfg: Augment) -> str:
    """The backend this config uses: `timm`, `basic`, or for `auto` timm when importable, else basic."""
    if cfg.backend != "auto":
        return cfg.backend
    return "timm" if timm_available() else "basic"


def train_transform(cfg: Augment, size: int, preprocess: Preprocess) -> Transform:
    """The configured training transform."""
    if resolved_backend(cfg) == "basic":
        return basic_transform(cfg, size, preprocess)
    if not timm_available():
        raise TrainError("augment.backend timm needs timm and torchvision: pip install 'lookbench[train]'")
    return timm_transform(cfg, size, preprocess)
