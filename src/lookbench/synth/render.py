"""Render a product's canonical flat image (RGBA on transparent) from its exact labels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PIL import Image

from lookbench.synth.accessories import draw_bag, draw_boots, draw_sneakers
from lookbench.synth.bottoms import draw_pants, draw_skirt
from lookbench.synth.canvas import Canvas
from lookbench.synth.catalogue import SPECS
from lookbench.synth.palette import line_colour
from lookbench.synth.patterns import fabric
from lookbench.synth.products import Product
from lookbench.synth.tops import draw_dress, draw_top

CANONICAL_SIZE = 256

DRAWERS: dict[str, Callable[[Canvas, Product, np.random.Generator], None]] = {
    "top": draw_top,
    "dress": draw_dress,
    "skirt": draw_skirt,
    "pants": draw_pants,
    "bag": draw_bag,
    "sneakers": draw_sneakers,
    "boots": draw_boots,
}


@dataclass(frozen=True)
class Rendered:
    """A rendered product: the RGBA image and named probe pixels whose content the labels fix."""

    image: Image.Image
    probes: dict[str, tuple[int, int]]
    fabric_mask: Image.Image
    """Where the main fabric is (before parts such as pockets, straps and soles are drawn over it)."""


def render_product(product: Product, size: int = CANONICAL_SIZE) -> Rendered:
    """Draw the product's silhouette, fabric pattern and parts; deterministic in the product."""
    canvas = Canvas(size)
    rng = np.random.default_rng(product.variation)
    DRAWERS[SPECS[product.category].kind](canvas, product, rng)
    scale = size / CANONICAL_SIZE
    look = product.pattern_look
    look = type(look)(period=max(4, int(look.period * scale)), phase=look.phase, angle=look.angle)
    texture = fabric(
        product.attribute("pattern", "solid"), product.rgb, size, look, product.attribute("material") == "denim"
    )
    return Rendered(canvas.render(texture, line_colour(product.rgb)), canvas.probes, canvas.mask)
