"""Distractor photos: products shot by other shops and photographers, in conventions the galleries never use.

The gallery is one shop's catalogue (centred packshots on near-white paper). Distractors come from elsewhere, as the
released pool comes from another dataset: other shops' packshots on coloured or grey sweeps, flat lays on wood,
linen, marble or concrete with props, garments on hangers against a wall, on-model shots cut off by the frame, and
tight detail crops. Their products are drawn from every category, the gallery-less ones included."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

from lookbench.synth.catalogue import SPECS
from lookbench.synth.drape import Light, sample_light
from lookbench.synth.palette import SKIN_TONES, shade
from lookbench.synth.products import Product
from lookbench.synth.render import render_product
from lookbench.synth.shape import Pose
from lookbench.synth.studio import STUDIO_SIZE, place, prepared
from lookbench.synth.styles import finish, gradient, rand_rgb, soft_noise

CONVENTIONS: tuple[str, ...] = ("packshot", "flat lay", "hanger", "on model", "detail")
WEIGHTS: tuple[float, ...] = (0.3, 0.25, 0.15, 0.2, 0.1)
HANGS = ("top", "dress", "jumpsuit", "skirt", "pants")


def _surface(kind: str, full: int, rng: np.random.Generator) -> Image.Image:
    """A flat-lay surface seen from above (wood planks, linen, marble or concrete), built at half size."""
    size = full // 2
    shape = (size, size)
    if kind == "wood":
        base = np.asarray(rand_rgb(rng, 110, 200), dtype=np.float32) * np.asarray([1.0, 0.78, 0.55], dtype=np.float32)
        rows = np.linspace(0, 1, size, dtype=np.float32)[None, :]
        grain = np.sin(rows * float(rng.uniform(40, 90)) + soft_noise(rng, shape, 8) * 6) * 0.06
        planks = ((np.arange(size)[:, None] // int(rng.integers(size // 5, size // 3))) % 2) * 0.06
        field = 1.0 + grain + planks - (np.arange(size)[:, None] % (size // 4) < 1) * 0.25
        array = base[None, None, :] * field[..., None]
    elif kind == "marble":
        level = float(rng.uniform(215, 245))
        veins = np.abs(np.sin(soft_noise(rng, shape, 5) * 9 + soft_noise(rng, shape, 12) * 3))
        array = np.full((size, size, 3), level, dtype=np.float32) * (1 - 0.25 * (veins < 0.12)[..., None])
    elif kind == "linen":
        tone = np.asarray(rand_rgb(rng, 190, 235), dtype=np.float32)
        fibre = rng.standard_normal((size, size), dtype=np.float32) * 6 + soft_noise(rng, shape, 20) * 14
        array = tone[None, None, :] + fibre[..., None]
    else:
        level = float(rng.uniform(120, 180))
        array = np.full((size, size, 3), level, dtype=np.float32) + (soft_noise(rng, shape, 30)[..., None] - 0.5) * 40
    image = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    return image.resize((full, full), Image.Resampling.BILINEAR)


def _props(image: Image.Image, rng: np.random.Generator) -> None:
    """A few small objects at the edges of a flat lay (a leaf, sunglasses, a cup)."""
    draw = ImageDraw.Draw(image)
    w = image.width
    for _ in range(int(rng.integers(1, 4))):
        x, y = (int(rng.choice([rng.integers(0, w // 5), rng.integers(4 * w // 5, w)])), int(rng.integers(0, w)))
        r = int(rng.integers(w // 20, w // 9))
        colour = rand_rgb(rng, 20, 230)
        kind = int(rng.integers(3))
        if kind == 0:
            draw.ellipse([x - r, y - r // 2, x + r, y + r // 2], fill=colour)
        elif kind == 1:
            draw.ellipse([x - r, y - r // 3, x, y + r // 3], fill=(30, 30, 34))
            draw.ellipse([x + 2, y - r // 3, x + r + 2, y + r // 3], fill=(30, 30, 34))
        else:
            draw.ellipse([x - r, y - r, x + r, y + r], fill=colour, outline=shade(colour, 0.7), width=3)


def _packshot(product: Product, rng: np.random.Generator) -> Image.Image:
    size = STUDIO_SIZE
    if rng.random() < 0.6:
        top = rand_rgb(rng, 150, 235)
    else:
        level = int(rng.integers(170, 225))
        top = (level, level, level)
    array = gradient((size, size), top, tuple(int(c * rng.uniform(0.75, 0.95)) for c in top))
    canvas = Image.fromarray(array.astype(np.uint8))
    light = sample_light(rng, (0.15, 0.5), (0.15, 0.3))
    return _compose(canvas, product, light, rng, float(rng.uniform(0.6, 0.95)), float(rng.uniform(-8, 8)), 0.5)


def _flat_lay(product: Product, rng: np.random.Generator) -> Image.Image:
    canvas = _surface(str(rng.choice(["wood", "marble", "linen", "concrete"])), STUDIO_SIZE, rng)
    _props(canvas, rng)
    light = sample_light(rng, (0.6, 1.0), (0.1, 0.2))
    return _compose(canvas, product, light, rng, float(rng.uniform(0.6, 0.85)), float(rng.uniform(-35, 35)), 0.25)


def _hanger(product: Product, rng: np.random.Generator) -> Image.Image:
    size = STUDIO_SIZE
    wall = rand_rgb(rng, 175, 240)
    array = (
        gradient((size, size), wall, shade(wall, 0.9)) * (0.96 + 0.06 * soft_noise(rng, (size, size), 10))[..., None]
    )
    canvas = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(canvas)
    kind = SPECS[product.category].kind
    wood = rand_rgb(rng, 60, 160)
    if kind in HANGS:
        draw.arc([size * 0.46, size * 0.01, size * 0.54, size * 0.09], 180, 360, fill=(150, 150, 150), width=3)
        draw.line([(size * 0.5, size * 0.05), (size * 0.5, size * 0.11)], fill=(150, 150, 150), width=3)
        draw.line(
            [(size * 0.22, size * 0.17), (size * 0.5, size * 0.1), (size * 0.78, size * 0.17)], fill=wood, width=6
        )
    else:
        draw.rectangle([0, int(size * 0.8), size, int(size * 0.84)], fill=wood)
    light = sample_light(rng, (0.5, 0.9), (0.15, 0.3))
    y_align = 0.09 if kind in HANGS else None
    return _compose(canvas, product, light, rng, float(rng.uniform(0.7, 0.88)), 0.0, 0.3, top=y_align)


def _on_model(product: Product, rng: np.random.Generator) -> Image.Image:
    size = STUDIO_SIZE
    level = int(rng.integers(200, 245))
    canvas = Image.fromarray(gradient((size, size), (level, level, level), (level - 25,) * 3).astype(np.uint8))
    kind = SPECS[product.category].kind
    pose = Pose(float(rng.uniform(10, 25)), float(rng.uniform(10, 25)), float(rng.uniform(0, 6)))
    rendered = render_product(product, 256, pose if kind in HANGS else Pose())
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    zoom = float(rng.uniform(1.0, 1.25))
    body = Image.new("RGBA", (256, 256), (0, 0, 0, 0))
    draw = ImageDraw.Draw(body)
    if kind in ("top", "dress", "jumpsuit"):
        draw.rectangle([112, 0, 144, 60], fill=skin)
        for sign in (-1, 1):
            dx, dy = pose.arm(sign)
            sx = 128 + sign * 44
            draw.line([(sx, 52), (sx + sign * dx * 110, 52 + dy * 110)], fill=skin, width=14)
    elif kind in ("pants", "skirt"):
        for sign in (-1, 1):
            draw.rectangle([128 + sign * 26 - 9, 80, 128 + sign * 26 + 9, 256], fill=skin)
    body.alpha_composite(rendered.image)
    light = sample_light(rng, (0.4, 0.9), (0.2, 0.35))
    item = prepared(replace(rendered, image=body), product.category, "real", light, rng)
    factor = zoom * size / max(item.size)
    item = item.resize((max(1, int(item.width * factor)), max(1, int(item.height * factor))), Image.Resampling.BILINEAR)
    x = (size - item.width) // 2 + int(rng.integers(-size // 12, size // 12 + 1))
    cut = float(rng.uniform(0.02, 0.12))
    y = -int(item.height * cut) if kind in HANGS else (size - item.height) // 2
    place(canvas, item, x, y, light, shadow=0.2)
    return finish(canvas, "real", rng)


def _detail(product: Product, rng: np.random.Generator) -> Image.Image:
    size = STUDIO_SIZE
    canvas = Image.new("RGB", (size, size), rand_rgb(rng, 200, 250))
    light = sample_light(rng, (0.3, 0.8), (0.1, 0.25))
    return _compose(canvas, product, light, rng, float(rng.uniform(1.3, 1.7)), float(rng.uniform(-10, 10)), 0.3)


def _compose(
    canvas: Image.Image,
    product: Product,
    light: Light,
    rng: np.random.Generator,
    scale: float,
    angle: float,
    shadow: float,
    top: float | None = None,
) -> Image.Image:
    size = canvas.width
    item = prepared(render_product(product), product.category, "real", light, rng)
    if rng.random() < 0.5:
        item = ImageOps.mirror(item)
    if angle:
        item = item.rotate(angle, resample=Image.Resampling.BILINEAR, expand=True)
    factor = scale * size / max(item.size)
    item = item.resize((max(1, int(item.width * factor)), max(1, int(item.height * factor))), Image.Resampling.BILINEAR)
    x = int((size - item.width) / 2 + rng.uniform(-0.08, 0.08) * size)
    y = int(top * size) if top is not None else int((size - item.height) / 2 + rng.uniform(-0.08, 0.08) * size)
    place(canvas, item, x, y, light, shadow)
    out = finish(canvas, "real", rng)
    if rng.random() < 0.3:
        out = out.filter(ImageFilter.UnsharpMask(radius=1.5, percent=60, threshold=2))
    return out


MAKERS: dict[str, Callable[[Product, np.random.Generator], Image.Image]] = {
    "packshot": _packshot,
    "flat lay": _flat_lay,
    "hanger": _hanger,
    "on model": _on_model,
    "detail": _detail,
}


def distractor_image(product: Product, rng: np.random.Generator) -> tuple[str, Image.Image]:
    """A distractor photo of `product` in a randomly drawn convention; returns the convention and the image."""
    convention = CONVENTIONS[int(rng.choice(len(CONVENTIONS), p=WEIGHTS))]
    return convention, MAKERS[convention](product, rng)
