"""Shop photos: the one mixture of shooting conventions that every gallery and distractor image is drawn from.

A gallery row and a distractor differ only in the product they show. Both draw their convention (a packshot on a
white or a coloured sweep, a flat lay on wood, linen, marble or concrete with props, a hanger or shelf, an on-model
shot cut off by the frame, a detail crop), the garment's layout (`shop_pose`), their light, frame size and aspect,
sensor noise, sharpening and JPEG quality from the same distribution, so where an image came from leaves no trace in
its pixels. Queries keep their subset's own conventions (`synth.studio`, `synth.street`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

from lookbench.datasets.synth.camera import develop
from lookbench.datasets.synth.catalogue import SPECS
from lookbench.datasets.synth.drape import Light, sample_light
from lookbench.datasets.synth.palette import SKIN_TONES, shade
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.render import render_product
from lookbench.datasets.synth.shape import Pose
from lookbench.datasets.synth.studio import place, prepared
from lookbench.datasets.synth.styles import add_sensor_noise, gradient, rand_rgb, soft_noise, studio_background

Frame = tuple[int, int]
CONVENTIONS: tuple[str, ...] = ("packshot", "coloured sweep", "flat lay", "hanger", "on model", "detail")
WEIGHTS: tuple[float, ...] = (0.3, 0.15, 0.2, 0.12, 0.15, 0.08)
FRAMES: tuple[Frame, ...] = ((224, 224), (200, 250), (192, 256), (256, 192))
"""Width x height: square, 4:5 and 3:4 portrait, 4:3 landscape (about 50k pixels each)."""
FRAME_WEIGHTS: tuple[float, ...] = (0.4, 0.25, 0.2, 0.15)
JPEG_QUALITIES: tuple[int, ...] = (75, 80, 85, 90, 95)
SENSOR_SIGMA = (1.5, 6.0)
SHARPENED = 0.3
"""Share of photos a shop sharpened."""
HANGS = ("top", "dress", "jumpsuit", "skirt", "pants")
POSED = ("top", "dress", "jumpsuit", "pants")
"""Kinds whose sleeves or legs a pose moves."""
SHOP_ARMS = (20.0, 40.0)
"""Sleeve angles from vertical a shop photo lays a garment out with, degrees."""


@dataclass(frozen=True)
class ShopPhoto:
    """One shop photo of a product: its convention, pixels and the JPEG quality it is saved at."""

    convention: str
    image: Image.Image
    quality: int


def _surface(kind: str, frame: Frame, rng: np.random.Generator) -> Image.Image:
    """A flat-lay surface seen from above (wood planks, linen, marble or concrete), built at half size."""
    w, h = max(8, frame[0] // 2), max(8, frame[1] // 2)
    if kind == "wood":
        base = np.asarray(rand_rgb(rng, 110, 200), dtype=np.float32) * np.asarray([1.0, 0.78, 0.55], dtype=np.float32)
        cols = np.linspace(0, 1, w, dtype=np.float32)[None, :]
        grain = np.sin(cols * float(rng.uniform(40, 90)) + soft_noise(rng, (w, h), 8) * 6) * 0.06
        rows = np.arange(h)[:, None]
        planks = ((rows // int(rng.integers(h // 5, h // 3))) % 2) * 0.06
        field = 1.0 + grain + planks - (rows % (h // 4) < 1) * 0.25
        array = base[None, None, :] * field[..., None]
    elif kind == "marble":
        level = float(rng.uniform(215, 245))
        veins = np.abs(np.sin(soft_noise(rng, (w, h), 5) * 9 + soft_noise(rng, (w, h), 12) * 3))
        array = np.full((h, w, 3), level, dtype=np.float32) * (1 - 0.25 * (veins < 0.12)[..., None])
    elif kind == "linen":
        tone = np.asarray(rand_rgb(rng, 190, 235), dtype=np.float32)
        fibre = rng.standard_normal((h, w), dtype=np.float32) * 6 + soft_noise(rng, (w, h), 20) * 14
        array = tone[None, None, :] + fibre[..., None]
    else:
        level = float(rng.uniform(120, 180))
        array = np.full((h, w, 3), level, dtype=np.float32) + (soft_noise(rng, (w, h), 30)[..., None] - 0.5) * 40
    image = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    return image.resize(frame, Image.Resampling.BILINEAR)


def _props(image: Image.Image, rng: np.random.Generator) -> None:
    """A few small objects at the edges of a flat lay (a leaf, sunglasses, a cup)."""
    draw = ImageDraw.Draw(image)
    w, h = image.size
    for _ in range(int(rng.integers(1, 4))):
        x, y = (int(rng.choice([rng.integers(0, w // 5), rng.integers(4 * w // 5, w)])), int(rng.integers(0, h)))
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


def _packshot(product: Product, frame: Frame, rng: np.random.Generator) -> Image.Image:
    canvas = studio_background("real", frame, rng)
    light = sample_light(rng, (0.08, 0.3), (0.12, 0.25))
    return _compose(canvas, product, light, rng, float(rng.uniform(0.72, 0.92)), float(rng.uniform(-3, 3)), 0.35)


def _coloured_sweep(product: Product, frame: Frame, rng: np.random.Generator) -> Image.Image:
    if rng.random() < 0.6:
        top = rand_rgb(rng, 150, 235)
    else:
        level = int(rng.integers(170, 225))
        top = (level, level, level)
    array = gradient(frame, top, tuple(int(c * rng.uniform(0.75, 0.95)) for c in top))
    canvas = Image.fromarray(array.astype(np.uint8))
    light = sample_light(rng, (0.15, 0.5), (0.15, 0.3))
    return _compose(canvas, product, light, rng, float(rng.uniform(0.6, 0.95)), float(rng.uniform(-8, 8)), 0.5)


def _flat_lay(product: Product, frame: Frame, rng: np.random.Generator) -> Image.Image:
    canvas = _surface(str(rng.choice(["wood", "marble", "linen", "concrete"])), frame, rng)
    _props(canvas, rng)
    light = sample_light(rng, (0.6, 1.0), (0.1, 0.2))
    return _compose(canvas, product, light, rng, float(rng.uniform(0.6, 0.85)), float(rng.uniform(-35, 35)), 0.25)


def _hanger(product: Product, frame: Frame, rng: np.random.Generator) -> Image.Image:
    w, h = frame
    wall = rand_rgb(rng, 175, 240)
    array = gradient(frame, wall, shade(wall, 0.9)) * (0.96 + 0.06 * soft_noise(rng, frame, 10))[..., None]
    canvas = Image.fromarray(np.clip(array, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(canvas)
    kind = SPECS[product.category].kind
    wood = rand_rgb(rng, 60, 160)
    if kind in HANGS:
        draw.arc([w * 0.46, h * 0.01, w * 0.54, h * 0.09], 180, 360, fill=(150, 150, 150), width=3)
        draw.line([(w * 0.5, h * 0.05), (w * 0.5, h * 0.11)], fill=(150, 150, 150), width=3)
        draw.line([(w * 0.22, h * 0.17), (w * 0.5, h * 0.1), (w * 0.78, h * 0.17)], fill=wood, width=6)
    else:
        draw.rectangle([0, int(h * 0.8), w, int(h * 0.84)], fill=wood)
    light = sample_light(rng, (0.5, 0.9), (0.15, 0.3))
    y_align = 0.09 if kind in HANGS else None
    return _compose(canvas, product, light, rng, float(rng.uniform(0.7, 0.88)), 0.0, 0.3, top=y_align)


def _on_model(product: Product, frame: Frame, rng: np.random.Generator) -> Image.Image:
    w, h = frame
    level = int(rng.integers(200, 245))
    canvas = Image.fromarray(gradient(frame, (level, level, level), (level - 25,) * 3).astype(np.uint8))
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
    item = _resized(item, zoom * min(w / item.width, h / item.height))
    x = (w - item.width) // 2 + int(rng.integers(-w // 12, w // 12 + 1))
    cut = float(rng.uniform(0.02, 0.12))
    y = -int(item.height * cut) if kind in HANGS else (h - item.height) // 2
    place(canvas, item, x, y, light, shadow=0.2)
    return canvas


def _detail(product: Product, frame: Frame, rng: np.random.Generator) -> Image.Image:
    canvas = Image.new("RGB", frame, rand_rgb(rng, 200, 250))
    light = sample_light(rng, (0.3, 0.8), (0.1, 0.25))
    return _compose(canvas, product, light, rng, float(rng.uniform(1.3, 1.7)), float(rng.uniform(-10, 10)), 0.3)


def shop_pose(product: Product, rng: np.random.Generator) -> Pose:
    """How this shot lays out the garment: sleeves and legs arranged anew for every photo (a rigid catalogue
    drawing would be one template in every shot)."""
    if SPECS[product.category].kind not in POSED:
        return Pose()
    return Pose(float(rng.uniform(*SHOP_ARMS)), float(rng.uniform(*SHOP_ARMS)), float(rng.uniform(0, 5)))


def _resized(item: Image.Image, factor: float) -> Image.Image:
    size = (max(1, int(item.width * factor)), max(1, int(item.height * factor)))
    return item.resize(size, Image.Resampling.BILINEAR)


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
    w, h = canvas.size
    item = prepared(render_product(product, pose=shop_pose(product, rng)), product.category, "real", light, rng)
    if rng.random() < 0.5:
        item = ImageOps.mirror(item)
    if angle:
        item = item.rotate(angle, resample=Image.Resampling.BILINEAR, expand=True)
    item = _resized(item, scale * min(w / item.width, h / item.height))
    x = int((w - item.width) / 2 + rng.uniform(-0.08, 0.08) * w)
    y = int(top * h) if top is not None else int((h - item.height) / 2 + rng.uniform(-0.08, 0.08) * h)
    place(canvas, item, x, y, light, shadow)
    return canvas


def _camera(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """White balance, exposure and tone, sensor noise and sometimes sharpening, drawn alike for every shop photo."""
    out = Image.fromarray(
        add_sensor_noise(np.asarray(develop(image, rng, "real")), rng, float(rng.uniform(*SENSOR_SIGMA)))
    )
    if rng.random() < SHARPENED:
        out = out.filter(ImageFilter.UnsharpMask(radius=1.5, percent=60, threshold=2))
    return out


MAKERS: dict[str, Callable[[Product, Frame, np.random.Generator], Image.Image]] = {
    "packshot": _packshot,
    "coloured sweep": _coloured_sweep,
    "flat lay": _flat_lay,
    "hanger": _hanger,
    "on model": _on_model,
    "detail": _detail,
}


def shop_photo(product: Product, rng: np.random.Generator) -> ShopPhoto:
    """A shop photo of `product`: convention, frame, light, camera and JPEG quality drawn from the shared mixture."""
    convention = CONVENTIONS[int(rng.choice(len(CONVENTIONS), p=WEIGHTS))]
    frame = FRAMES[int(rng.choice(len(FRAMES), p=FRAME_WEIGHTS))]
    quality = JPEG_QUALITIES[int(rng.integers(len(JPEG_QUALITIES)))]
    return ShopPhoto(convention, _camera(MAKERS[convention](product, frame, rng), rng), quality)
