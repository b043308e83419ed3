"""The two looks: "real" (flat light, plain or photographic backgrounds, sensor noise) and "aigen"
(soft 3D shading, textured painterly backgrounds, a colour cast, glow and vignette)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

Style = Literal["real", "aigen"]
STYLES: tuple[Style, ...] = ("real", "aigen")


def _rand_rgb(rng: np.random.Generator, low: int = 0, high: int = 256) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in rng.integers(low, high, size=3))
    return (r, g, b)


def studio_background(style: Style, size: tuple[int, int], rng: np.random.Generator) -> Image.Image:
    """Real: a near-white seamless backdrop. Aigen: a pastel gradient with a fabric-like texture."""
    w, h = size
    if style == "real":
        level = int(rng.integers(236, 252))
        return Image.new("RGB", size, (level, level, max(0, level - int(rng.integers(0, 5)))))
    top = np.asarray(_rand_rgb(rng, 190, 245), dtype=np.float32)
    bottom = np.asarray(_rand_rgb(rng, 160, 235), dtype=np.float32)
    t = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None, None]
    grad = top * (1 - t) + bottom * t
    grain = rng.normal(0.0, 1.0, size=(h // 8 + 1, w // 8 + 1)).astype(np.float32)
    grain_img = Image.fromarray(((grain - grain.min()) / (np.ptp(grain) + 1e-6) * 255).astype(np.uint8))
    texture = np.asarray(grain_img.resize((w, h), Image.Resampling.BICUBIC), dtype=np.float32)[..., None] / 255.0
    array = grad * (0.9 + 0.15 * texture) * np.ones((1, w, 1), dtype=np.float32)
    return Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))


def street_background(style: Style, size: tuple[int, int], rng: np.random.Generator) -> Image.Image:
    """A cluttered outdoor scene: sky, buildings with windows, pavement, signs and plants."""
    w, h = size
    image = Image.new("RGB", size, _rand_rgb(rng, 150, 230))
    draw = ImageDraw.Draw(image)
    horizon = int(h * rng.uniform(0.55, 0.7))
    x = -int(rng.integers(0, 30))
    while x < w:
        bw = int(rng.integers(40, 110))
        top = int(rng.integers(10, horizon - 40))
        wall = _rand_rgb(rng, 60, 220)
        draw.rectangle([x, top, x + bw, horizon], fill=wall)
        win = _rand_rgb(rng, 20, 120) if rng.random() < 0.5 else _rand_rgb(rng, 150, 250)
        for wy in range(top + 8, horizon - 12, 22):
            for wx in range(x + 6, x + bw - 10, 18):
                draw.rectangle([wx, wy, wx + 9, wy + 12], fill=win)
        x += bw + int(rng.integers(0, 12))
    draw.rectangle([0, horizon, w, h], fill=_rand_rgb(rng, 90, 170))
    for k in range(int(rng.integers(3, 7))):
        y = horizon + k * (h - horizon) // 6
        draw.line([(0, y), (w, y + int(rng.integers(-10, 10)))], fill=_rand_rgb(rng, 60, 140), width=2)
    for _ in range(int(rng.integers(6, 14))):
        cx, cy = int(rng.integers(0, w)), int(rng.integers(0, h))
        r = int(rng.integers(6, 30))
        if rng.random() < 0.5:
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=_rand_rgb(rng))
        else:
            draw.rectangle([cx - r, cy - r // 2, cx + r, cy + r // 2], fill=_rand_rgb(rng))
    if style == "aigen":
        image = image.filter(ImageFilter.GaussianBlur(1.5))
    return image


def shade_garment(garment: Image.Image, style: Style) -> Image.Image:
    """Aigen: darken towards silhouette edges and add a top-left highlight for a rendered 3D feel."""
    if style == "real":
        return garment
    alpha = garment.getchannel("A")
    inner = np.asarray(alpha.filter(ImageFilter.GaussianBlur(max(2, garment.width // 20))), dtype=np.float32) / 255.0
    h, w = inner.shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    highlight = 1.0 + 0.18 * (1.0 - (xx / w + yy / h) / 2.0)
    rgb = np.asarray(garment.convert("RGB"), dtype=np.float32)
    light = (0.75 + 0.25 * inner) * highlight
    out = np.clip(rgb * light[..., None], 0, 255).astype(np.uint8)
    shaded = Image.fromarray(out).convert("RGBA")
    shaded.putalpha(alpha)
    return shaded


def finish(image: Image.Image, style: Style, rng: np.random.Generator) -> Image.Image:
    """Final camera or generator look: real gets sensor noise; aigen gets cast, saturation, glow, vignette."""
    array = np.asarray(image, dtype=np.float32)
    h, w = array.shape[:2]
    if style == "real":
        array += rng.standard_normal(size=array.shape, dtype=np.float32) * np.float32(3.0)
        return Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    cast = np.asarray(_rand_rgb(rng, 0, 256), dtype=np.float32)
    array = array * 0.9 + cast * 0.1
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2) / 0.5
    array = array * (1.0 - 0.2 * r2)[..., None]
    out = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    out = ImageEnhance.Color(out).enhance(float(rng.uniform(1.1, 1.35)))
    glow = out.filter(ImageFilter.GaussianBlur(3))
    return Image.blend(out, glow, 0.35)
