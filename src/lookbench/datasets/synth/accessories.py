"""Bags, backpacks and hats."""

from __future__ import annotations

import numpy as np

from lookbench.datasets.synth.canvas import Canvas
from lookbench.datasets.synth.palette import GOLD, METAL, contrast, line_colour, luminance, shade
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.shape import Pose, Shape


def _strap_colour(product: Product) -> tuple[int, int, int]:
    return shade(product.rgb, 0.7) if luminance(product.rgb) > 50 else (70, 70, 74)


def _strap(c: Canvas, product: Product, s: Shape, left: float, right: float, top: float) -> None:
    strap = product.attribute("strap", "no strap")
    colour = _strap_colour(product)
    width = int(4 + 3 * s.detail)
    if strap == "top handles":
        for x0, x1 in ((left + 0.06, left + 0.18), (right - 0.18, right - 0.06)):
            c.line([(x0, top), (x0 + 0.02, top - 0.14), (x1 - 0.02, top - 0.14), (x1, top)], fill=colour, width=width)
    elif strap == "chain strap":
        metal = GOLD if s.sole == 1 else METAL
        for t in np.linspace(0.0, 1.0, 15):
            x = left + 0.04 + (right - left - 0.08) * t
            y = top - 0.28 * np.sin(np.pi * t)
            c.ellipse((x, float(y)), (0.014, 0.01), fill=None, outline=metal, width=3)
    elif strap == "long strap":
        c.line([(left + 0.03, top), (0.5, 0.03), (right - 0.03, top)], fill=colour, width=width)
    c.probe("strap", (0.5, top - 0.14))


def draw_bag(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A bag body by style, its strap, a flap or trim line and a hardware plate."""
    style = product.attribute("bag style", "tote")
    edge = line_colour(product.rgb)
    k = 0.94 + 0.06 * s.width
    if style == "tote":
        box = (0.22, 0.78, 0.4, 0.88)
        c.fabric([(0.5 - 0.28 * k, 0.4), (0.5 + 0.28 * k, 0.4), (0.5 + 0.22 * k, 0.88), (0.5 - 0.22 * k, 0.88)])
    elif style == "clutch":
        box = (0.16, 0.84, 0.48, 0.7)
        c.fabric([(0.16, 0.48), (0.84, 0.48), (0.84, 0.7), (0.16, 0.7)])
        c.polygon([(0.16, 0.48), (0.84, 0.48), (0.5, 0.62)], fill=shade(product.rgb, 0.85), outline=edge, width=2)
    elif style == "bucket bag":
        box = (0.28, 0.72, 0.4, 0.86)
        c.fabric([(0.28, 0.4), (0.72, 0.4), (0.72, 0.7), (0.28, 0.7)])
        c.fabric_ellipse((0.5, 0.7), (0.22, 0.16))
        c.line([(0.28, 0.44), (0.72, 0.44)], fill=contrast(product.rgb), width=3)
        c.line([(0.4, 0.44), (0.37, 0.55)], fill=contrast(product.rgb), width=2)
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
    if s.logo and style != "shoulder bag":
        y = (box[2] + box[3]) / 2 + 0.1
        c.polygon([(0.46, y), (0.54, y), (0.54, y + 0.025), (0.46, y + 0.025)], fill=GOLD if s.sole else METAL)
    _strap(c, product, s, box[0], box[1], box[2])
    c.probe("body", (0.5 - 0.08, (box[2] + box[3]) / 2 + 0.05))


def draw_backpack(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A backpack from the front: rounded body, shoulder straps, zip, drawstring or buckled flap, pocket."""
    edge = line_colour(product.rgb)
    w = 0.22 * (0.94 + 0.08 * s.width)
    strap = _strap_colour(product)
    for sgn in (-1, 1):
        c.line(
            [(0.5 + sgn * w * 0.7, 0.24), (0.5 + sgn * (w + 0.06), 0.5), (0.5 + sgn * (w + 0.02), 0.84)],
            fill=strap,
            width=6,
        )
    c.fabric([(0.5 - w, 0.3), (0.5 + w, 0.3), (0.5 + w, 0.86), (0.5 - w, 0.86)])
    c.fabric_ellipse((0.5, 0.3), (w, 0.12))
    c.line([(0.45, 0.2), (0.5, 0.16), (0.55, 0.2)], fill=strap, width=4)
    closure = product.attribute("closure", "zip")
    if closure == "zip":
        pts = [(0.5 + w * 0.95 * np.cos(t), 0.32 - 0.12 * np.sin(t)) for t in np.linspace(0.1, np.pi - 0.1, 12)]
        c.line([(float(x), float(y)) for x, y in pts], fill=METAL, width=3)
        c.ellipse((0.5 + w * 0.9, 0.34), (0.012, 0.02), fill=METAL)
    elif closure == "drawstring":
        c.line([(0.5 - w, 0.26), (0.5 + w, 0.26)], fill=shade(product.rgb, 0.7), width=4)
        c.line([(0.5, 0.26), (0.47, 0.36), (0.5, 0.34), (0.53, 0.38)], fill=contrast(product.rgb), width=2)
        c.polygon(
            [(0.5 - w, 0.26), (0.5 + w, 0.26), (0.5 + w, 0.46), (0.5, 0.5), (0.5 - w, 0.46)],
            fill=shade(product.rgb, 0.85),
            outline=edge,
            width=2,
        )
    else:
        c.polygon(
            [(0.5 - w, 0.26), (0.5 + w, 0.26), (0.5 + w, 0.52), (0.5 - w, 0.52)],
            fill=shade(product.rgb, 0.85),
            outline=edge,
            width=2,
        )
        for x in (0.5 - w * 0.5, 0.5 + w * 0.5):
            c.line([(x, 0.46), (x, 0.6)], fill=(40, 36, 32), width=5)
            c.polygon(
                [(x - 0.025, 0.5), (x + 0.025, 0.5), (x + 0.025, 0.545), (x - 0.025, 0.545)],
                fill=None,
                outline=METAL,
                width=3,
            )
    c.probe("pocket", (0.5, 0.7))
    if product.has("patch pockets"):
        c.polygon(
            [(0.5 - w * 0.7, 0.64), (0.5 + w * 0.7, 0.64), (0.5 + w * 0.7, 0.84), (0.5 - w * 0.7, 0.84)],
            fill=shade(product.rgb, 0.88),
            outline=edge,
            width=3,
        )


def draw_hat(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A hat from the front-side: baseball cap, bucket hat, beanie, fedora or sun hat."""
    style = product.attribute("hat style", "baseball cap")
    edge = line_colour(product.rgb)
    k = 0.94 + 0.08 * s.width
    if style == "baseball cap":
        c.fabric_ellipse((0.5, 0.56), (0.22 * k, 0.2))
        c.fabric([(0.28, 0.56), (0.72, 0.56), (0.72, 0.62), (0.28, 0.62)])
        c.polygon(
            [(0.45, 0.6), (0.9, 0.62), (0.86, 0.68), (0.45, 0.66)], fill=shade(product.rgb, 0.8), outline=edge, width=2
        )
        c.ellipse((0.5, 0.37), (0.02, 0.012), fill=shade(product.rgb, 0.7))
        for x in (0.42, 0.58):
            c.line([(0.5, 0.37), (x, 0.6)], fill=edge, width=1)
    elif style == "bucket hat":
        c.fabric([(0.34, 0.36), (0.66, 0.36), (0.7, 0.58), (0.3, 0.58)])
        c.fabric([(0.3, 0.56), (0.7, 0.56), (0.82, 0.7), (0.18, 0.7)])
        for y in (0.6, 0.64):
            c.line([(0.28, y), (0.72, y)], fill=edge, width=1)
    elif style == "beanie":
        c.fabric_ellipse((0.5, 0.52), (0.2 * k, 0.22))
        c.fabric([(0.29, 0.52), (0.71, 0.52), (0.71, 0.72), (0.29, 0.72)])
        c.polygon([(0.28, 0.62), (0.72, 0.62), (0.72, 0.74), (0.28, 0.74)], fill=shade(product.rgb, 0.86))
        for x in np.linspace(0.3, 0.7, 11):
            c.line([(float(x), 0.63), (float(x), 0.73)], fill=shade(product.rgb, 0.7), width=1)
    elif style == "fedora":
        c.fabric([(0.34, 0.58), (0.38, 0.36), (0.5, 0.4), (0.62, 0.36), (0.66, 0.58)])
        c.fabric_ellipse((0.5, 0.6), (0.3 * k, 0.06))
        c.polygon(
            [(0.34, 0.52), (0.66, 0.52), (0.66, 0.58), (0.34, 0.58)],
            fill=(40, 34, 30) if luminance(product.rgb) > 70 else (160, 130, 90),
        )
        c.line([(0.5, 0.4), (0.5, 0.46)], fill=edge, width=2)
    else:
        c.fabric_ellipse((0.5, 0.5), (0.15, 0.13))
        c.fabric_ellipse((0.5, 0.6), (0.42 * k, 0.09))
        c.polygon([(0.35, 0.54), (0.65, 0.54), (0.65, 0.58), (0.35, 0.58)], fill=product.second)
    c.probe("crown", (0.5, 0.5))
    c.probe("brim_wide", (0.14, 0.6))
