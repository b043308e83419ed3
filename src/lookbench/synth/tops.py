"""Upper-body garments and dresses: torso, sleeves, neckline, collar, closure, hood, pockets, belt."""

from __future__ import annotations

import numpy as np

from lookbench.synth.canvas import Canvas
from lookbench.synth.palette import METAL, contrast, line_colour, luminance, shade
from lookbench.synth.products import Product

CX = 0.5
SHOULDER = 0.2
DIRECTION = (0.5, 0.866)
"""Sleeves run 30 degrees out from vertical."""

WIDTH = {"slim fit": 0.17, "regular fit": 0.2, "oversized": 0.24}
HEM = {"cropped": 0.52, "hip length": 0.72, "thigh length": 0.83, "knee length": 0.95}
SLEEVE = {"sleeveless": 0.0, "short sleeve": 0.13, "three-quarter sleeve": 0.26, "long sleeve": 0.38}
DRESS_HEM = {"mini": 0.6, "knee length": 0.72, "midi": 0.84, "maxi": 0.96}


def inner_colour(product: Product) -> tuple[int, int, int]:
    """The colour seen through a neckline: a deep shade of the fabric (grey on black)."""
    return (82, 82, 86) if luminance(product.rgb) < 50 else shade(product.rgb, 0.4)


def default_sleeve(product: Product) -> str:
    """Sleeve length drawn when the category does not vary it."""
    return "sleeveless" if product.category == "vest" else "long sleeve"


def sleeves(c: Canvas, half_width: float, length: float) -> None:
    """Two sleeves from the shoulders, with probes for short and long sleeve positions."""
    dx, dy = DIRECTION
    for sign, side in ((1, "right"), (-1, "left")):
        outer = (CX + sign * (half_width - 0.02), SHOULDER)
        pit = (CX + sign * half_width, SHOULDER + 0.13)
        if length > 0:
            c.fabric(
                [
                    outer,
                    (outer[0] + sign * dx * length, outer[1] + dy * length),
                    (pit[0] + sign * dx * length * 0.8, pit[1] + dy * length * 0.8),
                    pit,
                ]
            )
        inward = (-0.866 * sign, 0.5)
        for name, along, depth in (("short", 0.11, 0.02), ("long", 0.33, 0.03)):
            c.probe(
                f"sleeve_{name}_{side}",
                (outer[0] + sign * dx * along + inward[0] * depth, outer[1] + dy * along + inward[1] * depth),
            )


def neckline(c: Canvas, product: Product, kind: str) -> float:
    """Draw the neckline; return the y where a front closure starts."""
    inner = inner_colour(product)
    if kind == "v-neck":
        c.polygon([(CX - 0.06, 0.17), (CX + 0.06, 0.17), (CX, 0.3)], fill=inner)
        return 0.3
    if kind == "scoop neck":
        c.lower_half_ellipse((CX, 0.17), (0.09, 0.09), fill=inner)
        return 0.26
    if kind == "square neck":
        c.polygon([(CX - 0.08, 0.17), (CX + 0.08, 0.17), (CX + 0.08, 0.25), (CX - 0.08, 0.25)], fill=inner)
        return 0.25
    if kind == "turtleneck":
        c.fabric([(CX - 0.065, 0.08), (CX + 0.065, 0.08), (CX + 0.065, 0.19), (CX - 0.065, 0.19)])
        for y in (0.1, 0.125, 0.15, 0.175):
            c.line([(CX - 0.06, y), (CX + 0.06, y)], fill=shade(product.rgb, 0.7), width=2)
        return 0.19
    c.lower_half_ellipse((CX, 0.17), (0.06, 0.04), fill=inner)
    return 0.21


def collar(c: Canvas, product: Product, kind: str) -> float:
    """Draw a collar or lapels; return the y where a front closure starts."""
    edge = line_colour(product.rgb)
    if kind == "shirt collar":
        face = shade(product.rgb, 1.15) if luminance(product.rgb) < 200 else shade(product.rgb, 0.9)
        c.lower_half_ellipse((CX, 0.17), (0.05, 0.035), fill=inner_colour(product))
        for s in (-1, 1):
            c.polygon([(CX + s * 0.09, 0.15), (CX + s * 0.005, 0.19), (CX + s * 0.05, 0.26)], fill=face, outline=edge)
        return 0.2
    if kind == "notched lapel":
        face = shade(product.rgb, 0.82) if luminance(product.rgb) > 50 else (60, 60, 64)
        c.polygon([(CX - 0.05, 0.17), (CX + 0.05, 0.17), (CX, 0.4)], fill=inner_colour(product))
        for s in (-1, 1):
            c.polygon(
                [
                    (CX + s * 0.06, 0.16),
                    (CX + s * 0.11, 0.22),
                    (CX + s * 0.085, 0.25),
                    (CX + s * 0.11, 0.28),
                    (CX, 0.42),
                ],
                fill=face,
                outline=edge,
            )
        return 0.42
    return -1.0


def closure(c: Canvas, product: Product, kind: str, top: float, hem: float, rng: np.random.Generator) -> None:
    """Draw a zip or a button placket down the centre front."""
    if kind == "zip":
        colour = METAL if luminance(product.rgb) < 150 else (60, 60, 64)
        c.line([(CX, top), (CX, hem - 0.005)], fill=colour, width=4)
        c.polygon(
            [(CX - 0.012, top), (CX + 0.012, top), (CX + 0.012, top + 0.04), (CX - 0.012, top + 0.04)], fill=colour
        )
    elif kind == "buttons":
        c.line([(CX, top), (CX, hem - 0.005)], fill=line_colour(product.rgb), width=2)
        n = int(rng.integers(4, 7))
        for y in np.linspace(top + 0.03, hem - 0.05, n):
            c.ellipse(
                (CX + 0.02, float(y)), (0.016, 0.016), fill=contrast(product.rgb), outline=line_colour(product.rgb)
            )


def pockets(c: Canvas, product: Product, half_width: float, hem: float) -> None:
    """Patch, chest and kangaroo pockets, with probes on their top edges."""
    face = shade(product.rgb, 0.9) if luminance(product.rgb) > 50 else (52, 52, 56)
    edge = line_colour(product.rgb)
    for s, side in ((-1, "left"), (1, "right")):
        x = CX + s * half_width * 0.6
        c.probe(f"patch_pocket_{side}", (x, hem - 0.16))
        if product.has("patch pockets"):
            c.polygon(
                [(x - 0.05, hem - 0.16), (x + 0.05, hem - 0.16), (x + 0.05, hem - 0.05), (x - 0.05, hem - 0.05)],
                fill=face,
                outline=edge,
                width=3,
            )
    x = CX + half_width * 0.5
    c.probe("chest_pocket", (x, 0.3))
    if product.has("chest pocket"):
        c.polygon(
            [(x - 0.035, 0.3), (x + 0.035, 0.3), (x + 0.035, 0.37), (x - 0.035, 0.37)], fill=face, outline=edge, width=3
        )
    c.probe("kangaroo_pocket", (CX - 0.04, hem - 0.16))
    if product.has("kangaroo pocket"):
        c.polygon(
            [(CX - 0.13, hem - 0.04), (CX - 0.09, hem - 0.16), (CX + 0.09, hem - 0.16), (CX + 0.13, hem - 0.04)],
            fill=face,
            outline=edge,
            width=3,
        )


def hood(c: Canvas, product: Product) -> None:
    """A hood lying behind the neckline; the probe above the collar is fabric only with a hood."""
    c.probe("hood", (CX, 0.035))
    if product.has("hood"):
        c.fabric_ellipse((CX, 0.12), (0.12, 0.105))
        c.ellipse((CX, 0.14), (0.07, 0.065), fill=inner_colour(product))


def belt(c: Canvas, product: Product, y: float, half_width: float) -> None:
    """A dark belt with a metal buckle across the waist."""
    strap = (34, 30, 28) if luminance(product.rgb) > 70 else (150, 110, 70)
    c.polygon(
        [(CX - half_width, y), (CX + half_width, y), (CX + half_width, y + 0.035), (CX - half_width, y + 0.035)],
        fill=strap,
    )
    c.polygon(
        [(CX - 0.025, y - 0.005), (CX + 0.025, y - 0.005), (CX + 0.025, y + 0.04), (CX - 0.025, y + 0.04)],
        fill=None,
        outline=METAL,
        width=3,
    )


def torso(c: Canvas, half_width: float, bottom: float, bottom_half_width: float) -> None:
    """The body panel from the shoulders down to `bottom`."""
    c.fabric(
        [
            (CX - half_width, SHOULDER + 0.03),
            (CX - 0.07, SHOULDER - 0.03),
            (CX + 0.07, SHOULDER - 0.03),
            (CX + half_width, SHOULDER + 0.03),
            (CX + bottom_half_width, bottom),
            (CX - bottom_half_width, bottom),
        ]
    )


def draw_top(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """Any upper-body garment of the catalogue."""
    w = WIDTH[product.attribute("fit", "regular fit")] + (0.02 if product.category == "coat" else 0.0)
    hem = HEM[product.attribute("length", "hip length")]
    hood(c, product)
    torso(c, w, hem, w * 1.04)
    sleeves(c, w, SLEEVE[product.attribute("sleeve length", default_sleeve(product))])
    c.probe("hem", (CX - w * 0.5, hem - 0.02))
    c.probe("below_cropped", (CX - w * 0.5, 0.6))
    c.probe("below_hip", (CX - w * 0.5, 0.78))
    c.probe("below_thigh", (CX - w * 0.5, 0.9))
    top = collar(c, product, product.attribute("collar", "no collar"))
    if top < 0:
        top = neckline(c, product, product.attribute("neckline", "crew neck"))
    closure(c, product, product.attribute("closure", "pullover"), top, hem, rng)
    pockets(c, product, w, hem)
    if product.has("belt"):
        belt(c, product, SHOULDER + (hem - SHOULDER) * 0.45, w * 1.02)


def draw_dress(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """A dress: bodice with sleeves and neckline, then an a-line or bodycon skirt."""
    w = 0.15
    waist = 0.42
    hem = DRESS_HEM[product.attribute("length", "knee length")]
    flare = 0.3 if product.attribute("fit", "a-line") == "a-line" else 0.165
    torso(c, w, waist, w * 0.85)
    c.fabric([(CX - w * 0.85, waist), (CX + w * 0.85, waist), (CX + flare, hem), (CX - flare, hem)])
    sleeves(c, w, SLEEVE[product.attribute("sleeve length", "sleeveless")])
    neckline(c, product, product.attribute("neckline", "crew neck"))
    c.line([(CX - w * 0.85, waist), (CX + w * 0.85, waist)], fill=line_colour(product.rgb), width=2)
    c.probe("below_mini", (CX, 0.66))
    c.probe("below_knee", (CX, 0.78))
    c.probe("below_midi", (CX, 0.9))
    c.probe("flare", (CX + 0.22, min(hem, 0.6) - 0.02))
