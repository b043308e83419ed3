"""How a camera sees colour: each shot's white balance, exposure, tone response and saturation (and a generator's
colour cast), so one product's observed colour varies across its shots as it does across real photographs.

Every image (studio and street queries, gallery rows, distractors) is developed by `develop` from the same
`CAMERA` distributions, drawn from the shot's own seeded generator; only the AI-generated look adds its cast."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageEnhance

from lookbench.datasets.synth.styles import Style


@dataclass(frozen=True)
class CameraModel:
    """The distributions of one shot's colour rendering (log gains are natural logs)."""

    temperature: float
    """Standard deviation of the white-balance error along the warm-cool axis (log red / blue gain)."""
    tint: float
    """Standard deviation of the green-magenta white-balance error (log green gain)."""
    exposure: float
    """Standard deviation of the exposure error (log global gain)."""
    gamma: tuple[float, float]
    """Range of the tone curve's gamma (lifted or crushed mid-tones)."""
    contrast: tuple[float, float]
    """Range of the S-curve's strength (negative: flatter, positive: punchier)."""
    saturation: tuple[float, float]
    """Range of the saturation factor."""
    cast: float
    """AI-generated look: the largest per-channel log gain of its colour cast."""


CAMERA = CameraModel(
    temperature=0.11,
    tint=0.04,
    exposure=0.2,
    gamma=(0.8, 1.25),
    contrast=(-0.25, 0.45),
    saturation=(0.75, 1.3),
    cast=0.2,
)


@dataclass(frozen=True)
class Development:
    """One shot's colour rendering: per-channel gains, then the tone curve, then saturation."""

    gains: tuple[float, float, float]
    gamma: float
    contrast: float
    saturation: float


def sample_development(rng: np.random.Generator, style: Style, model: CameraModel = CAMERA) -> Development:
    """Draw one shot's white balance, exposure, tone curve and saturation (and for `aigen` a colour cast)."""
    warm, tint, exposure = rng.normal(0.0, (model.temperature, model.tint, model.exposure))
    log_gains = np.asarray([exposure + warm, exposure + tint, exposure - warm])
    if style == "aigen":
        log_gains += rng.uniform(-model.cast, model.cast, size=3)
    gamma = float(np.exp(rng.uniform(np.log(model.gamma[0]), np.log(model.gamma[1]))))
    r, g, b = (float(v) for v in np.exp(log_gains))
    return Development((r, g, b), gamma, float(rng.uniform(*model.contrast)), float(rng.uniform(*model.saturation)))


def tone_lut(development: Development) -> list[int]:
    """The 768-entry `Image.point` table of gain, gamma and S-curve per RGB channel."""
    levels = np.arange(256, dtype=np.float64) / 255.0
    tables = []
    for gain in development.gains:
        v = np.clip(levels * gain, 0.0, 1.0) ** development.gamma
        v = v + development.contrast * (v * v * (3.0 - 2.0 * v) - v)
        tables.append(np.clip(np.round(v * 255.0), 0, 255).astype(np.uint8))
    table: list[int] = np.concatenate(tables).tolist()
    return table


def develop(image: Image.Image, rng: np.random.Generator, style: Style) -> Image.Image:
    """`image` as one camera (or generator) renders its colours, drawn from `CAMERA` with `rng`."""
    development = sample_development(rng, style)
    out = image.convert("RGB").point(tone_lut(development))
    if development.saturation != 1.0:
        out = ImageEnhance.Color(out).enhance(development.saturation)
    return out
