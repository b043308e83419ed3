"""Render a product's flat image (RGBA on transparent) from its exact labels, in a pose."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image

from lookbench.datasets.synth.accessories import draw_backpack, draw_bag, draw_hat
from lookbench.datasets.synth.bottoms import draw_pants, draw_skirt
from lookbench.datasets.synth.canvas import Canvas
from lookbench.datasets.synth.catalogue import SPECS
from lookbench.datasets.synth.footwear import draw_boots, draw_heels, draw_sandals, draw_sneakers
from lookbench.datasets.synth.materials import PLAIN, apply_surface, gloss
from lookbench.datasets.synth.palette import line_colour
from lookbench.datasets.synth.patterns import fabric, scaled
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.shape import CATALOGUE_POSE, Pose, Shape, sample_shape
from lookbench.datasets.synth.tops import draw_dress, draw_jumpsuit, draw_top

CANONICAL_SIZE = 256

Drawer = Callable[[Canvas, Product, Shape, Pose], None]
DRAWERS: dict[str, Drawer] = {
    "top": draw_top,
    "dress": draw_dress,
    "jumpsuit": draw_jumpsuit,
    "skirt": draw_skirt,
    "pants": draw_pants,
    "bag": draw_bag,
    "backpack": draw_backpack,
    "sneakers": draw_sneakers,
    "boots": draw_boots,
    "sandals": draw_sandals,
    "heels": draw_heels,
    "hat": draw_hat,
}

UNRECORDED_SURFACE = {"sweater": "knit", "cardigan": "knit", "coat": "wool", "jeans": "denim"}
"""The surface drawn where a category records no material (a sweater is knitted whether or not a label says so)."""


@dataclass(frozen=True)
class Rendered:
    """A rendered product: the RGBA image and named probe pixels whose content the labels fix."""

    image: Image.Image
    probes: dict[str, tuple[int, int]]
    fabric_mask: Image.Image
    """Where the main fabric is (before parts such as pockets, straps and soles are drawn over it)."""
    gloss: float
    """Specular strength of the product's material (leather and satin shine)."""


def surface_of(product: Product) -> str:
    """The material surface drawn on the product's fabric."""
    return product.attribute("material") or UNRECORDED_SURFACE.get(product.category, PLAIN)


def render_product(
    product: Product, size: int = CANONICAL_SIZE, pose: Pose = CATALOGUE_POSE, plain: bool = False
) -> Rendered:
    """Draw the product's silhouette, print, material surface and parts; deterministic in the product and pose.
    `plain` skips the print and surface (for silhouettes only)."""
    canvas = Canvas(size)
    shape = sample_shape(product.variation)
    DRAWERS[SPECS[product.category].kind](canvas, product, shape, pose)
    material = surface_of(product)
    pattern = "solid" if plain else product.attribute("pattern", "solid")
    texture = fabric(pattern, product.rgb, product.second, size, scaled(product.pattern_look, size / CANONICAL_SIZE))
    if not plain:
        texture = apply_surface(texture, material, product.variation % 997)
    image = canvas.render(texture, line_colour(product.rgb))
    return Rendered(image, canvas.probes, canvas.mask, gloss(material))
