"""Lower-body garments: skirts, pants, jeans and shorts."""

from __future__ import annotations

import numpy as np

from lookbench.synth.canvas import Canvas
from lookbench.synth.palette import line_colour, luminance, shade
from lookbench.synth.products import Product

CX = 0.5
SKIRT_HEM = {"mini": 0.42, "knee length": 0.6, "midi": 0.76, "maxi": 0.94}
PANTS_HEM = {"full length": 0.95, "ankle length": 0.86, "cropped": 0.72, "thigh length": 0.42, "knee length": 0.55}
KNEE_WIDTH = {"skinny": 0.05, "straight leg": 0.065, "wide leg": 0.095, "flared": 0.052}
HEM_WIDTH = {"skinny": 0.042, "straight leg": 0.065, "wide leg": 0.105, "flared": 0.115}
CROTCH = 0.32


def draw_skirt(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """A skirt: waistband and an a-line or pencil body, optionally pleated."""
    hem = SKIRT_HEM[product.attribute("length", "knee length")]
    flare = 0.32 if product.attribute("fit", "a-line") == "a-line" else 0.19
    c.fabric(
        [
            (CX - 0.17, 0.12),
            (CX + 0.17, 0.12),
            (CX + 0.17, 0.16),
            (CX + flare, hem),
            (CX - flare, hem),
            (CX - 0.17, 0.16),
        ]
    )
    c.line([(CX - 0.17, 0.16), (CX + 0.17, 0.16)], fill=line_colour(product.rgb), width=2)
    if product.has("pleats"):
        for k in np.linspace(-0.8, 0.8, 7):
            c.line(
                [(CX + 0.15 * k, 0.17), (CX + flare * 0.95 * k, hem - 0.005)], fill=line_colour(product.rgb), width=2
            )
    c.probe("below_mini", (CX - 0.05, 0.5))
    c.probe("below_knee", (CX - 0.05, 0.68))
    c.probe("below_midi", (CX - 0.05, 0.86))


def _leg(c: Canvas, sign: int, hem: float, fit: str) -> tuple[float, float]:
    lx = CX + sign * 0.1
    knee = CROTCH + (hem - CROTCH) * 0.5 if hem > 0.6 else hem
    kw, hw = KNEE_WIDTH[fit], HEM_WIDTH[fit]
    if hem < 0.6:
        kw = hw = 0.085
    c.fabric(
        [
            (CX + sign * 0.18, 0.1),
            (CX + sign * 0.005, 0.1),
            (CX + sign * 0.005, CROTCH),
            (lx - sign * kw, knee),
            (lx - sign * hw, hem),
            (lx + sign * hw, hem),
            (lx + sign * kw, knee),
        ]
    )
    return lx, knee


def draw_pants(c: Canvas, product: Product, rng: np.random.Generator) -> None:
    """Pants, jeans or shorts: waistband, two legs, optional cargo pockets and rips."""
    hem = PANTS_HEM[product.attribute("length", "full length")]
    fit = product.attribute("fit", "straight leg")
    edge = line_colour(product.rgb)
    c.fabric([(CX - 0.18, 0.06), (CX + 0.18, 0.06), (CX + 0.18, CROTCH - 0.08), (CX - 0.18, CROTCH - 0.08)])
    c.line([(CX - 0.18, 0.1), (CX + 0.18, 0.1)], fill=edge, width=2)
    c.line([(CX + 0.005, 0.1), (CX + 0.005, CROTCH - 0.04)], fill=edge, width=2)
    stitch = (214, 150, 60) if product.attribute("material") == "denim" else edge
    for sign, side in ((-1, "left"), (1, "right")):
        lx, knee = _leg(c, sign, hem, fit)
        c.line([(CX + sign * 0.17, 0.12), (CX + sign * 0.11, 0.17)], fill=stitch, width=2)
        px = CX + sign * 0.17
        py = CROTCH + 0.02 if hem > 0.6 else 0.2
        c.probe(f"cargo_pocket_{side}", (px - sign * 0.04, py))
        if product.has("cargo pockets"):
            face = shade(product.rgb, 0.88) if luminance(product.rgb) > 50 else (52, 52, 56)
            c.polygon(
                [(px - sign * 0.08, py), (px, py), (px, py + 0.1), (px - sign * 0.08, py + 0.1)],
                fill=face,
                outline=edge,
                width=3,
            )
        c.probe(f"rip_{side}", (lx, knee - 0.01))
        if product.has("ripped"):
            for dy in (-0.02, 0.0, 0.02):
                c.ellipse((lx, knee + dy - 0.01), (0.035, 0.006), fill=(236, 232, 222))
    c.probe("below_shorts", (CX - 0.1, 0.62))
    c.probe("below_cropped", (CX - 0.1, 0.8))
    c.probe("below_ankle", (CX - 0.1, 0.91))
