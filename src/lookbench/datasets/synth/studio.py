"""Studio shots: one product on a backdrop, with a per-shot scale, rotation, offset, folds and light."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageFilter, ImageOps

from lookbench.datasets.synth.camera import develop
from lookbench.datasets.synth.catalogue import SPECS
from lookbench.datasets.synth.drape import Light, drape, sample_light
from lookbench.datasets.synth.render import Rendered
from lookbench.datasets.synth.styles import Style, finish, smooth_garment, studio_background

STUDIO_SIZE = 224
HANGING_KINDS = ("dress", "skirt", "jumpsuit")


@dataclass(frozen=True)
class Shot:
    """Camera and light of one shot."""

    scale: float
    angle: float
    offset: tuple[float, float]
    brightness: float
    light_slope: float
    flip: bool
    light: Light


def query_shot(rng: np.random.Generator) -> Shot:
    """Another photo of the same product: different scale, rotation, position, light, folds and orientation."""
    return Shot(
        scale=float(rng.uniform(0.55, 0.9)),
        angle=float(rng.uniform(-25, 25)),
        offset=(float(rng.uniform(-0.12, 0.12)), float(rng.uniform(-0.12, 0.12))),
        brightness=float(rng.uniform(0.75, 1.2)),
        light_slope=float(rng.uniform(-0.3, 0.3)),
        flip=bool(rng.random() < 0.5),
        light=sample_light(rng, (0.35, 0.9), (0.15, 0.35)),
    )


def fit_garment(garment: Image.Image, margin: float = 0.0) -> Image.Image:
    """Crop an RGBA render to its visible pixels, keeping a transparent margin (a share of the larger side)."""
    box = garment.getchannel("A").getbbox()
    item = garment.crop(box) if box else garment
    if margin <= 0:
        return item
    pad = max(1, int(max(item.size) * margin))
    return ImageOps.expand(item, border=pad, fill=(0, 0, 0, 0))


def prepared(rendered: Rendered, category: str, style: Style, light: Light, rng: np.random.Generator) -> Image.Image:
    """A render cropped, draped with folds and shading, and given the style's surface."""
    item = fit_garment(rendered.image, margin=0.03)
    item = drape(item, rng, light, rendered.gloss, SPECS[category].kind in HANGING_KINDS)
    return smooth_garment(item, style)


@lru_cache(maxsize=16)
def _shadow_lut(strength: float) -> tuple[int, ...]:
    """The lookup table that darkens a shadow mask to `strength` of its value."""
    return tuple(int(v * strength) for v in range(256))


def place(canvas: Image.Image, item: Image.Image, x: int, y: int, light: Light, shadow: float = 0.35) -> Image.Image:
    """Paste an RGBA item with a soft drop shadow cast away from the light; return the subject mask."""
    alpha = item.getchannel("A")
    blur = max(2, item.width // 40)
    small = alpha.resize((max(2, item.width // 4), max(2, item.height // 4)), Image.Resampling.BILINEAR)
    soft = small.filter(ImageFilter.BoxBlur(max(1, blur // 4))).resize(item.size, Image.Resampling.BILINEAR)
    shade = soft.point(_shadow_lut(shadow))
    dx, dy = int(-light.dx * blur * 1.5), int(-light.dy * blur * 1.5) + blur
    canvas.paste((70, 70, 72), (x + dx, y + dy), shade)
    canvas.paste(item, (x, y), item)
    subject = Image.new("L", canvas.size, 0)
    subject.paste(alpha, (x, y))
    return subject


def studio_image(
    rendered: Rendered, category: str, style: Style, shot: Shot, rng: np.random.Generator, size: int = STUDIO_SIZE
) -> Image.Image:
    """Compose one studio photo of a product render."""
    item = prepared(rendered, category, style, shot.light, rng)
    if shot.flip:
        item = ImageOps.mirror(item)
    if shot.angle:
        item = item.rotate(shot.angle, resample=Image.Resampling.BICUBIC, expand=True)
    factor = shot.scale * size / max(item.size)
    item = item.resize((max(1, int(item.width * factor)), max(1, int(item.height * factor))), Image.Resampling.BILINEAR)
    canvas = studio_background(style, (size, size), rng)
    x = int((size - item.width) / 2 + shot.offset[0] * size)
    y = int((size - item.height) / 2 + shot.offset[1] * size)
    subject = place(canvas, item, x, y, shot.light)
    if shot.brightness != 1.0 or shot.light_slope:
        ramp = shot.brightness * (1.0 + shot.light_slope * np.linspace(-1, 1, size, dtype=np.float32))
        canvas = Image.fromarray(
            np.clip(np.asarray(canvas, dtype=np.float32) * ramp[None, :, None], 0, 255).astype(np.uint8)
        )
    return finish(develop(canvas, rng, style), style, rng, subject)
