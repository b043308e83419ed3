"""Upper-body garments, dresses and jumpsuits: torso, sleeves, neckline, collar, closure, hood, pockets, trims."""

from __future__ import annotations

import numpy as np

from lookbench.datasets.synth.canvas import Canvas, Point
from lookbench.datasets.synth.palette import GOLD, METAL, RGB, contrast, line_colour, luminance, mix, shade
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.shape import Pose, Shape

CX = 0.5
SHOULDER = 0.2

WIDTH = {"slim fit": 0.175, "regular fit": 0.2, "oversized": 0.235}
HEM = {"cropped": 0.52, "hip length": 0.72, "thigh length": 0.83, "knee length": 0.95}
SLEEVE = {"sleeveless": 0.0, "short sleeve": 0.13, "three-quarter sleeve": 0.26, "long sleeve": 0.38}
DRESS_HEM = {"mini": 0.6, "knee length": 0.72, "midi": 0.84, "maxi": 0.96}
DEFAULT_SLEEVE = {"vest": "sleeveless", "tank top": "sleeveless"}
DEFAULT_LENGTH = {"shirt": 0.76, "blazer": 0.76, "polo shirt": 0.72}
LOGO_CATEGORIES = ("t-shirt", "sweatshirt", "hoodie", "polo shirt", "sweater", "tank top")


def inner_colour(product: Product) -> RGB:
    """The colour seen through a neckline: a deep shade of the fabric (grey on black)."""
    return (82, 82, 86) if luminance(product.rgb) < 50 else shade(product.rgb, 0.4)


def _face(product: Product, factor: float = 0.88) -> RGB:
    return shade(product.rgb, factor) if luminance(product.rgb) > 50 else (58, 58, 62)


def sleeves(c: Canvas, product: Product, s: Shape, pose: Pose, half_width: float, length: float, drop: float) -> None:
    """Two sleeves from the shoulders, shaped as recorded, with probes at short and long sleeve positions."""
    kind = product.attribute("sleeve shape")
    for sign, side in ((1, "right"), (-1, "left")):
        dx, dy = pose.arm(sign)
        outer = (CX + sign * (half_width - 0.02), SHOULDER + drop)
        pit = (CX + sign * half_width, SHOULDER + drop + 0.13 * s.sleeve_width)
        if length > 0:
            end_o = (outer[0] + sign * dx * length, outer[1] + dy * length)
            end_i = (pit[0] + sign * dx * length * 0.8, pit[1] + dy * length * 0.8)
            if kind == "bell sleeve":
                flare = 0.55 * length
                end_o = (end_o[0] + sign * dy * flare * 0.35, end_o[1] - dx * flare * 0.1)
                end_i = (end_i[0] - sign * dy * flare * 0.3, end_i[1] + dx * flare * 0.3)
            c.fabric([outer, end_o, end_i, pit])
            if kind == "puff sleeve":
                mid = (outer[0] + sign * dx * min(length, 0.12) * 0.5, outer[1] + dy * min(length, 0.12) * 0.5 + 0.02)
                c.fabric_ellipse((mid[0] + sign * 0.012, mid[1]), (0.062, 0.058))
                c.line(
                    [(mid[0] - sign * 0.03, mid[1] + 0.05), (mid[0] + sign * 0.05, mid[1] + 0.03)],
                    shade(product.rgb, 0.7),
                )
            if product.has("ribbed cuffs"):
                ribs(c, product, end_o, end_i, 0.035)
            if product.attribute("style") == "sporty":
                for off in (0.012, 0.03):
                    c.line(
                        [(outer[0] + sign * off * dy, outer[1] + off * dx), (end_o[0] + sign * off * dy, end_o[1])],
                        product.second,
                        width=2,
                    )
            if product.attribute("style") == "casual" and product.category == "blazer":
                ribs(c, product, end_o, end_i, 0.05, lining=True)
        inward = (-0.866 * sign, 0.5)
        base_dx, base_dy = 0.5, 0.866
        for name, along, depth in (("short", 0.11, 0.02), ("long", 0.33, 0.03)):
            c.probe(
                f"sleeve_{name}_{side}",
                (
                    CX + sign * (half_width - 0.02) + sign * base_dx * along + inward[0] * depth,
                    SHOULDER + base_dy * along + inward[1] * depth,
                ),
            )


def ribs(c: Canvas, product: Product, a: Point, b: Point, depth: float, lining: bool = False) -> None:
    """A band across the end of a sleeve from `a` to `b`: knitted ribs, or a rolled-up lining cuff."""
    vx, vy = b[0] - a[0], b[1] - a[1]
    norm = max(1e-6, (vx * vx + vy * vy) ** 0.5)
    nx, ny = -vy / norm * depth, vx / norm * depth
    if ny > 0:
        nx, ny = -nx, -ny
    band = [a, b, (b[0] + nx, b[1] + ny), (a[0] + nx, a[1] + ny)]
    colour = mix(product.rgb, (236, 232, 220), 0.55) if lining else shade(product.rgb, 0.8)
    c.polygon(band, fill=colour)
    if not lining:
        for t in np.linspace(0.1, 0.9, 7):
            p0 = (a[0] + vx * t, a[1] + vy * t)
            c.line([p0, (p0[0] + nx, p0[1] + ny)], fill=shade(product.rgb, 0.6), width=1)


def neckline(c: Canvas, product: Product, s: Shape, kind: str) -> float:
    """Draw the neckline; return the y where a front closure starts."""
    inner = inner_colour(product)
    k = s.neck
    if kind == "v-neck":
        c.polygon([(CX - 0.06 * k, 0.17), (CX + 0.06 * k, 0.17), (CX, 0.17 + 0.13 * k)], fill=inner)
        return 0.17 + 0.13 * k
    if kind == "scoop neck":
        c.lower_half_ellipse((CX, 0.17), (0.09 * k, 0.09 * k), fill=inner)
        return 0.26
    if kind == "square neck":
        c.polygon(
            [(CX - 0.08 * k, 0.17), (CX + 0.08 * k, 0.17), (CX + 0.08 * k, 0.25), (CX - 0.08 * k, 0.25)], fill=inner
        )
        return 0.25
    if kind == "boat neck":
        c.lower_half_ellipse((CX, 0.17), (0.13 * k, 0.025), fill=inner)
        return 0.2
    if kind == "turtleneck":
        c.fabric([(CX - 0.065, 0.08), (CX + 0.065, 0.08), (CX + 0.065, 0.19), (CX - 0.065, 0.19)])
        for y in (0.1, 0.125, 0.15, 0.175):
            c.line([(CX - 0.06, y), (CX + 0.06, y)], fill=shade(product.rgb, 0.7), width=2)
        return 0.19
    if kind == "halter neck":
        c.polygon([(CX - 0.05, 0.2), (CX + 0.05, 0.2), (CX, 0.3)], fill=inner)
        return 0.3
    c.lower_half_ellipse((CX, 0.17), (0.06 * k, 0.04 * k), fill=inner)
    if s.trim:
        c.lower_half_ellipse((CX, 0.17), (0.06 * k, 0.04 * k), fill=None, outline=product.second)
    return 0.21


def collar(c: Canvas, product: Product, s: Shape, kind: str) -> float:
    """Draw a collar or lapels; return the y where a front closure starts (-1 without a collar)."""
    edge = line_colour(product.rgb)
    k = s.detail
    tip = product.second if product.attribute("style") == "sporty" else edge
    if kind in ("shirt collar", "polo collar"):
        face = shade(product.rgb, 1.15) if luminance(product.rgb) < 200 else shade(product.rgb, 0.9)
        c.lower_half_ellipse((CX, 0.17), (0.05, 0.035), fill=inner_colour(product))
        for sgn in (-1, 1):
            c.polygon(
                [(CX + sgn * 0.09 * k, 0.15), (CX + sgn * 0.005, 0.19), (CX + sgn * 0.05 * k, 0.17 + 0.09 * k)],
                fill=face,
                outline=tip,
                width=2 if kind == "polo collar" else 1,
            )
        return 0.2
    if kind == "mandarin collar":
        c.polygon(
            [(CX - 0.06, 0.12), (CX + 0.06, 0.12), (CX + 0.065, 0.175), (CX - 0.065, 0.175)],
            fill=_face(product, 1.08),
            outline=edge,
        )
        return 0.18
    if kind in ("notched lapel", "shawl collar"):
        face = _face(product, 0.82)
        c.polygon([(CX - 0.05, 0.17), (CX + 0.05, 0.17), (CX, 0.4)], fill=inner_colour(product))
        for sgn in (-1, 1):
            if kind == "notched lapel":
                points = [
                    (CX + sgn * 0.06, 0.16),
                    (CX + sgn * 0.11 * k, 0.22),
                    (CX + sgn * 0.085 * k, 0.25),
                    (CX + sgn * 0.11 * k, 0.28),
                    (CX, 0.42),
                ]
            else:
                points = [(CX + sgn * 0.06, 0.16)]
                points += [
                    (CX + sgn * (0.06 + 0.045 * k * np.sin(t)), 0.16 + 0.26 * t / np.pi)
                    for t in np.linspace(0.2, 2.9, 9)
                ]
                points += [(CX, 0.42)]
            c.polygon(points, fill=face, outline=edge)
        return 0.42
    return -1.0


def closure(c: Canvas, product: Product, s: Shape, kind: str, top: float, bottom: float, placket: bool = False) -> None:
    """Draw a zip, a full button placket or a short polo placket down the centre front."""
    if kind == "zip":
        colour = METAL if luminance(product.rgb) < 150 else (60, 60, 64)
        c.line([(CX, top), (CX, bottom - 0.005)], fill=colour, width=4)
        c.polygon(
            [(CX - 0.012, top), (CX + 0.012, top), (CX + 0.012, top + 0.04), (CX - 0.012, top + 0.04)], fill=colour
        )
    elif kind == "buttons" or placket:
        end = top + 0.12 if placket else bottom
        count = 2 + s.buttons % 2 if placket else s.buttons
        button = GOLD if product.attribute("material") == "denim" else contrast(product.rgb)
        c.line([(CX, top), (CX, end - 0.005)], fill=line_colour(product.rgb), width=2)
        for y in np.linspace(top + 0.03, end - 0.03 if placket else end - 0.05, count):
            c.ellipse((CX + 0.02, float(y)), (0.016, 0.016), fill=button, outline=line_colour(product.rgb))


def pockets(c: Canvas, product: Product, s: Shape, half_width: float, hem: float) -> None:
    """Patch, chest and kangaroo pockets, with probes on their top edges."""
    face = _face(product, 0.9)
    edge = line_colour(product.rgb)
    k = s.detail
    for sgn, side in ((-1, "left"), (1, "right")):
        x = CX + sgn * half_width * 0.6
        c.probe(f"patch_pocket_{side}", (x, hem - 0.16))
        if product.has("patch pockets"):
            c.polygon(
                [
                    (x - 0.05 * k, hem - 0.16),
                    (x + 0.05 * k, hem - 0.16),
                    (x + 0.05 * k, hem - 0.05),
                    (x - 0.05 * k, hem - 0.05),
                ],
                fill=face,
                outline=edge,
                width=3,
            )
    x = CX + half_width * 0.5
    c.probe("chest_pocket", (x, 0.3))
    if product.has("chest pocket"):
        c.polygon(
            [(x - 0.035 * k, 0.3), (x + 0.035 * k, 0.3), (x + 0.035 * k, 0.37), (x - 0.035 * k, 0.37)],
            fill=face,
            outline=edge,
            width=3,
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
        if product.attribute("closure") == "drawstring" or product.category == "hoodie":
            for sgn in (-1, 1):
                c.line([(CX + sgn * 0.03, 0.2), (CX + sgn * 0.035, 0.3)], fill=contrast(product.rgb), width=2)


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


def torso(c: Canvas, half_width: float, bottom: float, bottom_half_width: float, top: float = SHOULDER) -> None:
    """The body panel from the shoulders down to `bottom`."""
    c.fabric(
        [
            (CX - half_width, top + 0.03),
            (CX - 0.07, top - 0.03),
            (CX + 0.07, top - 0.03),
            (CX + half_width, top + 0.03),
            (CX + bottom_half_width, bottom),
            (CX - bottom_half_width, bottom),
        ]
    )


def _straps(c: Canvas, product: Product, w: float, kind: str) -> None:
    """Tank-top straps: two over the shoulders, or a halter meeting behind the neck."""
    if kind == "halter neck":
        c.fabric([(CX - w * 0.75, 0.27), (CX - 0.03, 0.12), (CX + 0.03, 0.12), (CX + w * 0.75, 0.27)])
        return
    for sgn in (-1, 1):
        x = CX + sgn * w * 0.55
        c.fabric([(x - 0.03, 0.27), (x - 0.02, 0.16), (x + 0.02, 0.16), (x + 0.03, 0.27)])


def _logo(c: Canvas, product: Product, s: Shape) -> None:
    if not s.logo or product.category not in LOGO_CATEGORIES or product.has("chest pocket"):
        return
    x, y, r = CX - 0.08 + s.logo_x * 0.3, 0.3, 0.022 * s.detail
    if s.logo == 1:
        c.ellipse((x, y), (r, r), fill=product.second)
    elif s.logo == 2:
        c.polygon(
            [(x - 2 * r, y - r * 0.4), (x + 2 * r, y - r * 0.4), (x + 2 * r, y + r * 0.4), (x - 2 * r, y + r * 0.4)],
            fill=product.second,
        )
    else:
        c.polygon([(x - r, y + r), (x + r, y + r), (x, y - r)], fill=product.second)


def _formal(c: Canvas, product: Product, w: float) -> None:
    """A formal blazer: a white pocket square at the chest and flap pockets at the hips."""
    x = CX + w * 0.55
    c.polygon(
        [(x - 0.035, 0.3), (x + 0.035, 0.3), (x + 0.02, 0.265), (x - 0.005, 0.275), (x - 0.02, 0.26)],
        fill=(246, 246, 242),
    )
    for sgn in (-1, 1):
        px = CX + sgn * w * 0.6
        c.line([(px - 0.05, 0.6), (px + 0.05, 0.6)], fill=line_colour(product.rgb), width=3)


def _ruffles(c: Canvas, product: Product, y: float, half: float) -> None:
    colour = shade(product.rgb, 0.9) if luminance(product.rgb) > 60 else (70, 70, 74)
    count = 7
    for t in np.linspace(-1, 1, count):
        c.ellipse((CX + half * t, y), (half / count * 1.2, 0.022), fill=colour, outline=line_colour(product.rgb))


def draw_top(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """Any upper-body garment of the catalogue."""
    category = product.category
    w = WIDTH[product.attribute("fit", "regular fit")] * s.width + (0.02 if category in ("coat", "blazer") else 0.0)
    length = product.attribute("length")
    hem = (HEM[length] if length else DEFAULT_LENGTH.get(category, 0.72)) + s.hem
    drop = 0.03 if product.attribute("fit") == "oversized" else 0.0
    hood(c, product)
    neck_kind = product.attribute("neckline", "crew neck")
    if category == "tank top":
        torso(c, w, hem, w * 1.02, top=0.27 if neck_kind != "halter neck" else 0.28)
        _straps(c, product, w, neck_kind)
    else:
        torso(c, w, hem, w * (1.04 if product.attribute("fit") != "slim fit" else 0.96))
    sleeve = product.attribute("sleeve length", DEFAULT_SLEEVE.get(category, "long sleeve"))
    sleeves(c, product, s, pose, w, SLEEVE[sleeve] + (0.0 if sleeve == "sleeveless" else s.hem * 0.5), drop)
    c.probe("hem", (CX - w * 0.5, hem - 0.02))
    c.probe("below_cropped", (CX - w * 0.5, 0.6))
    c.probe("below_hip", (CX - w * 0.5, 0.78))
    c.probe("below_thigh", (CX - w * 0.5, 0.9))
    if product.has("ribbed cuffs"):
        ribs(c, product, (CX + w * 1.04, hem), (CX - w * 1.04, hem), 0.04)
    top = collar(c, product, s, product.attribute("collar", "no collar"))
    if top < 0:
        top = neckline(c, product, s, neck_kind)
    kind = product.attribute("closure", "buttons" if category == "shirt" else "pullover")
    closure(c, product, s, kind, top, hem, placket=category == "polo shirt")
    pockets(c, product, s, w, hem)
    if product.has("epaulettes"):
        for sgn in (-1, 1):
            x = CX + sgn * (w - 0.05)
            c.polygon(
                [(x - 0.04, 0.19), (x + 0.04, 0.19), (x + 0.04, 0.215), (x - 0.04, 0.215)],
                fill=_face(product, 0.8),
                outline=line_colour(product.rgb),
            )
            c.ellipse((x - sgn * 0.025, 0.2025), (0.008, 0.008), fill=contrast(product.rgb))
    if product.has("ruffles"):
        _ruffles(c, product, 0.19, 0.07)
        _ruffles(c, product, hem - 0.01, w)
    if product.has("belt"):
        belt(c, product, SHOULDER + (hem - SHOULDER) * 0.45, w * 1.02)
    if product.attribute("style") == "formal":
        _formal(c, product, w)
    if product.attribute("style") == "sporty":
        for sgn in (-1, 1):
            c.line([(CX + sgn * (w - 0.015), 0.26), (CX + sgn * (w + 0.005), hem - 0.01)], product.second, width=3)
    if product.attribute("material") == "denim":
        for sgn in (-1, 1):
            c.line([(CX + sgn * 0.03, 0.32), (CX + sgn * (w - 0.02), 0.3)], fill=(214, 150, 60), width=1)
    if s.trim and category not in ("blazer", "coat"):
        c.line([(CX - w * 1.03, hem - 0.012), (CX + w * 1.03, hem - 0.012)], fill=product.second, width=2)
    _logo(c, product, s)


def draw_dress(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A dress: bodice with sleeves and neckline, then an a-line or bodycon skirt."""
    w = 0.15 * (0.95 + 0.1 * (s.width - 0.9) / 0.22)
    waist = 0.42
    hem = DRESS_HEM[product.attribute("length", "knee length")] + s.hem * 0.6
    flare = (0.3 if product.attribute("fit", "a-line") == "a-line" else 0.165) * (0.95 + 0.1 * s.detail - 0.1)
    torso(c, w, waist, w * 0.85)
    c.fabric([(CX - w * 0.85, waist), (CX + w * 0.85, waist), (CX + flare, hem), (CX - flare, hem)])
    sleeves(c, product, s, pose, w, SLEEVE[product.attribute("sleeve length", "sleeveless")], 0.0)
    neckline(c, product, s, product.attribute("neckline", "crew neck"))
    c.line([(CX - w * 0.85, waist), (CX + w * 0.85, waist)], fill=line_colour(product.rgb), width=2)
    if s.trim:
        c.line([(CX - flare, hem - 0.012), (CX + flare, hem - 0.012)], fill=product.second, width=2)
    c.probe("below_mini", (CX, 0.66))
    c.probe("below_knee", (CX, 0.78))
    c.probe("below_midi", (CX, 0.9))
    c.probe("flare", (CX + 0.22, min(hem, 0.6) - 0.02))


def draw_jumpsuit(c: Canvas, product: Product, s: Shape, pose: Pose) -> None:
    """A jumpsuit: bodice with neckline and sleeves, waist seam, then two trouser legs."""
    w = 0.15 * s.width
    waist = 0.42
    neck = product.attribute("neckline", "v-neck")
    if neck == "halter neck":
        torso(c, w, waist, w * 0.95, top=0.28)
        c.fabric([(CX - w * 0.75, 0.31), (CX - 0.03, 0.13), (CX + 0.03, 0.13), (CX + w * 0.75, 0.31)])
    else:
        torso(c, w, waist, w * 0.95)
    wide = product.attribute("fit") == "wide leg"
    hem_w = 0.085 if wide else 0.055
    for sgn in (-1, 1):
        lx = CX + sgn * 0.075
        spread = np.tan(np.radians(pose.stride)) * 0.45
        c.fabric(
            [
                (CX + sgn * w * 0.95, waist),
                (CX + sgn * 0.004, waist),
                (CX + sgn * 0.004, 0.58),
                (lx + sgn * spread - sgn * hem_w, 0.96),
                (lx + sgn * spread + sgn * hem_w, 0.96),
            ]
        )
    c.probe("between_legs", (CX, 0.9))
    sleeves(c, product, s, pose, w, SLEEVE[product.attribute("sleeve length", "sleeveless")], 0.0)
    neckline(c, product, s, neck)
    c.line([(CX - w * 0.95, waist), (CX + w * 0.95, waist)], fill=line_colour(product.rgb), width=2)
    if product.has("belt"):
        belt(c, product, waist - 0.02, w * 0.97)
    if product.has("patch pockets"):
        for sgn in (-1, 1):
            x = CX + sgn * 0.08
            c.polygon(
                [(x - 0.04, 0.5), (x + 0.04, 0.5), (x + 0.04, 0.58), (x - 0.04, 0.58)],
                fill=_face(product),
                outline=line_colour(product.rgb),
                width=3,
            )
