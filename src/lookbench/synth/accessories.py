"""Bags and shoes: tote, shoulder bag, crossbody, clutch, bucket bag; sneakers and boots in side view."""

from __future__ import annotations

import numpy as np

from lookbench.synth.canvas import Canvas
from lookbench.synth.palette import METAL, contrast, line_colour, luminance, shade
from lookbench.synth.products import Product


def _strap(c: Canvas, product: Product, left: float, right: float, top: float) -> None:
    strap = product.attribute("strap", "no strap")
    colour = shade(product.rgb, 0.7) if luminance(product.rgb) > 50 else (70, 70, 74)
    if strap == "top handles":
        for x0, x1 in ((left + 0.06, left + 0.18), (right - 0.18, right - 0.06)):
            c.line([(x0, top), (x0 + 0.02, top - 0.14), (x1 - 0.02, top - 0.14), (x1, top)], fill=colour, width=6)
    elif strap == "chain strap":
        for t in np.linspace(0.0, 1.0, 15):
            x = left + 0.04 + (right - left - 0.08) * t
            y = top - 0.28 * np.sin(np.pi * t)
            c.ellipse((x, float(y)), (0.014, 0.01), fill=None, outline=METAL, width=3)
    elif strap == "long strap":
        c.line([(left + 0.03, top), (0.5, 0.03), (right - 0.03, top)], fill=colour, width=6)
    c.probe("strap", (0.5, top - 0.14))


def draw_bag(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """A bag body by style, its strap, and a flap or trim line."""
    style = product.attribute("bag style", "tote")
    edge = line_colour(product.rgb)
    if style == "tote":
        box = (0.22, 0.78, 0.4, 0.88)
        c.fabric([(0.22, 0.4), (0.78, 0.4), (0.72, 0.88), (0.28, 0.88)])
    elif style == "clutch":
        box = (0.16, 0.84, 0.48, 0.7)
        c.fabric([(0.16, 0.48), (0.84, 0.48), (0.84, 0.7), (0.16, 0.7)])
        c.polygon([(0.16, 0.48), (0.84, 0.48), (0.5, 0.62)], fill=shade(product.rgb, 0.85), outline=edge, width=2)
    elif style == "bucket bag":
        box = (0.28, 0.72, 0.4, 0.86)
        c.fabric([(0.28, 0.4), (0.72, 0.4), (0.72, 0.7), (0.28, 0.7)])
        c.fabric_ellipse((0.5, 0.7), (0.22, 0.16))
        c.line([(0.28, 0.44), (0.72, 0.44)], fill=contrast(product.rgb), width=3)
    elif style == "crossbody":
        box = (0.32, 0.68, 0.52, 0.78)
        c.fabric([(0.32, 0.52), (0.68, 0.52), (0.68, 0.78), (0.32, 0.78)])
        c.polygon(
            [(0.32, 0.52), (0.68, 0.52), (0.68, 0.62), (0.32, 0.62)],
            fill=shade(product.rgb, 0.85),
            outline=edge,
            width=2,
        )
    else:
        box = (0.24, 0.76, 0.45, 0.82)
        c.fabric([(0.24, 0.45), (0.76, 0.45), (0.76, 0.82), (0.24, 0.82)])
        c.polygon(
            [(0.24, 0.45), (0.76, 0.45), (0.76, 0.6), (0.5, 0.64), (0.24, 0.6)],
            fill=shade(product.rgb, 0.85),
            outline=edge,
            width=2,
        )
        c.ellipse((0.5, 0.62), (0.02, 0.02), fill=METAL)
    _strap(c, product, box[0], box[1], box[2])
    c.probe("body", (0.5 - 0.08, (box[2] + box[3]) / 2 + 0.05))


def _sole_colour(product: Product) -> tuple[int, int, int]:
    return (246, 246, 242) if luminance(product.rgb) < 200 else (120, 120, 118)


def draw_sneakers(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """A sneaker in side view: sole, low or high upper, laces, straps or an elastic panel."""
    top = 0.42 if product.attribute("shaft height", "low top") == "low top" else 0.22
    c.fabric([(0.12, 0.72), (0.14, top), (0.3, top - 0.02), (0.36, 0.48), (0.62, 0.5), (0.82, 0.58), (0.9, 0.72)])
    c.polygon(
        [(0.1, 0.7), (0.92, 0.7), (0.92, 0.8), (0.1, 0.8)], fill=_sole_colour(product), outline=line_colour(product.rgb)
    )
    c.ellipse((0.22, top + 0.02), (0.07, 0.02), fill=(40, 40, 44))
    closure = product.attribute("closure", "lace-up")
    mark = contrast(product.rgb)
    if closure == "lace-up":
        xs = np.linspace(0.38, 0.6, 5)
        for a, b in zip(xs[:-1], xs[1:], strict=True):
            c.line(
                [(float(a), 0.47 + (a - 0.38) * 0.2), (float(b) + 0.02, 0.57 + (b - 0.38) * 0.2)], fill=mark, width=4
            )
            c.line(
                [(float(a), 0.57 + (a - 0.38) * 0.2), (float(b) + 0.02, 0.47 + (b - 0.38) * 0.2)], fill=mark, width=4
            )
    elif closure == "hook and loop":
        for x in (0.4, 0.5, 0.6):
            c.polygon(
                [(x, 0.47), (x + 0.045, 0.49), (x + 0.045, 0.68), (x, 0.68)],
                fill=mark,
                outline=line_colour(product.rgb),
            )
    else:
        c.polygon([(0.34, 0.5), (0.42, 0.5), (0.38, 0.62)], fill=shade(product.rgb, 0.6))
    c.probe("high_top", (0.2, 0.33))
    c.probe("instep", (0.5, 0.54))


def draw_boots(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """A boot in side view: shaft by height, heel by type, round or pointed toe, and a zip."""
    top = {"ankle boot": 0.45, "mid-calf": 0.28, "knee high": 0.08}[product.attribute("shaft height", "ankle boot")]
    heel = product.attribute("heel", "flat")
    sole_y = 0.78 if heel == "flat" else 0.7
    toe_x = 0.92 if product.attribute("toe", "round toe") == "pointed toe" else 0.86
    c.fabric([(0.16, top), (0.38, top), (0.4, 0.6), (0.7, 0.66), (toe_x, sole_y + 0.04), (0.16, sole_y + 0.04)])
    if product.attribute("toe", "round toe") == "round toe":
        c.fabric_ellipse((0.8, sole_y), (0.08, 0.07))
    dark = (34, 32, 30) if luminance(product.rgb) > 60 else (96, 90, 86)
    if heel == "flat":
        c.polygon([(0.15, 0.81), (toe_x, 0.81), (toe_x, 0.86), (0.15, 0.86)], fill=dark)
    else:
        c.polygon([(0.4, 0.74), (toe_x, sole_y + 0.04), (toe_x, sole_y + 0.08), (0.42, 0.79)], fill=dark)
        if heel == "block heel":
            c.polygon([(0.16, 0.74), (0.28, 0.74), (0.27, 0.9), (0.17, 0.9)], fill=dark)
        else:
            c.polygon([(0.16, 0.74), (0.26, 0.74), (0.2, 0.93), (0.185, 0.93)], fill=dark)
    c.line([(0.36, top + 0.02), (0.37, 0.58)], fill=METAL if luminance(product.rgb) < 150 else (60, 60, 64), width=3)
    c.probe("shaft_mid", (0.26, 0.36))
    c.probe("shaft_high", (0.26, 0.18))
    c.probe("heel_block", (0.22, 0.86))
