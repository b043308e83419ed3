"""Fabric textures: solid, striped, checked, polka dot, floral and denim twill, as RGB arrays."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from lookbench.synth.palette import RGB, contrast, shade


@dataclass(frozen=True)
class PatternLook:
    """Per-product pattern parameters (not labels): period in pixels, phase and angle."""

    period: int
    phase: int
    angle: float


@lru_cache(maxsize=4)
def _base_grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    return xx, yy


def _grid(size: int, look: PatternLook) -> tuple[np.ndarray, np.ndarray]:
    xx, yy = _base_grid(size)
    if look.angle == 0.0:
        return xx + look.phase, yy + look.phase
    c, s = np.float32(np.cos(look.angle)), np.float32(np.sin(look.angle))
    return xx * c + yy * s + look.phase, yy * c - xx * s + look.phase


def fabric(pattern: str, base: RGB, size: int, look: PatternLook, denim: bool = False) -> np.ndarray:
    """An HxWx3 uint8 texture of `pattern` with `base` as the dominant colour."""
    out = np.empty((size, size, 3), dtype=np.uint8)
    out[:] = base
    second = np.asarray(contrast(base), dtype=np.uint8)
    u, v = _grid(size, look)
    p = look.period
    if pattern == "striped":
        out[(v % p) < p * 0.36] = second
    elif pattern == "checked":
        band = max(2, int(p * 0.22))
        band_u = (u % p) < band
        band_v = (v % p) < band
        mixed = ((np.asarray(base, dtype=np.float32) + second.astype(np.float32)) / 2).astype(np.uint8)
        out[band_u ^ band_v] = mixed
        out[band_u & band_v] = second
    elif pattern == "polka dot":
        du = (u % p) - p / 2
        dv = (v % p) - p / 2
        out[(du * du + dv * dv) < (p * 0.2) ** 2] = second
    elif pattern == "floral":
        out = _floral(out, base, size, look)
    if denim:
        twill = ((u + v) % 4 < 1.5)[..., None]
        out = np.where(twill, np.asarray(shade(base, 1.18), dtype=np.uint8), out)
    return out


def _floral(out: np.ndarray, base: RGB, size: int, look: PatternLook) -> np.ndarray:
    image = Image.fromarray(out)
    draw = ImageDraw.Draw(image)
    petal = contrast(base)
    centre = (236, 196, 40) if base != (240, 208, 48) else (200, 40, 40)
    step = look.period + 6
    r = max(2, step // 7)
    rng = np.random.default_rng(look.phase)
    for gy in range(-step, size + step, step):
        for gx in range(-step, size + step, step):
            cx = gx + (step // 2 if (gy // step) % 2 else 0) + int(rng.integers(-2, 3))
            cy = gy + int(rng.integers(-2, 3))
            for k in range(5):
                a = 2 * np.pi * k / 5 + look.angle
                px, py = cx + 1.6 * r * np.cos(a), cy + 1.6 * r * np.sin(a)
                draw.ellipse([px - r, py - r, px + r, py + r], fill=petal)
            draw.ellipse([cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8], fill=centre)
    return np.asarray(image, dtype=np.uint8).copy()
