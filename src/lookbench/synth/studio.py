"""Studio shots: one product centred on a backdrop, with a per-shot scale, rotation, offset and light."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter, ImageOps

from lookbench.synth.styles import Style, finish, shade_garment, studio_background

STUDIO_SIZE = 224


@dataclass(frozen=True)
class Shot:
    """Camera and light of one shot."""

    scale: float
    angle: float
    offset: tuple[float, float]
    brightness: float
    light_slope: float
    flip: bool


def catalogue_shot() -> Shot:
    """The shop's packshot: centred, upright, evenly lit."""
    return Shot(scale=0.86, angle=0.0, offset=(0.0, 0.0), brightness=1.0, light_slope=0.0, flip=False)


def query_shot(rng: np.random.Generator) -> Shot:
    """Another photo of the same product: different scale, rotation, position, light and orientation."""
    return Shot(
        scale=float(rng.uniform(0.55, 0.9)),
        angle=float(rng.uniform(-25, 25)),
        offset=(float(rng.uniform(-0.12, 0.12)), float(rng.uniform(-0.12, 0.12))),
        brightness=float(rng.uniform(0.75, 1.2)),
        light_slope=float(rng.uniform(-0.3, 0.3)),
        flip=bool(rng.random() < 0.5),
    )


def fit_garment(garment: Image.Image) -> Image.Image:
    """Crop an RGBA render to its visible pixels."""
    box = garment.getchannel("A").getbbox()
    return garment.crop(box) if box else garment


def studio_image(
    garment: Image.Image, style: Style, shot: Shot, rng: np.random.Generator, size: int = STUDIO_SIZE
) -> Image.Image:
    """Compose one studio photo of an RGBA product render."""
    item = shade_garment(fit_garment(garment), style)
    if shot.flip:
        item = ImageOps.mirror(item)
    item = item.rotate(shot.angle, resample=Image.Resampling.BICUBIC, expand=True)
    factor = shot.scale * size / max(item.size)
    item = item.resize((max(1, int(item.width * factor)), max(1, int(item.height * factor))), Image.Resampling.BILINEAR)
    canvas = studio_background(style, (size, size), rng)
    x = int((size - item.width) / 2 + shot.offset[0] * size)
    y = int((size - item.height) / 2 + shot.offset[1] * size)
    shadow = item.getchannel("A").filter(ImageFilter.GaussianBlur(5)).point(lambda v: int(v * 0.35))
    canvas.paste((90, 90, 90), (x + 5, y + 6), shadow)
    canvas.paste(item, (x, y), item)
    ramp = shot.brightness * (1.0 + shot.light_slope * np.linspace(-1, 1, size, dtype=np.float32))
    lit = np.asarray(canvas, dtype=np.float32) * ramp[None, :, None]
    return finish(Image.fromarray(np.clip(lit, 0, 255).astype(np.uint8)), style, rng)
