"""Photographic cues on a flat garment render: a fold warp, fold shading, body volume and specular highlights."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageFilter

from lookbench.datasets.synth.pixels import scale_channels

FIELD = 32
"""Resolution of the fold height field (upsampled to the garment)."""


@dataclass(frozen=True)
class Light:
    """Direction light comes from (unit x, y in image axes) and how strong folds and volume read."""

    dx: float
    dy: float
    folds: float
    """0: ironed flat; 1: strong folds."""
    volume: float
    """How much darker the silhouette's rim is than its centre."""


def sample_light(rng: np.random.Generator, folds: tuple[float, float], volume: tuple[float, float]) -> Light:
    """A light from the upper half, with fold and volume strength drawn from the given ranges."""
    angle = rng.uniform(-2.6, -0.5)
    return Light(float(np.cos(angle)), float(np.sin(angle)), float(rng.uniform(*folds)), float(rng.uniform(*volume)))


def resize_field(field: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """A small float field resized (bicubic) to `size` (width, height)."""
    return np.asarray(Image.fromarray(field.astype(np.float32), mode="F").resize(size, Image.Resampling.BICUBIC))


@lru_cache(maxsize=64)
def _grid(width: int, height: int, divide: bool) -> tuple[np.ndarray, np.ndarray]:
    """Read-only float32 (y, x) pixel coordinates of a `width` x `height` field, as unit coordinates if `divide`
    (by `width` for both, as the fold field is square)."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    if divide:
        yy, xx = yy / width, xx / width
    yy.flags.writeable = xx.flags.writeable = False
    return yy, xx


def _heights(rng: np.random.Generator, hanging: bool) -> np.ndarray:
    """A fold height field: vertical drape folds for hanging garments, crumples and creases otherwise."""
    yy, xx = _grid(FIELD, FIELD, True)
    blobs = rng.standard_normal((5, 5)).astype(np.float32)
    field = resize_field(blobs, (FIELD, FIELD)) * 0.5
    count = int(rng.integers(3, 7))
    for _ in range(count):
        freq = float(rng.uniform(2.0, 6.0))
        phase = float(rng.uniform(0, 2 * np.pi))
        if hanging:
            wobble = 0.15 * np.sin(yy * float(rng.uniform(2, 5)) + phase)
            ramp = 0.3 + 0.7 * yy
            field += np.sin((xx + wobble) * freq * 2 * np.pi + phase) * ramp / count * 1.6
        else:
            angle = float(rng.uniform(0, np.pi))
            u = xx * np.cos(angle) + yy * np.sin(angle)
            centre = float(rng.uniform(0.2, 0.8))
            field += np.exp(-(((u - centre) * freq * 3) ** 2)) * float(rng.choice([-1.0, 1.0])) / count * 2.0
    return field


def warp(image: Image.Image, rng: np.random.Generator, amount: float) -> Image.Image:
    """Displace pixels along a smooth random field (up to about `amount` px): folds bend seams, prints and edges."""
    w, h = image.size
    cells = rng.normal(0.0, amount, size=(2, 5, 5)).astype(np.float32)
    cells[:, 0, :] = cells[:, -1, :] = cells[:, :, 0] = cells[:, :, -1] = 0.0
    dx = resize_field(cells[0], (w, h)).astype(np.int32)
    dy = resize_field(cells[1], (w, h)).astype(np.int32)
    dx += np.arange(w, dtype=np.int32)
    dy += np.arange(h, dtype=np.int32)[:, None]
    np.clip(dx, 0, w - 1, out=dx)
    np.clip(dy, 0, h - 1, out=dy)
    dy *= w
    dy += dx
    pixels = np.asarray(image)
    return Image.fromarray(pixels.reshape(h * w, -1).take(dy.ravel(), axis=0).reshape(pixels.shape))


LIGHT_FIELD = 48
"""Resolution the smooth light terms (folds, volume, falloff, highlights) are computed at."""


def drape(garment: Image.Image, rng: np.random.Generator, light: Light, gloss: float, hanging: bool) -> Image.Image:
    """The garment warped by folds (when they are strong) and shaded by them, with body volume and highlights."""
    w, h = garment.size
    if light.folds > 0.3:
        amount = (light.folds - 0.2) * 0.012 * max(w, h)
        garment = warp(garment, rng, amount)
    heights = _heights(rng, hanging) * light.folds
    gy, gx = np.gradient(heights)
    small = (LIGHT_FIELD, max(8, int(LIGHT_FIELD * h / max(w, 1))))
    facing = resize_field(np.asarray((gx * light.dx + gy * light.dy) * 9.0, dtype=np.float32), small)
    alpha = garment.getchannel("A")
    shrunk = alpha.resize(small, Image.Resampling.BILINEAR)
    body = np.asarray(shrunk.filter(ImageFilter.BoxBlur(max(1, LIGHT_FIELD // 10))), dtype=np.float32) / 255.0
    yy, xx = _grid(small[0], small[1], False)
    falloff = 1.0 - 0.12 * ((xx / small[0] - 0.5) * light.dx + (yy / small[1] - 0.5) * light.dy)
    lit = (1.0 + facing * 0.35) * (1.0 - light.volume + light.volume * body) * falloff
    if gloss > 0:
        spec = np.clip(facing * 0.35 + (body - 0.7) * 0.6, 0.0, None) ** 2 * gloss * 900.0
        lit = lit + np.minimum(spec, 120.0) / 160.0
    field = np.asarray(Image.fromarray(lit.astype(np.float32), mode="F").resize((w, h), Image.Resampling.BILINEAR))
    pixels = np.asarray(garment)
    rgb = scale_channels(pixels[..., :3].astype(np.float32), field)
    np.clip(rgb, 0, 255, out=rgb)
    out = np.empty_like(pixels)
    out[..., :3] = rgb
    out[..., 3] = pixels[..., 3]
    return Image.fromarray(out, "RGBA")
