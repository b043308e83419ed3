"""The RGB values of the taxonomy colours, shades within a colour name, and shading helpers."""

from __future__ import annotations

import colorsys
from functools import lru_cache

import numpy as np

RGB = tuple[int, int, int]

COLOURS: dict[str, RGB] = {
    "black": (28, 28, 30),
    "white": (242, 242, 238),
    "grey": (138, 138, 140),
    "red": (200, 32, 42),
    "pink": (238, 146, 182),
    "orange": (238, 128, 28),
    "yellow": (240, 208, 48),
    "green": (46, 138, 62),
    "blue": (38, 78, 190),
    "brown": (118, 74, 40),
}
"""Reference RGB per colour attribute; rendered fabric stays nearest to its own reference."""

SKIN_TONES: tuple[RGB, ...] = ((241, 194, 160), (224, 172, 130), (198, 134, 96), (141, 85, 55), (92, 58, 40))
HAIR: tuple[RGB, ...] = ((30, 24, 20), (90, 60, 30), (200, 160, 90), (60, 40, 30), (150, 150, 150))
METAL: RGB = (182, 182, 176)
GOLD: RGB = (206, 170, 84)

_NAMES = np.asarray(list(COLOURS))
_REFS = np.asarray(list(COLOURS.values()), dtype=np.float32)


def luminance(rgb: RGB) -> float:
    """Perceived brightness 0-255."""
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def saturation(rgb: RGB) -> float:
    """HSV saturation 0-1 weighted by value (dark colours read as less colourful)."""
    _, s, v = colorsys.rgb_to_hsv(*(c / 255.0 for c in rgb))
    return float(s * min(1.0, 0.35 + v))


def shade(rgb: RGB, factor: float) -> RGB:
    """Scale a colour's brightness (factor < 1 darkens), clipped to 0-255."""
    return (
        int(min(255, max(0, rgb[0] * factor))),
        int(min(255, max(0, rgb[1] * factor))),
        int(min(255, max(0, rgb[2] * factor))),
    )


def mix(a: RGB, b: RGB, t: float) -> RGB:
    """`a` moved a fraction `t` towards `b`."""
    return (int(a[0] + (b[0] - a[0]) * t), int(a[1] + (b[1] - a[1]) * t), int(a[2] + (b[2] - a[2]) * t))


def contrast(rgb: RGB) -> RGB:
    """A colour that stands out on `rgb`: near-white on dark fabric, near-black on light fabric."""
    return (236, 236, 232) if luminance(rgb) < 140 else (36, 36, 40)


def line_colour(rgb: RGB) -> RGB:
    """Seam and outline colour: a strong darker shade, or a mid grey on black fabric."""
    return (96, 96, 100) if luminance(rgb) < 50 else shade(rgb, 0.55)


def nearest_colours(pixels: np.ndarray) -> np.ndarray:
    """The nearest colour attribute for each RGB row of an (N, 3+) array."""
    values = np.asarray(pixels, dtype=np.float32).reshape(-1, np.shape(pixels)[-1])[:, :3]
    distances = ((values[:, None, :] - _REFS[None, :, :]) ** 2).sum(axis=2)
    return _NAMES[np.argmin(distances, axis=1)]


def nearest_colour(rgb: tuple[int, ...] | np.ndarray) -> str:
    """The colour attribute whose reference RGB is nearest to `rgb`."""
    return str(nearest_colours(np.asarray(rgb)[None, :3])[0])


POOL = 4096
LIGHTING = np.asarray([0.85, 1.0, 1.12], dtype=np.float32)
"""Brightness factors folds, surfaces and light put on a fabric colour."""


@lru_cache(maxsize=32)
def shade_pool(colour: str, spread: float, margin: float) -> np.ndarray:
    """(n, 3) shades of a colour name (navy to sky for blue, cream to snow for white) that stay nearest to their
    name with room to spare when lit 15 % darker or 12 % brighter (folds, surfaces and light keep them there)."""
    rng = np.random.default_rng([sum(map(ord, colour)), int(spread * 100), int(margin * 100)])
    ref = np.asarray(COLOURS[colour], dtype=np.float32)
    light = rng.normal(0.0, spread * 0.7, size=(POOL, 1))
    candidates = np.clip(ref + light + rng.normal(0.0, spread * 0.5, size=(POOL, 3)), 0, 255).astype(np.int64)
    lit = np.clip(candidates[:, None, :] * LIGHTING[None, :, None], 0, 255)
    d = np.sqrt(((lit[:, :, None, :] - _REFS[None, None, :, :]) ** 2).sum(axis=3))
    index = list(COLOURS).index(colour)
    ok = (np.delete(d, index, axis=2).min(axis=2) - d[:, :, index] >= margin).all(axis=1)
    pool = candidates[ok]
    return pool if len(pool) else np.asarray([COLOURS[colour]], dtype=np.int64)


FAMILIES = 3
"""Shade families per colour name (navy-like to sky-like blues): many products share one, as shops' colours do."""
FAMILY_RADIUS = 9.0
"""How far (RGB distance) a product's shade lies from its family's centre: small against a shot's camera."""


@lru_cache(maxsize=32)
def shade_families(colour: str, spread: float = 34.0, margin: float = 26.0) -> tuple[np.ndarray, ...]:
    """Per family of a colour name, the (n, 3) pool shades within `FAMILY_RADIUS` of its centre; the centres are the
    pool shades nearest a k-means clustering of the pool (deterministic), so every family keeps the pool's margin."""
    pool = shade_pool(colour, spread, margin).astype(np.float64)
    ref = np.asarray(COLOURS[colour], dtype=np.float64)
    centres = [pool[np.argmin(((pool - ref) ** 2).sum(axis=1))]]
    while len(centres) < min(FAMILIES, len(pool)):
        d = np.min([((pool - c) ** 2).sum(axis=1) for c in centres], axis=0)
        centres.append(pool[int(np.argmax(d))])
    means = np.asarray(centres)
    for _ in range(12):
        nearest = np.argmin(((pool[:, None, :] - means[None]) ** 2).sum(axis=2), axis=1)
        counts = np.bincount(nearest, minlength=len(means))[:, None]
        sums = np.stack([np.bincount(nearest, weights=pool[:, c], minlength=len(means)) for c in range(3)], axis=1)
        means = np.where(counts > 0, sums / np.maximum(counts, 1), means)
    out = []
    for mean in means:
        centre = pool[np.argmin(((pool - mean) ** 2).sum(axis=1))]
        out.append(pool[((pool - centre) ** 2).sum(axis=1) <= FAMILY_RADIUS**2].astype(np.int64))
    return tuple(out)


def family_of(colour: str, rgb: RGB) -> int:
    """The index of the shade family of `colour` whose shades lie nearest to `rgb`."""
    families = shade_families(colour)
    return int(np.argmin([((f - np.asarray(rgb)) ** 2).sum(axis=1).min() for f in families]))


def sample_shade(colour: str, rng: np.random.Generator, family: int | None = None) -> RGB:
    """A random shade of a colour name: a family (random unless given), then a shade near its centre."""
    families = shade_families(colour)
    members = families[int(rng.integers(len(families))) if family is None else family % len(families)]
    r, g, b = (int(v) for v in members[int(rng.integers(len(members)))])
    return (r, g, b)


def jitter(rgb: RGB, rng: np.random.Generator, amount: int = 10) -> RGB:
    """A small variation of a colour that keeps it nearest to the same reference colour."""
    for _ in range(8):
        candidate = tuple(int(np.clip(c + rng.integers(-amount, amount + 1), 0, 255)) for c in rgb)
        out: RGB = (candidate[0], candidate[1], candidate[2])
        if nearest_colour(out) == nearest_colour(rgb):
            return out
    return rgb


ACCENTS: tuple[RGB, ...] = (
    (245, 244, 238),
    (30, 30, 34),
    (196, 40, 48),
    (34, 64, 150),
    (236, 200, 70),
    (40, 120, 70),
    (230, 140, 170),
    (150, 110, 70),
    (120, 170, 220),
)
"""Secondary print, trim and logo colours (a print's second colour never covers half the fabric)."""


def accent(rng: np.random.Generator, base: RGB) -> RGB:
    """A secondary colour that stands out on `base`."""
    for _ in range(8):
        candidate = ACCENTS[int(rng.integers(len(ACCENTS)))]
        if sum(abs(a - b) for a, b in zip(candidate, base, strict=True)) > 160:
            return candidate
    return contrast(base)
