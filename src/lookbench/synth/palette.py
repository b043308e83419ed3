"""The RGB values of the taxonomy colours, shading helpers and pattern secondary colours."""

from __future__ import annotations

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
HAIR: tuple[RGB, ...] = ((30, 24, 20), (90, 60, 30), (200, 160, 90), (60, 40, 30))
METAL: RGB = (182, 182, 176)


def luminance(rgb: RGB) -> float:
    """Perceived brightness 0-255."""
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def shade(rgb: RGB, factor: float) -> RGB:
    """Scale a colour's brightness (factor < 1 darkens), clipped to 0-255."""
    return (
        int(min(255, max(0, rgb[0] * factor))),
        int(min(255, max(0, rgb[1] * factor))),
        int(min(255, max(0, rgb[2] * factor))),
    )


def contrast(rgb: RGB) -> RGB:
    """A colour that stands out on `rgb`: near-white on dark fabric, near-black on light fabric."""
    return (236, 236, 232) if luminance(rgb) < 140 else (36, 36, 40)


def line_colour(rgb: RGB) -> RGB:
    """Seam and outline colour: a strong darker shade, or a mid grey on black fabric."""
    return (96, 96, 100) if luminance(rgb) < 50 else shade(rgb, 0.55)


def jitter(rgb: RGB, rng: np.random.Generator, amount: int = 10) -> RGB:
    """A per-product variation of a colour that keeps it nearest to the same reference colour."""
    for _ in range(8):
        candidate = tuple(int(np.clip(c + rng.integers(-amount, amount + 1), 0, 255)) for c in rgb)
        out: RGB = (candidate[0], candidate[1], candidate[2])
        if nearest_colour(out) == nearest_colour(rgb):
            return out
    return rgb


def nearest_colours(pixels: np.ndarray) -> np.ndarray:
    """The nearest colour attribute for each RGB row of an (N, 3+) array."""
    names = np.asarray(list(COLOURS))
    refs = np.asarray(list(COLOURS.values()), dtype=np.float32)
    values = np.asarray(pixels, dtype=np.float32).reshape(-1, np.shape(pixels)[-1])[:, :3]
    distances = ((values[:, None, :] - refs[None, :, :]) ** 2).sum(axis=2)
    return names[np.argmin(distances, axis=1)]


def nearest_colour(rgb: tuple[int, ...] | np.ndarray) -> str:
    """The colour attribute whose reference RGB is nearest to `rgb`."""
    return str(nearest_colours(np.asarray(rgb)[None, :3])[0])
