"""Lower-body garments: skirts, pants, jeans, shorts and leggings."""

from __future__ import annotations

import math

import numpy as np

from lookbench.datasets.synth.canvas import Canvas
from lookbench.datasets.synth.palette import METAL, contrast, line_colour, luminance, shade
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.shape import Pose, Shape

CX = 0.5
SKIRT_HEM = {"mini": 0.42, "knee length": 0.6, "midi": 0.76, "maxi": 0.94}
PANTS_HEM = {"full length": 0.95, "ankle length": 0.86, "cropped": 0.72, "thigh length": 0.42, "knee length": 0.55}
KNEE_WIDTH = {"skinny": 0.05, "straight leg": 0.065, "wide leg": 0.095, "flared": 0.052, "tight": 0.042}
HEM_WIDTH = {"skinny": 0.042, "straight leg": 0.065, "wide leg": 0.105, "flared": 0.115, "tight": 0.034}
SHORTS_WIDTH = {"slim fit": 0.07, "regular fit": 0.088}
CROTCH = 0.32
STITCH = (214, 150, 60)


def draw_skirt(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A skirt: waistband and an a-line or pencil body; pleats, a side slit, a zip or a wrap front."""
    hem = SKIRT_HEM[product.attribute("length", "knee length")] + s.hem
    flare = (0.32 if product.attribute("fit", "a-line") == "a-line" else 0.19) * (0.94 + 0.06 * s.width)
    waist = 0.17 * (0.96 + 0.04 * s.width)
    edge = line_colour(product.rgb)
    body = [(CX - waist, 0.12), (CX + waist, 0.12), (CX + waist, 0.16), (CX + flare, hem)]
    if product.has("side slit"):
        slit_x = CX + flare * 0.78
        body += [(slit_x + 0.012, hem), (slit_x, hem - 0.16), (slit_x - 0.012, hem)]
    body += [(CX - flare, hem), (CX - waist, 0.16)]
    c.fabric(body)
    c.line([(CX - waist, 0.16), (CX + waist, 0.16)], fill=edge, width=2)
    if product.has("pleats"):
        for k in np.linspace(-0.8, 0.8, 7):
            c.line([(CX + 0.15 * k, 0.17), (CX + flare * 0.95 * k, hem - 0.005)], fill=edge, width=2)
    closure = product.attribute("closure")
    if closure == "zip":
        colour = METAL if luminance(product.rgb) < 150 else (60, 60, 64)
        c.line([(CX, 0.16), (CX, 0.3)], fill=colour, width=3)
        c.ellipse((CX, 0.3), (0.008, 0.012), fill=colour)
    elif closure == "wrap":
        c.line([(CX - waist * 0.6, 0.16), (CX + flare * 0.55, hem - 0.005)], fill=edge, width=3)
        c.polygon(
            [
                (CX - waist * 0.6, 0.15),
                (CX - waist * 0.6 - 0.05, 0.26),
                (CX - waist * 0.6 - 0.02, 0.27),
                (CX - waist * 0.6 + 0.01, 0.17),
            ],
            fill=shade(product.rgb, 0.8),
        )
    if s.trim:
        c.line([(CX - flare, hem - 0.012), (CX + flare, hem - 0.012)], fill=product.second, width=2)
    c.probe("below_mini", (CX - 0.05, 0.5))
    c.probe("below_knee", (CX - 0.05, 0.68))
    c.probe("below_midi", (CX - 0.05, 0.86))
    c.probe("slit", (CX + flare * 0.78, hem - 0.03))


def _leg(c: Canvas, sign: int, hem: float, knee_w: float, hem_w: float, stride: float) -> tuple[float, float]:
    lx = CX + sign * 0.1
    knee = CROTCH + (hem - CROTCH) * 0.5 if hem > 0.6 else hem
    spread = math.tan(math.radians(stride))
    kx = lx + sign * spread * (knee - CROTCH)
    hx = lx + sign * spread * (hem - CROTCH)
    c.fabric(
        [
            (CX + sign * 0.18, 0.1),
            (CX + sign * 0.005, 0.1),
            (CX + sign * 0.005, CROTCH),
            (kx - sign * knee_w, knee),
            (hx - sign * hem_w, hem),
            (hx + sign * hem_w, hem),
            (kx + sign * knee_w, knee),
        ]
    )
    return kx, knee


def draw_pants(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """Pants, jeans, shorts or leggings: waistband, two legs, pockets, rips, pleats, drawstring, style marks."""
    hem = PANTS_HEM[product.attribute("length", "full length")] + s.hem
    leggings = product.category == "leggings"
    fit = "tight" if leggings else product.attribute("fit", "straight leg")
    if product.category == "shorts":
        knee_w = hem_w = SHORTS_WIDTH[product.attribute("fit", "regular fit")] * s.width
    else:
        knee_w, hem_w = KNEE_WIDTH[fit] * s.width, HEM_WIDTH[fit] * s.width
    edge = line_colour(product.rgb)
    vintage = product.attribute("style") == "vintage"
    top = 0.03 if vintage else 0.06
    c.fabric([(CX - 0.18, top), (CX + 0.18, top), (CX + 0.18, CROTCH - 0.08), (CX - 0.18, CROTCH - 0.08)])
    c.line([(CX - 0.18, top + 0.04), (CX + 0.18, top + 0.04)], fill=edge, width=2)
    if not leggings:
        c.line([(CX + 0.005, 0.1), (CX + 0.005, CROTCH - 0.04)], fill=edge, width=2)
    denim = product.attribute("material") == "denim"
    stitch = STITCH if denim else edge
    for sign, side in ((-1, "left"), (1, "right")):
        kx, knee = _leg(c, sign, hem, knee_w, hem_w, pose.stride)
        if not leggings:
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
            c.line([(px - sign * 0.08, py + 0.025), (px, py + 0.025)], fill=edge, width=2)
        c.probe(f"rip_{side}", (kx, knee - 0.01))
        if product.has("ripped"):
            for dy in (-0.02, 0.0, 0.02):
                c.ellipse((kx, knee + dy - 0.01), (0.035, 0.006), fill=(236, 232, 222))
        if product.has("pleats"):
            c.line([(CX + sign * 0.1, 0.11), (kx, hem - 0.01)], fill=shade(product.rgb, 0.75), width=2)
        if product.attribute("style") == "sporty":
            outer = CX + sign * 0.18
            c.line(
                [
                    (outer - sign * 0.012, top + 0.05),
                    (kx + sign * (knee_w - 0.01), knee),
                    (kx + sign * (hem_w - 0.006), hem - 0.01),
                ],
                fill=product.second,
                width=4,
            )
        if vintage:
            c.ellipse(
                (kx - sign * 0.01, CROTCH + 0.06), (0.035, 0.08), fill=None, outline=shade(product.rgb, 1.35), width=2
            )
            for dy in (0.0, 0.02, 0.04):
                c.line(
                    [(kx - 0.03, CROTCH + 0.02 + dy), (kx + 0.03, CROTCH + 0.035 + dy)],
                    fill=shade(product.rgb, 1.45),
                    width=2,
                )
    if product.attribute("closure") == "drawstring":
        cord = contrast(product.rgb)
        c.line([(CX - 0.02, top + 0.04), (CX - 0.035, top + 0.13)], fill=cord, width=2)
        c.line([(CX + 0.02, top + 0.04), (CX + 0.04, top + 0.13)], fill=cord, width=2)
    if leggings and product.attribute("style") == "casual":
        c.line([(CX - 0.18, top + 0.05), (CX + 0.18, top + 0.05)], fill=shade(product.rgb, 0.75), width=1)
    if denim:
        c.ellipse((CX + 0.005, top + 0.025), (0.012, 0.012), fill=(206, 170, 84))
    if s.trim and not leggings:
        c.line([(CX - 0.18, top + 0.015), (CX + 0.18, top + 0.015)], fill=product.second, width=2)
    c.probe("below_shorts", (CX - 0.1, 0.62))
    c.probe("below_cropped", (CX - 0.1, 0.8))
    c.probe("below_ankle", (CX - 0.1, 0.91))
