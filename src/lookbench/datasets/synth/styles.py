"""The two looks: "real" (camera photos: seamless backdrops, depth of field, sensor noise) and "aigen" (the look of
generator output: over-smooth textures, halos around the subject, inconsistent light, saturated colour casts)."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageEnhance, ImageFilter

from lookbench.datasets.synth.pixels import scale_channels

Style = Literal["real", "aigen"]
STYLES: tuple[Style, ...] = ("real", "aigen")
SENSOR_TILE = 1280
"""Side of the cached sensor-noise tile (covers the largest image, a street scene)."""


def rand_rgb(rng: np.random.Generator, low: int = 0, high: int = 256) -> tuple[int, int, int]:
    """A random colour with channels in [low, high)."""
    r, g, b = (int(v) for v in rng.integers(low, high, size=3))
    return (r, g, b)


def gradient(size: tuple[int, int], top: tuple[int, ...], bottom: tuple[int, ...]) -> np.ndarray:
    """An (h, w, 3) float vertical gradient."""
    w, h = size
    t = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None, None]
    grad = np.asarray(top, dtype=np.float32) * (1 - t) + np.asarray(bottom, dtype=np.float32) * t
    return np.broadcast_to(grad, (h, w, 3))


def soft_noise(rng: np.random.Generator, size: tuple[int, int], cells: int) -> np.ndarray:
    """An (h, w) field of smooth noise in [0, 1]."""
    w, h = size
    grain = rng.random((max(2, h * cells // max(w, h)), max(2, cells))).astype(np.float32)
    image = Image.fromarray((grain * 255).astype(np.uint8)).resize((w, h), Image.Resampling.BICUBIC)
    return np.asarray(image, dtype=np.float32) / 255.0


def studio_background(style: Style, size: tuple[int, int], rng: np.random.Generator) -> Image.Image:
    """Real: a seamless paper backdrop with a soft light falloff. Aigen: a pastel gradient with a bokeh texture.
    Both are smooth, so they are built small and enlarged."""
    w, h = size
    small = (max(4, w // 8), max(4, h // 8))
    sw, sh = small
    if style == "real":
        level = float(rng.uniform(232, 250))
        tint = rng.uniform(-4, 4, size=3)
        base = gradient(small, tuple(level + tint), tuple(level - rng.uniform(6, 22) + tint))
        yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
        r2 = ((xx / sw - 0.5) ** 2 + (yy / sh - 0.45) ** 2) * 2.0
        array = base * (1.0 - float(rng.uniform(0.04, 0.12)) * r2)[..., None]
        return Image.fromarray(np.clip(array, 0, 255).astype(np.uint8)).resize(size, Image.Resampling.BILINEAR)
    top, bottom = rand_rgb(rng, 190, 245), rand_rgb(rng, 160, 235)
    array = gradient(small, top, bottom) * (0.92 + 0.12 * soft_noise(rng, small, 3))[..., None]
    image = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    bokeh(image, rng, 6, (max(1, sw // 12), max(2, sw // 5)))
    return image.resize(size, Image.Resampling.BICUBIC)


def bokeh(image: Image.Image, rng: np.random.Generator, count: int, radius: tuple[int, int]) -> None:
    """Soft bright discs (out-of-focus lights) blended onto an image in place."""
    layer = Image.new("RGB", image.size, (0, 0, 0))
    draw = ImageDraw.Draw(layer)
    for _ in range(count):
        x, y = int(rng.integers(0, image.width)), int(rng.integers(0, image.height))
        r = int(rng.integers(radius[0], max(radius[0] + 1, radius[1])))
        draw.ellipse([x - r, y - r, x + r, y + r], fill=rand_rgb(rng, 20, 70))
    layer = layer.filter(ImageFilter.GaussianBlur(max(1, radius[0] // 2)))
    image.paste(ImageChops.add(image, layer))


def street_background(style: Style, size: tuple[int, int], rng: np.random.Generator) -> Image.Image:
    """An outdoor scene drawn at a third of the size, then enlarged: buildings, pavement, clutter, out of focus."""
    w, h = size
    small = (max(8, w // 3), max(8, h // 3))
    sw, sh = small
    image = Image.new("RGB", small, rand_rgb(rng, 150, 230))
    draw = ImageDraw.Draw(image)
    horizon = int(sh * rng.uniform(0.55, 0.72))
    x = -int(rng.integers(0, 30))
    while x < sw:
        bw = int(rng.integers(sw // 6, sw // 2))
        top = int(rng.integers(5, max(6, horizon - 40)))
        wall = rand_rgb(rng, 60, 220)
        draw.rectangle([x, top, x + bw, horizon], fill=wall)
        win = rand_rgb(rng, 20, 120) if rng.random() < 0.5 else rand_rgb(rng, 150, 250)
        step_y, step_x = int(rng.integers(16, 26)), int(rng.integers(14, 22))
        for wy in range(top + 6, horizon - 10, step_y):
            for wx in range(x + 5, x + bw - 8, step_x):
                draw.rectangle([wx, wy, wx + step_x // 2, wy + step_y // 2], fill=win)
        if rng.random() < 0.4:
            draw.rectangle([x + bw // 4, horizon - 30, x + bw // 4 + 16, horizon], fill=rand_rgb(rng, 20, 90))
        x += bw + int(rng.integers(0, 10))
    draw.rectangle([0, horizon, sw, sh], fill=rand_rgb(rng, 90, 170))
    for k in range(int(rng.integers(3, 7))):
        y = horizon + k * (sh - horizon) // 6
        draw.line([(0, y), (sw, y + int(rng.integers(-8, 8)))], fill=rand_rgb(rng, 60, 140), width=1)
    for _ in range(int(rng.integers(6, 14))):
        cx, cy = int(rng.integers(0, sw)), int(rng.integers(0, sh))
        r = int(rng.integers(4, 20))
        if rng.random() < 0.5:
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=rand_rgb(rng))
        else:
            draw.rectangle([cx - r, cy - r // 2, cx + r, cy + r // 2], fill=rand_rgb(rng))
    blur = float(rng.uniform(0.6, 1.6)) if style == "real" else 2.0
    image = image.filter(ImageFilter.GaussianBlur(blur)).resize(size, Image.Resampling.BICUBIC)
    if style == "aigen":
        bokeh(image, rng, 10, (w // 40, w // 12))
    return image


PRINT_EDGE = 24
"""Local contrast (levels) above which the AI look keeps a pixel sharp: print edges, not weave or grain."""


def smooth_garment(garment: Image.Image, style: Style) -> Image.Image:
    """Aigen: the over-smooth, plastic surface of generated fabric inside a crisp silhouette. Weave and grain are
    blurred away, but where a pixel stands out from its blur by more than `PRINT_EDGE` (a print's edge) it stays
    sharp: generators smooth surfaces, not the motifs printed on them."""
    if style == "real":
        return garment
    alpha = garment.getchannel("A")
    rgb = garment.convert("RGB")
    sharp = np.asarray(rgb, dtype=np.int16)
    soft = np.asarray(rgb.filter(ImageFilter.GaussianBlur(max(1.0, garment.width / 150))), dtype=np.int16)
    edge = np.abs(sharp - soft).max(axis=2, keepdims=True) > PRINT_EDGE
    out = Image.fromarray(np.where(edge, sharp, soft).astype(np.uint8)).convert("RGBA")
    out.putalpha(alpha)
    return out


def halo(image: Image.Image, subject: Image.Image, rng: np.random.Generator, strength: float) -> Image.Image:
    """A bright rim around the subject's silhouette, as generators leave where they blend figure and background."""
    w, h = image.size
    small = subject.resize((max(4, w // 4), max(4, h // 4)), Image.Resampling.BILINEAR)
    spread = small.filter(ImageFilter.GaussianBlur(max(1.0, w / 400))).resize((w, h), Image.Resampling.BILINEAR)
    outside = 1.0 - np.asarray(subject, dtype=np.float32) / 255.0
    rim = np.clip(np.asarray(spread, dtype=np.float32) / 255.0 * 1.8, 0.0, 1.0) * outside
    glow = np.asarray(rand_rgb(rng, 200, 256), dtype=np.float32)
    array = np.asarray(image, dtype=np.float32)
    keep = 1 - rim * strength
    for c in range(3):
        channel = array[..., c]
        channel *= keep
        channel += glow[c] * rim * strength
    return Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))


def light_map(size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """(h, w) multiplier: a vignette times a light patch that matches no light in the scene, built small."""
    w, h = size
    sw, sh = max(8, w // 8), max(8, h // 8)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    lx, ly = float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.1, 0.6))
    patch = np.exp(-(((xx / sw - lx) ** 2 + (yy / sh - ly) ** 2) / float(rng.uniform(0.01, 0.04))))
    r2 = ((xx / sw - 0.5) ** 2 + (yy / sh - 0.5) ** 2) / 0.5
    small = (1.0 - 0.2 * r2) * (1.0 + patch * float(rng.uniform(0.1, 0.25)))
    return np.asarray(Image.fromarray(small.astype(np.float32), mode="F").resize(size, Image.Resampling.BILINEAR))


@lru_cache(maxsize=1)
def _sensor_tile() -> np.ndarray:
    rng = np.random.default_rng(20260601)
    return (rng.standard_normal((SENSOR_TILE, SENSOR_TILE, 3)) * 16).astype(np.int16)


def add_sensor_noise(array: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """`array` (h, w, 3 uint8) plus camera noise of about `sigma`, cut from a cached tile at a random place."""
    h, w = array.shape[:2]
    tile = _sensor_tile()
    oy, ox = int(rng.integers(0, SENSOR_TILE - h + 1)), int(rng.integers(0, SENSOR_TILE - w + 1))
    noise = tile[oy : oy + h, ox : ox + w] * int(round(sigma * 16))
    noise >>= 8
    noise += array
    return np.clip(noise, 0, 255, out=noise).astype(np.uint8)


def finish(
    image: Image.Image, style: Style, rng: np.random.Generator, subject: Image.Image | None = None
) -> Image.Image:
    """Final camera or generator look. Real: sensor noise. Aigen: a halo round the subject, a light patch that
    matches no light in the scene, colour cast, boosted saturation, glow and vignette, no sensor noise."""
    if style == "real":
        return Image.fromarray(add_sensor_noise(np.asarray(image), rng, float(rng.uniform(2.5, 5.0))))
    w, h = image.size
    if subject is not None:
        image = halo(image, subject, rng, float(rng.uniform(0.45, 0.8)))
    array = scale_channels(np.asarray(image, dtype=np.float32), light_map((w, h), rng))
    tint = np.asarray(rand_rgb(rng, 0, 256), dtype=np.float32) * 0.08
    for c in range(3):
        channel = array[..., c]
        channel *= np.float32(0.92)
        channel += tint[c]
    out = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    out = ImageEnhance.Color(out).enhance(float(rng.uniform(1.1, 1.3)))
    small = out.resize((max(4, w // 4), max(4, h // 4)), Image.Resampling.BILINEAR)
    glow = small.filter(ImageFilter.GaussianBlur(max(1.0, w / 280))).resize((w, h), Image.Resampling.BILINEAR)
    return Image.blend(out, glow, 0.25)
