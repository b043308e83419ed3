"""Material surfaces: a brightness map per material (weave, twill, grain, ribs, mesh holes) and its gloss.

Each map is a tileable 256 x 256 float field around 1.0, computed once per process and scaled with the canvas, so
the surface keeps its size relative to the garment. Gloss drives the specular highlights of `drape.shade`."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image

from lookbench.datasets.synth.pixels import scale_channels

TILE = 256

GLOSS: dict[str, float] = {"leather": 0.4, "satin": 0.75, "mesh": 0.08, "denim": 0.02}
"""Specular strength per material (others are matte)."""

PLAIN = "plain"
"""The surface of a product whose material is not recorded: a fine, faint jersey."""


def _soften(field: np.ndarray) -> np.ndarray:
    """A wrap-around 5-point average (fuzz of wool fibres)."""
    rolled = sum(np.roll(field, shift, axis) for shift in (1, -1) for axis in (0, 1))
    return (field + rolled) / 5.0


def _noise(rng: np.random.Generator, cells: int) -> np.ndarray:
    """Smooth tileable noise: random cells, bicubic-upsampled with wrap-around, zero mean, unit peak."""
    base = rng.standard_normal((cells, cells)).astype(np.float32)
    wrapped = np.pad(base, 2, mode="wrap")
    step = TILE / cells
    image = Image.fromarray(wrapped, mode="F").resize(
        (int(TILE + 4 * step), int(TILE + 4 * step)), Image.Resampling.BICUBIC
    )
    offset = int(2 * step)
    field = np.asarray(image, dtype=np.float32)[offset : offset + TILE, offset : offset + TILE]
    return field / (np.abs(field).max() + 1e-6)


@lru_cache(maxsize=16)
def _tile(material: str) -> np.ndarray:
    rng = np.random.default_rng(sum(map(ord, material)))
    yy, xx = np.mgrid[0:TILE, 0:TILE].astype(np.float32)
    grain = rng.standard_normal((TILE, TILE)).astype(np.float32)
    if material == "denim":
        twill = np.where(((xx + yy) % 4) < 1.6, 0.1, -0.03)
        slub = _noise(rng, 64)[:, :1] * 0.05
        out = 1.0 + twill + slub + grain * 0.035
    elif material == "leather":
        out = 1.0 + _noise(rng, 48) * 0.05 + _noise(rng, 8) * 0.05
    elif material == "suede":
        nap = np.repeat(_noise(rng, 64)[:1, :], TILE, axis=0) * 0.1
        out = 1.0 + _noise(rng, 24) * 0.16 + nap + grain * 0.02
    elif material == "canvas":
        weave = np.where((xx % 6 < 3) ^ (yy % 6 < 3), 0.08, -0.08)
        out = 1.0 + weave + grain * 0.03
    elif material == "mesh":
        du = (xx % 8) - 4
        dv = ((yy + np.where((xx // 8) % 2 == 0, 0, 4)) % 8) - 4
        out = np.where(du * du + dv * dv < 4.0, 0.62, 1.03) + grain * 0.02
    elif material == "satin":
        out = 1.0 + _noise(rng, 6) * 0.03 + grain * 0.008
    elif material == "wool":
        out = 1.0 + _soften(grain) * 0.2 + _noise(rng, 20) * 0.05
    elif material == "knit":
        rib = np.abs(((xx % 7) - 3.5) / 3.5)
        loops = np.abs(((yy + rib * 3.0) % 6) - 3.0) / 3.0
        out = 1.0 + (0.5 - rib) * 0.18 + (loops - 0.5) * 0.08 + grain * 0.02
    elif material == "cotton":
        weave = np.where((xx % 3 < 1.5) ^ (yy % 3 < 1.5), 0.03, -0.03)
        out = 1.0 + weave + grain * 0.03 + _noise(rng, 16) * 0.02
    else:
        out = 1.0 + grain * 0.02 + _noise(rng, 16) * 0.015
    return np.asarray(out, dtype=np.float32)


@lru_cache(maxsize=32)
def _scaled(material: str, size: int) -> np.ndarray:
    tile = _tile(material)
    if size == TILE:
        return tile
    image = Image.fromarray(tile, mode="F").resize((size, size), Image.Resampling.BILINEAR)
    return np.asarray(image, dtype=np.float32)


def surface(material: str, size: int, offset: int) -> np.ndarray:
    """A (size, size) brightness multiplier for `material`, shifted by a per-product offset."""
    field = _scaled(material, size)
    return np.roll(field, (offset % size, (offset * 7) % size), axis=(0, 1))


@lru_cache(maxsize=8)
def _diagonal(size: int) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    return (xx + yy) / (2.0 * size)


def apply_surface(texture: np.ndarray, material: str, offset: int) -> np.ndarray:
    """The texture with the material's surface: its brightness map (also lightening dark fabric, where a pure
    multiplier would vanish) and, for glossy materials, a soft diagonal sheen."""
    size = texture.shape[0]
    field = surface(material, size, offset)
    lift = (field - 1.0) * 45.0
    strength = gloss(material)
    if strength > 0:
        centre = 0.3 + (offset % 40) / 100.0
        lift = lift + strength * 75.0 * np.exp(-(((_diagonal(size) - centre) / 0.06) ** 2))
    out = scale_channels(texture.astype(np.float32), field, lift)
    return np.clip(out, 0, 255, out=out).astype(np.uint8)


def gloss(material: str) -> float:
    """Specular strength of a material."""
    return GLOSS.get(material, 0.0)
