"""Fabric prints: solid, striped, checked, polka dot and floral, as RGB arrays, at a per-product scale."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from lookbench.datasets.synth.palette import RGB, mix


@dataclass(frozen=True)
class PatternLook:
    """Per-product print parameters (not labels): period in canonical pixels, phase, angle, ink share, motif."""

    period: int
    phase: int
    angle: float
    weight: float
    """Share of each period the second colour takes (stripe width, band width, dot size)."""
    motif: int
    """Variant of the motif: petal count of flowers, double or single bands of checks."""


ANGLES = (0.0, 0.0, 0.0, float(np.pi / 2), 0.785, -0.5)
"""Straight grain thrice as often as a turned, bias-cut or slanted print."""


def sample_pattern_look(rng: np.random.Generator) -> PatternLook:
    """Print scale from fine (9 px) to bold (34 px), straight or bias-cut, thin to heavy ink."""
    period, phase, angle, motif = (int(v) for v in rng.integers((9, 0, 0, 0), (35, 64, len(ANGLES), 3)))
    return PatternLook(period, phase, ANGLES[angle], float(rng.uniform(0.2, 0.34)), motif)


def scaled(look: PatternLook, scale: float) -> PatternLook:
    """The same print for a canvas `scale` times the canonical size."""
    return PatternLook(max(4, int(round(look.period * scale))), look.phase, look.angle, look.weight, look.motif)


def _tile(pattern: str, base: RGB, second: RGB, look: PatternLook) -> np.ndarray:
    """One repeat of an axis-aligned print (two periods square, so prints with a half-drop repeat too)."""
    p = look.period
    n = 2 * (p + 8) if pattern == "floral" else 2 * p
    out = np.empty((n, n, 3), dtype=np.uint8)
    out[:] = base
    ink = np.asarray(second, dtype=np.uint8)
    v, u = np.mgrid[0:n, 0:n].astype(np.float32)
    if pattern == "striped":
        width = max(1, int(round(p * look.weight)))
        out[(v % p) < width] = ink
        if look.motif == 2 and p >= 16:
            out[(v % p) == int(p * 0.72)] = ink
    elif pattern == "checked":
        band = max(1, int(round(p * look.weight * 0.6)))
        band_u = (u % p) < band
        band_v = (v % p) < band
        out[band_u ^ band_v] = np.asarray(mix(base, second, 0.5), dtype=np.uint8)
        out[band_u & band_v] = ink
        if look.motif == 1 and p >= 16:
            out[((u % p) == int(p * 0.6)) | ((v % p) == int(p * 0.6))] = ink
    elif pattern == "polka dot":
        shift = (np.floor(v / p) % 2) * (p / 2) if look.motif == 1 else 0.0
        du = ((u + shift) % p) - p / 2
        dv = (v % p) - p / 2
        radius = p * (0.16 + 0.3 * look.weight)
        out[(du * du + dv * dv) < radius * radius] = ink
    elif pattern == "floral":
        out = _floral(out, base, second, look)
    return out


def fabric(pattern: str, base: RGB, second: RGB, size: int, look: PatternLook) -> np.ndarray:
    """An HxWx3 uint8 print of `pattern` with `base` as the dominant colour: a repeat tiled, then turned."""
    if pattern == "solid":
        out = np.empty((size, size, 3), dtype=np.uint8)
        out[:] = base
        return out
    tile = _tile(pattern, base, second, look)
    span = int(size * 1.45) + 2 if look.angle else size
    reps = -(-(span + look.phase) // tile.shape[0])
    big = np.tile(tile, (reps, reps, 1))[look.phase : look.phase + span, look.phase : look.phase + span]
    if not look.angle:
        return np.ascontiguousarray(big)
    turned = Image.fromarray(big).rotate(float(np.degrees(look.angle)), resample=Image.Resampling.NEAREST)
    offset = (span - size) // 2
    return np.asarray(turned.crop((offset, offset, offset + size, offset + size)), dtype=np.uint8)


def _floral(out: np.ndarray, base: RGB, second: RGB, look: PatternLook) -> np.ndarray:
    """Two half-dropped flowers with leaves on a two-period repeat."""
    n = out.shape[0]
    image = Image.fromarray(out)
    draw = ImageDraw.Draw(image)
    centre = mix(second, (236, 196, 40), 0.6) if second != (236, 200, 70) else (200, 40, 40)
    leaf = mix(base, (40, 110, 50), 0.55)
    step = n / 2
    r = max(1.5, step * (0.07 + 0.08 * look.weight))
    petals = 4 + look.motif
    rng = np.random.default_rng(look.phase)
    for cx, cy in (
        (step * 0.5, step * 0.5),
        (step * 1.5, step * 1.5),
        (step * 1.5, step * 0.5),
        (step * 0.5, step * 1.5),
    ):
        a0 = float(rng.uniform(0, 2 * np.pi))
        for dx in (-n, 0, n):
            for dy in (-n, 0, n):
                x, y = cx + dx, cy + dy
                lx, ly = x + 2.3 * r * np.cos(a0 + 2.2), y + 2.3 * r * np.sin(a0 + 2.2)
                draw.ellipse([lx - r * 0.7, ly - r * 0.4, lx + r * 0.7, ly + r * 0.4], fill=leaf)
                for k in range(petals):
                    a = 2 * np.pi * k / petals + a0
                    px, py = x + 1.5 * r * np.cos(a), y + 1.5 * r * np.sin(a)
                    draw.ellipse([px - r, py - r, px + r, py + r], fill=second)
                draw.ellipse([x - r * 0.7, y - r * 0.7, x + r * 0.7, y + r * 0.7], fill=centre)
    return np.asarray(image, dtype=np.uint8).copy()
