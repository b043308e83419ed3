"""The non-label shape of a product (proportions, trims, logo, buttons) and the pose it is drawn in."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Shape:
    """Proportions and trims no label records; drawn from the product's `variation` seed."""

    width: float
    """Body width factor (0.9-1.12)."""
    hem: float
    """Hem shift within the length's band, in canvas units (+-0.022)."""
    sleeve_width: float
    neck: float
    detail: float
    """Size factor of pockets, collars, straps."""
    buttons: int
    logo: int
    """0: none; 1: round badge; 2: bar mark; 3: triangle mark."""
    logo_x: float
    trim: bool
    """A thin contrast piping along the neckline and hem."""
    sole: int
    """Sole and trim variant of shoes and bags."""


def sample_shape(variation: int) -> Shape:
    """The shape of a product, deterministic in its variation seed."""
    rng = np.random.default_rng(variation)
    return Shape(
        width=float(rng.uniform(0.9, 1.12)),
        hem=float(rng.uniform(-0.022, 0.022)),
        sleeve_width=float(rng.uniform(0.85, 1.2)),
        neck=float(rng.uniform(0.85, 1.2)),
        detail=float(rng.uniform(0.85, 1.15)),
        buttons=int(rng.integers(3, 7)),
        logo=int(rng.choice([0, 0, 1, 2, 3])),
        logo_x=float(rng.uniform(-0.06, 0.06)),
        trim=bool(rng.random() < 0.3),
        sole=int(rng.integers(0, 3)),
    )


@dataclass(frozen=True)
class Pose:
    """How a garment is worn: arm angles from vertical (degrees), leg spread, and a turn of the body."""

    arm_left: float = 30.0
    arm_right: float = 30.0
    stride: float = 0.0
    """Extra outward angle of each trouser leg, degrees."""

    def arm(self, sign: int) -> tuple[float, float]:
        """Unit direction (dx, dy) of the arm on side `sign` (+1 right, -1 left), dx pointing outwards."""
        angle = math.radians(self.arm_right if sign > 0 else self.arm_left)
        return math.sin(angle), math.cos(angle)


CATALOGUE_POSE = Pose()
"""The flat catalogue pose: arms 30 degrees out, legs straight."""
