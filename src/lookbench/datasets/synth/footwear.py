"""Shoes in side view: sneakers, boots, sandals and heels."""

from __future__ import annotations

import numpy as np

from lookbench.datasets.synth.canvas import Canvas
from lookbench.datasets.synth.palette import METAL, RGB, contrast, line_colour, luminance, shade
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.shape import Pose, Shape

SOLES: tuple[RGB, ...] = ((246, 246, 242), (60, 56, 52), (200, 160, 110))


def _sole_colour(product: Product, s: Shape) -> RGB:
    if s.sole == 0:
        return (246, 246, 242) if luminance(product.rgb) < 200 else (120, 120, 118)
    colour = SOLES[s.sole]
    return colour if abs(luminance(colour) - luminance(product.rgb)) > 40 else (246, 246, 242)


def _dark(product: Product) -> RGB:
    return (34, 32, 30) if luminance(product.rgb) > 60 else (96, 90, 86)


def draw_sneakers(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A sneaker: sole (flat or platform), low or high upper, laces, straps or an elastic panel, style marks."""
    top = 0.42 if product.attribute("shaft height", "low top") == "low top" else 0.22
    platform = product.attribute("heel") == "platform"
    base = 0.64 if platform else 0.7
    c.fabric(
        [
            (0.12, base + 0.02),
            (0.14, top),
            (0.3, top - 0.02),
            (0.36, 0.48),
            (0.62, 0.5),
            (0.82, 0.56),
            (0.9, base + 0.02),
        ]
    )
    sole = _sole_colour(product, s)
    c.polygon([(0.1, base), (0.92, base), (0.92, 0.8), (0.1, 0.8)], fill=sole, outline=line_colour(product.rgb))
    if platform:
        c.line([(0.1, 0.72), (0.92, 0.72)], fill=shade(sole, 0.8), width=2)
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
                [(x, 0.47), (x + 0.045, 0.49), (x + 0.045, base - 0.02), (x, base - 0.02)],
                fill=mark,
                outline=line_colour(product.rgb),
            )
    else:
        c.polygon([(0.34, 0.5), (0.42, 0.5), (0.38, 0.62)], fill=shade(product.rgb, 0.6))
    if product.attribute("style") == "sporty":
        c.line([(0.3, base - 0.04), (0.5, base - 0.12), (0.72, base - 0.17)], fill=product.second, width=6)
        c.line([(0.32, base - 0.015), (0.6, base - 0.06)], fill=product.second, width=3)
    elif s.logo:
        c.ellipse((0.3, 0.58), (0.025, 0.025), fill=product.second)
    c.probe("high_top", (0.2, 0.33))
    c.probe("instep", (0.5, 0.54))
    c.probe("platform", (0.5, 0.67))


def draw_boots(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A boot: shaft by height, heel by type, round or pointed toe, and its zip, laces or elastic panel."""
    top = {"ankle boot": 0.45, "mid-calf": 0.28, "knee high": 0.08}[product.attribute("shaft height", "ankle boot")]
    heel = product.attribute("heel", "flat")
    sole_y = 0.78 if heel == "flat" else 0.7
    toe_x = 0.92 if product.attribute("toe", "round toe") == "pointed toe" else 0.86
    c.fabric([(0.16, top), (0.38, top), (0.4, 0.6), (0.7, 0.66), (toe_x, sole_y + 0.04), (0.16, sole_y + 0.04)])
    if product.attribute("toe", "round toe") == "round toe":
        c.fabric_ellipse((0.8, sole_y), (0.08, 0.07))
    dark = _dark(product)
    if heel == "flat":
        c.polygon([(0.15, 0.81), (toe_x, 0.81), (toe_x, 0.86), (0.15, 0.86)], fill=dark)
    else:
        c.polygon([(0.4, 0.74), (toe_x, sole_y + 0.04), (toe_x, sole_y + 0.08), (0.42, 0.79)], fill=dark)
        if heel == "block heel":
            c.polygon([(0.16, 0.74), (0.28, 0.74), (0.27, 0.9), (0.17, 0.9)], fill=dark)
        else:
            c.polygon([(0.16, 0.74), (0.26, 0.74), (0.2, 0.93), (0.185, 0.93)], fill=dark)
    closure = product.attribute("closure", "zip")
    if closure == "zip":
        c.line(
            [(0.36, top + 0.02), (0.37, 0.58)], fill=METAL if luminance(product.rgb) < 150 else (60, 60, 64), width=3
        )
    elif closure == "lace-up":
        for y in np.arange(top + 0.04, 0.6, 0.05):
            c.line([(0.33, float(y)), (0.41, float(y) + 0.03)], fill=contrast(product.rgb), width=3)
            c.ellipse((0.33, float(y)), (0.008, 0.008), fill=METAL)
    else:
        panel_top = max(top + 0.04, 0.44)
        c.polygon([(0.2, panel_top), (0.3, panel_top), (0.29, 0.62), (0.21, 0.62)], fill=shade(product.rgb, 0.55))
    c.probe("shaft_mid", (0.26, 0.36))
    c.probe("shaft_high", (0.26, 0.18))
    c.probe("heel_block", (0.22, 0.86))


INSOLE_TOE = 0.74
GROUND = 0.82


def _insole(heel: str) -> float:
    """The height of the insole at the back of the shoe (the ground is at 0.82)."""
    return {"flat": 0.74, "platform": 0.5, "wedge": 0.5, "block heel": 0.46, "stiletto": 0.42}[heel]


def _sole(c: Canvas, heel: str, colour: RGB) -> None:
    """Sole and heel under an insole running from the back (x 0.12) to the toe (x 0.92)."""
    back = _insole(heel)
    if heel == "flat":
        c.polygon([(0.1, 0.74), (0.93, 0.74), (0.93, 0.8), (0.1, 0.8)], fill=colour)
    elif heel == "platform":
        c.polygon([(0.1, back), (0.5, 0.64), (0.93, 0.64), (0.93, GROUND), (0.1, GROUND)], fill=colour)
    elif heel == "wedge":
        c.polygon(
            [(0.1, back), (0.6, INSOLE_TOE - 0.02), (0.93, INSOLE_TOE), (0.93, 0.79), (0.6, GROUND), (0.1, GROUND)],
            fill=colour,
        )
    else:
        c.polygon(
            [(0.1, back), (0.6, INSOLE_TOE), (0.93, INSOLE_TOE), (0.93, 0.79), (0.6, 0.79), (0.1, back + 0.04)],
            fill=colour,
        )
        if heel == "block heel":
            c.polygon([(0.1, back), (0.24, back + 0.02), (0.22, GROUND), (0.12, GROUND)], fill=colour)
        else:
            c.polygon([(0.1, back), (0.22, back + 0.03), (0.15, GROUND), (0.135, GROUND)], fill=colour)


def _insole_y(heel: str, x: float) -> float:
    """The insole height at `x` (linear from the back to the ball of the foot at x 0.6)."""
    if heel == "flat":
        return INSOLE_TOE
    if heel == "platform":
        return 0.64 if x >= 0.5 else _insole(heel) + (0.64 - _insole(heel)) * (x - 0.1) / 0.4
    if x >= 0.6:
        return INSOLE_TOE
    return _insole(heel) + (INSOLE_TOE - _insole(heel)) * (x - 0.1) / 0.5


def draw_sandals(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A sandal: footbed on a flat, block, wedge or platform sole, open toe, straps with buckle, band or tabs."""
    heel = product.attribute("heel", "flat")
    sole = shade(product.rgb, 0.6) if s.sole == 0 else _sole_colour(product, s)
    _sole(c, heel, sole)
    closure = product.attribute("closure", "slip-on")
    y = _insole_y
    if closure == "slip-on":
        c.fabric([(0.5, y(heel, 0.5)), (0.56, y(heel, 0.56) - 0.12), (0.76, y(heel, 0.76) - 0.1), (0.8, y(heel, 0.8))])
    else:
        c.fabric(
            [(0.62, y(heel, 0.62)), (0.66, y(heel, 0.66) - 0.09), (0.72, y(heel, 0.72) - 0.09), (0.74, y(heel, 0.74))]
        )
        c.fabric([(0.12, y(heel, 0.12)), (0.13, y(heel, 0.13) - 0.2), (0.2, y(heel, 0.2) - 0.2), (0.21, y(heel, 0.21))])
        c.fabric(
            [
                (0.14, y(heel, 0.14) - 0.2),
                (0.5, y(heel, 0.5) - 0.1),
                (0.5, y(heel, 0.5) - 0.06),
                (0.14, y(heel, 0.14) - 0.15),
            ]
        )
        mid_x = 0.3
        mid_y = y(heel, mid_x) - 0.14
        if closure == "buckle":
            c.polygon(
                [
                    (mid_x - 0.03, mid_y - 0.035),
                    (mid_x + 0.03, mid_y - 0.02),
                    (mid_x + 0.03, mid_y + 0.03),
                    (mid_x - 0.03, mid_y + 0.015),
                ],
                fill=None,
                outline=METAL,
                width=3,
            )
        else:
            c.polygon(
                [
                    (mid_x - 0.06, mid_y - 0.04),
                    (mid_x + 0.06, mid_y - 0.01),
                    (mid_x + 0.06, mid_y + 0.04),
                    (mid_x - 0.06, mid_y + 0.01),
                ],
                fill=contrast(product.rgb),
            )
    c.probe("toe", (0.88, INSOLE_TOE - 0.05))
    c.probe("wedge", (0.45, 0.74))


def draw_heels(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A pump: block, stiletto or platform heel; pointed, round, square or open toe; slip-on or buckled strap."""
    heel = product.attribute("heel", "stiletto")
    toe = product.attribute("toe", "round toe")
    _sole(c, heel, _dark(product) if s.sole != 2 else shade(product.rgb, 0.7))
    y = _insole_y
    tip = {"pointed toe": 0.99, "round toe": 0.92, "square toe": 0.93, "open toe": 0.8}[toe]
    base = INSOLE_TOE if heel != "platform" else 0.64
    upper = [
        (0.12, y(heel, 0.12) - 0.14),
        (0.2, y(heel, 0.2) - 0.13),
        (0.4, y(heel, 0.4) - 0.06),
        (0.56, y(heel, 0.56) - 0.1),
    ]
    if toe == "pointed toe":
        upper += [(0.78, base - 0.08), (tip, base - 0.005)]
    elif toe == "square toe":
        upper += [(0.8, base - 0.1), (tip, base - 0.09), (tip, base)]
    elif toe == "round toe":
        upper += [(0.8, base - 0.1), (0.89, base - 0.08), (tip, base - 0.04), (tip, base)]
    else:
        upper += [(0.7, base - 0.1), (tip, base - 0.06), (tip, base)]
    upper += [(x, y(heel, x)) for x in (0.6, 0.4, 0.2, 0.12)]
    c.fabric(upper)
    c.polygon(
        [
            (0.2, y(heel, 0.2) - 0.12),
            (0.4, y(heel, 0.4) - 0.05),
            (0.4, y(heel, 0.4) - 0.03),
            (0.2, y(heel, 0.2) - 0.09),
        ],
        fill=shade(product.rgb, 0.45),
    )
    if product.attribute("closure") == "buckle":
        top = y(heel, 0.16) - 0.14
        c.line([(0.13, top), (0.26, top - 0.07), (0.34, top - 0.02)], fill=shade(product.rgb, 0.8), width=5)
        c.polygon(
            [(0.24, top - 0.1), (0.29, top - 0.1), (0.29, top - 0.05), (0.24, top - 0.05)],
            fill=None,
            outline=METAL,
            width=3,
        )
    c.probe("toe_tip", (0.955, base - 0.01))
    c.probe("open_toe", (0.86, base - 0.03))
