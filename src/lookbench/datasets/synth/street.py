"""Street-look scenes: a figure of varied build, pose, distance and turn wearing 2-4 products in a cluttered street,
with occluders, an arm, hair or a bag strap across the garments, a perspective warp and tilt, sun and shade (real
look), blur and the style's finish; a query's crop is a detector's box, not the garment's own, so no crop registers
the garment cell for cell. The same scene can be composed as a small label map alone (to plan which garments are
visible enough for a query) or as the full photo."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

from lookbench.datasets.synth.camera import develop
from lookbench.datasets.synth.catalogue import SPECS
from lookbench.datasets.synth.drape import Light, drape, resize_field, sample_light
from lookbench.datasets.synth.palette import HAIR, RGB, SKIN_TONES
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.render import render_product
from lookbench.datasets.synth.shape import Pose
from lookbench.datasets.synth.studio import HANGING_KINDS
from lookbench.datasets.synth.styles import Style, finish, rand_rgb, smooth_garment, street_background

SCENE_SIZE = (768, 1152)
"""Three times the first renderer's 256 x 384 scenes."""
PLAN_SCALE = 0.25
"""Scale of the label-only composition that decides visibility."""
MIN_VISIBLE = 0.45
"""A garment less visible than this (after occlusion) gets no query."""
MIN_CROP = 150
"""Crops are widened (with context, inside the photo) to at least this many pixels on each side."""
FRONTS = ("none", "arm", "hair", "strap")
FRONT_WEIGHTS = (0.25, 0.3, 0.2, 0.25)
DETECTOR_MARGIN = (-0.08, 0.25)
"""A street crop's box is a detector's: each side off the garment's extent by this share of it (inward < 0)."""
ROLL = 12.0
"""Largest tilt of the photo (degrees): a hand-held camera and a figure leaning or walking, so no garment stands
upright in its box as it does in a shop photo."""
PAD = 0.22
"""The scene is drawn this share of its height wider on each side, so a photo tilted by the largest roll, its
corners jittered the most, has no empty corners."""
SHADE = 0.6
"""Share of real-look scenes with sun and shade across the figure (a building's shadow edge or dappled light);
the AI-generated look keeps its even, idealised light."""
SHADE_DEPTH = (0.35, 0.6)
"""Range of how much darker the shade is than the sun (its red channel; green loses 0.9 and blue 0.7 of that)."""
ORDER = {"pants": 0, "skirt": 0, "sneakers": 1, "boots": 1, "heels": 1, "jumpsuit": 2, "dress": 2, "top": 3, "bag": 4}


@dataclass(frozen=True)
class Occluder:
    """Something in front of the figure: a pole, street furniture or a passer-by, in scene units (0-1)."""

    kind: str
    box: tuple[float, float, float, float]
    colour: RGB


@dataclass(frozen=True)
class SceneParams:
    """Everything geometric about one street photo, in units of the scene size; drawn once per scene."""

    figure: float
    """Figure height as a share of the photo height (distance to the camera)."""
    cx: float
    build: float
    """Body width factor."""
    turn: float
    """Three-quarter turn of the body (-1..1); the body narrows as it turns."""
    pose: Pose
    skin: RGB
    hair: RGB
    legs: RGB
    bag_side: int
    occluders: tuple[Occluder, ...]
    corners: tuple[tuple[float, float], ...]
    """Perspective jitter of the four photo corners."""
    blur: float
    light: Light
    wear: int
    """Seed of what crosses the garments and of each crop's detector box (the same in the label plan and photo)."""
    front: str
    """What crosses in front of the garments: nothing, an arm, long hair or a bag strap (`FRONTS`)."""
    roll: float
    """Tilt of the photo in degrees (the camera's roll and the figure's lean)."""


def scene_params(rng: np.random.Generator) -> SceneParams:
    """Draw a scene's geometry: distance, place, build, turn, pose, occluders, camera tilt, light."""
    occluders = []
    for _ in range(int(rng.integers(1, 3))):
        roll = rng.random()
        colour = rand_rgb(rng, 20, 230)
        if roll < 0.4:
            x = float(rng.uniform(0.2, 0.8))
            occluders.append(Occluder("pole", (x, 0.0, x + float(rng.uniform(0.03, 0.07)), 1.0), colour))
        elif roll < 0.7:
            top = float(rng.uniform(0.72, 0.88))
            x0 = float(rng.uniform(-0.5, 0.33))
            occluders.append(Occluder("box", (x0, top, x0 + float(rng.uniform(0.5, 0.9)), 1.0), colour))
        else:
            side = -1 if rng.random() < 0.5 else 1
            cx = 0.5 + side * float(rng.uniform(0.38, 0.5))
            cy = float(rng.uniform(0.3, 0.7))
            occluders.append(Occluder("passer-by", (cx - 0.18, cy - 0.2, cx + 0.18, cy + 0.25), colour))
    arm = float(rng.uniform(8, 32))
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    return SceneParams(
        figure=float(rng.uniform(0.7, 0.93)),
        cx=float(rng.uniform(-0.08, 0.08)),
        build=float(rng.uniform(0.86, 1.18)),
        turn=float(rng.uniform(-0.7, 0.7)),
        pose=Pose(arm + float(rng.uniform(-6, 6)), arm + float(rng.uniform(-6, 6)), float(rng.uniform(0, 7))),
        skin=skin,
        hair=HAIR[int(rng.integers(len(HAIR)))],
        legs=skin if rng.random() < 0.6 else rand_rgb(rng, 20, 60),
        bag_side=-1 if rng.random() < 0.5 else 1,
        occluders=tuple(occluders),
        corners=tuple((float(rng.uniform(-0.06, 0.06)), float(rng.uniform(-0.06, 0.06))) for _ in range(4)),
        blur=float(rng.uniform(0.5, 1.3)),
        light=sample_light(rng, (0.4, 1.0), (0.2, 0.4)),
        wear=int(rng.integers(2**31)),
        front=FRONTS[int(rng.choice(len(FRONTS), p=FRONT_WEIGHTS))],
        roll=float(rng.uniform(-ROLL, ROLL)),
    )


@dataclass(frozen=True)
class Placement:
    """Where a product's render goes: anchor (unit canvas) -> figure point (units of figure height), canvas size."""

    anchor: tuple[float, float]
    target: tuple[float, float]
    scale: float
    flip: bool = False


def _placements(product: Product, bag_side: int) -> list[Placement]:
    kind = SPECS[product.category].kind
    if kind == "top":
        return [Placement((0.5, 0.2), (0.0, 0.16), 0.5)]
    if kind in ("dress", "jumpsuit"):
        return [Placement((0.5, 0.2), (0.0, 0.16), 0.78)]
    if kind == "pants":
        return [Placement((0.5, 0.06), (0.0, 0.4), 0.54)]
    if kind == "skirt":
        return [Placement((0.5, 0.12), (0.0, 0.4), 0.54)]
    if kind == "bag":
        return [Placement((0.5, 0.6), (bag_side * 0.2, 0.55), 0.3)]
    bottom = {"sneakers": 0.8, "boots": 0.86}.get(kind, 0.81)
    return [
        Placement((0.85, bottom), (-0.01, 0.985), 0.19, flip=True),
        Placement((0.15, bottom), (0.01, 0.985), 0.19),
    ]


@dataclass(frozen=True)
class SceneItem:
    """One worn product in a composed scene: its box in the photo and the share of it left visible."""

    product: Product
    bbox: tuple[int, int, int, int]
    visibility: float


@dataclass(frozen=True)
class Scene:
    """A composed street photo (None when only the label map was composed) and its worn products."""

    image: Image.Image | None
    items: list[SceneItem]


def _shoulder(sign: int, u: float, cx: float, y0: float, hx: float) -> tuple[float, float]:
    """Where the figure's arm on side `sign` starts, in photo pixels."""
    return cx + sign * 0.085 * u * hx, y0 + 0.17 * u


def _body(draw: ImageDraw.ImageDraw, p: SceneParams, u: float, cx: float, y0: float, hx: float) -> None:
    for sign in (-1, 1):
        sx, sy = _shoulder(sign, u, cx, y0, hx)
        dx, dy = p.pose.arm(sign)
        ex, ey = sx + sign * dx * 0.33 * u * hx, sy + dy * 0.33 * u
        draw.line([(sx, sy), (ex, ey)], fill=p.skin, width=max(2, int(0.05 * u * hx)))
        draw.ellipse([ex - 0.025 * u, ey - 0.025 * u, ex + 0.025 * u, ey + 0.025 * u], fill=p.skin)
        spread = np.tan(np.radians(p.pose.stride)) * sign
        top = (cx + sign * 0.1 * u * hx, y0 + 0.42 * u)
        foot = (top[0] + spread * 0.54 * u, y0 + 0.96 * u)
        draw.line([top, foot], fill=p.legs, width=max(2, int(0.06 * u * hx)))
    draw.rectangle([cx - 0.025 * u * hx, y0 + 0.1 * u, cx + 0.025 * u * hx, y0 + 0.18 * u], fill=p.skin)


def _head(draw: ImageDraw.ImageDraw, p: SceneParams, u: float, cx: float, y0: float, hx: float) -> None:
    hy = y0 + 0.07 * u
    r = 0.055 * u
    draw.ellipse([cx - r * 1.1 * hx, hy - r * 1.15, cx + r * 1.1 * hx, hy + r * 0.6], fill=p.hair)
    draw.ellipse([cx - r * 0.9 * hx, hy - r, cx + r * 0.9 * hx, hy + r], fill=p.skin)


def _front(
    draw: ImageDraw.ImageDraw | None,
    labels: ImageDraw.ImageDraw,
    p: SceneParams,
    u: float,
    cx: float,
    y0: float,
    hx: float,
) -> None:
    """Draw what crosses in front of the garments (an arm, long hair, a bag strap) and clear it from the label map."""
    if p.front == "none":
        return
    rng = np.random.default_rng((p.wear, len(FRONTS)))
    sign = -1 if rng.random() < 0.5 else 1
    strokes: list[tuple[list[tuple[float, float]], float, RGB]] = []
    if p.front == "arm":
        shoulder = _shoulder(sign, u, cx, y0, hx)
        elbow = (shoulder[0] + sign * 0.03 * u * hx, y0 + float(rng.uniform(0.3, 0.36)) * u)
        hand = (cx - sign * float(rng.uniform(-0.02, 0.08)) * u * hx, y0 + float(rng.uniform(0.3, 0.44)) * u)
        strokes.append(([shoulder, elbow, hand], 0.05 * u * hx, p.skin))
    elif p.front == "hair":
        length = float(rng.uniform(0.24, 0.36))
        for side in (sign, -sign) if rng.random() < 0.5 else (sign,):
            x = cx + side * float(rng.uniform(0.04, 0.08)) * u * hx
            strokes.append(([(x, y0 + 0.06 * u), (x + side * 0.01 * u, y0 + length * u)], 0.05 * u * hx, p.hair))
    else:
        colour = rand_rgb(rng, 15, 120)
        start = (cx - sign * 0.07 * u * hx, y0 + 0.16 * u)
        strokes.append(([start, (cx + sign * 0.15 * u * hx, y0 + float(rng.uniform(0.42, 0.5)) * u)], 0.02 * u, colour))
    for points, width, colour in strokes:
        line = max(2, int(width))
        if draw is not None:
            draw.line(points, fill=colour, width=line, joint="curve")
            end = points[-1]
            draw.ellipse([end[0] - line / 2, end[1] - line / 2, end[0] + line / 2, end[1] + line / 2], fill=colour)
        labels.line(points, fill=0, width=line, joint="curve")


def _occlude(
    draw: ImageDraw.ImageDraw | None, labels: ImageDraw.ImageDraw, p: SceneParams, size: tuple[int, int], pad: int
) -> None:
    """Draw the occluders over the photo (when drawing one) and clear them from the label map; a pole's or street
    furniture's side on or past the photo's edge runs on to the padded scene's edge."""
    w, h = size
    for occ in p.occluders:
        edge = occ.kind != "passer-by"

        def at(unit: float, extent: int, edge: bool = edge) -> float:
            if edge and unit <= 0:
                return 0.0
            if edge and unit >= 1:
                return extent + 2.0 * pad
            return pad + unit * extent

        x0, y0, x1, y1 = at(occ.box[0], w), at(occ.box[1], h), at(occ.box[2], w), at(occ.box[3], h)
        if occ.kind == "passer-by":
            head = [x0 + (x1 - x0) * 0.3, y0, x0 + (x1 - x0) * 0.7, y0 + (y1 - y0) * 0.22]
            body = [x0, y0 + (y1 - y0) * 0.2, x1, y1 + h]
            radius = int((x1 - x0) * 0.3)
            if draw is not None:
                draw.ellipse(head, fill=(180, 140, 110))
                draw.rounded_rectangle(body, radius=radius, fill=occ.colour)
            labels.ellipse(head, fill=0)
            labels.rounded_rectangle(body, radius=radius, fill=0)
            continue
        if draw is not None:
            draw.rectangle([x0, y0, x1, y1], fill=occ.colour)
        labels.rectangle([x0, y0, x1, y1], fill=0)


def _perspective(p: SceneParams, size: tuple[int, int], pad: int) -> list[float]:
    """Coefficients that map the photo's pixels to the padded scene: corner jitter, then the roll about the centre."""
    w, h = size
    angle = np.radians(p.roll)
    cos, sin = float(np.cos(angle)), float(np.sin(angle))
    src = [(0, 0), (w, 0), (w, h), (0, h)]
    rows = []
    rhs = []
    for (x, y), (jx, jy) in zip(src, p.corners, strict=True):
        dx, dy = x + jx * w - w / 2, y + jy * h - h / 2
        px, py = w / 2 + cos * dx - sin * dy, h / 2 + sin * dx + cos * dy
        rows.append([px, py, 1, 0, 0, 0, -(x + pad) * px, -(x + pad) * py])
        rows.append([0, 0, 0, px, py, 1, -(y + pad) * px, -(y + pad) * py])
        rhs.extend([x + pad, y + pad])
    return [float(v) for v in np.linalg.solve(np.asarray(rows, dtype=float), np.asarray(rhs, dtype=float))]


def _shade(image: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Sun and shade across the scene: a shadow edge or dappled light, the shade darker and bluer than the sun."""
    if rng.random() >= SHADE:
        return image
    w, h = image.size
    sw, sh = max(8, w // 16), max(8, h // 16)
    if rng.random() < 0.5:
        angle = float(rng.uniform(0, np.pi))
        yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
        across = (xx / sw - 0.5) * np.cos(angle) + (yy / sh - 0.5) * np.sin(angle) * h / w
        lit = (across > float(rng.uniform(-0.2, 0.2))).astype(np.float32)
    else:
        blobs = resize_field(rng.standard_normal((9, 6)).astype(np.float32), (sw, sh))
        lit = (blobs > float(rng.uniform(-0.4, 0.4))).astype(np.float32)
    sun = np.clip(resize_field(lit, (w, h)), 0.0, 1.0)[..., None]
    depth = float(rng.uniform(*SHADE_DEPTH))
    shade = np.asarray([1.0 - depth, 1.0 - depth * 0.9, 1.0 - depth * 0.7], dtype=np.float32)
    out = np.asarray(image, dtype=np.float32) * (sun + (1.0 - sun) * shade)
    return Image.fromarray(np.clip(out, 0, 255).astype(np.uint8))


def compose(
    products: list[Product], p: SceneParams, style: Style, rng: np.random.Generator | None, scale: float = 1.0
) -> Scene:
    """Compose the scene at `scale` of the full size; with `rng` None only the label map (no pixels) is made."""
    size = (max(16, int(SCENE_SIZE[0] * scale)), max(24, int(SCENE_SIZE[1] * scale)))
    pad = int(PAD * size[1])
    canvas = (size[0] + 2 * pad, size[1] + 2 * pad)
    full = rng is not None
    image = street_background(style, canvas, rng) if rng is not None else None
    labels = Image.new("L", canvas, 0)
    draw = ImageDraw.Draw(image) if image is not None else None
    label_draw = ImageDraw.Draw(labels)
    u = size[1] * p.figure
    cx = pad + size[0] * (0.5 + p.cx)
    y0 = pad + size[1] * (0.97 - p.figure)
    hx = p.build * (1.0 - 0.3 * abs(p.turn))
    if draw is not None:
        _body(draw, p, u, cx, y0, hx)
    area: dict[int, int] = {}
    subject = Image.new("L", canvas, 0)
    for index in sorted(range(len(products)), key=lambda i: ORDER[SPECS[products[i].category].kind]):
        product = products[index]
        kind = SPECS[product.category].kind
        pose = p.pose if kind in ("top", "dress", "jumpsuit", "pants") else Pose()
        for place in _placements(product, p.bag_side):
            side = max(8, int(place.scale * u))
            rendered = render_product(product, side, pose, plain=rng is None)
            item = rendered.image
            if place.flip:
                item = ImageOps.mirror(item)
            width = max(4, int(side * (hx if kind not in ("bag",) else 1.0)))
            item = item.resize((width, side), Image.Resampling.BILINEAR)
            if rng is not None:
                item = smooth_garment(drape(item, rng, p.light, rendered.gloss, kind in HANGING_KINDS), style)
            ax = place.anchor[0] if not place.flip else 1 - place.anchor[0]
            # rounded in the photo's own coordinates, then moved onto the padded canvas: the same pixels either way
            x = pad + int(cx - pad + place.target[0] * u * hx - ax * width)
            y = pad + int(y0 - pad + place.target[1] * u - place.anchor[1] * side)
            alpha = item.getchannel("A").point(lambda v: 255 if v > 127 else 0)
            if image is not None:
                image.paste(item, (x, y), alpha)
                subject.paste(255, (x, y, x + width, y + side), alpha)
            labels.paste(index + 1, (x, y, x + width, y + side), alpha)
        area[index] = int(np.count_nonzero(_inside(labels, size, pad) == index + 1))
    if draw is not None:
        _head(draw, p, u, cx, y0, hx)
    _front(draw, label_draw, p, u, cx, y0, hx)
    label_draw.ellipse([cx - 0.07 * u * hx, y0, cx + 0.07 * u * hx, y0 + 0.13 * u], fill=0)
    _occlude(draw, label_draw, p, size, pad)
    left = np.bincount(_inside(labels, size, pad).ravel(), minlength=len(products) + 1)
    # counted before the perspective warp, which changes areas: a share of the drawn garment, not of its warp
    visibility = {index: min(1.0, int(left[index + 1]) / max(1, drawn)) for index, drawn in area.items()}
    coeffs = _perspective(p, size, pad)
    labels = labels.transform(size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.NEAREST, fillcolor=0)
    if image is not None and rng is not None:
        image = image.transform(
            size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.BILINEAR, fillcolor=(128, 128, 128)
        )
        if style == "real":
            image = _shade(image, rng)
        if style == "aigen":
            subject = subject.transform(
                size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.NEAREST, fillcolor=0
            )
        image = image.filter(ImageFilter.BoxBlur(p.blur * scale * 1.5))
        image = finish(develop(image, rng, style), style, rng, subject if style == "aigen" else None)
    return Scene(image if full else None, _items(products, np.asarray(labels), visibility, size, p.wear))


def _inside(labels: Image.Image, size: tuple[int, int], pad: int) -> np.ndarray:
    """The label map's upright photo area: visibility counts what the frame holds, not the padding around it."""
    return np.asarray(labels)[pad : pad + size[1], pad : pad + size[0]]


def _items(
    products: list[Product], labels: np.ndarray, visibility: dict[int, float], size: tuple[int, int], seed: int
) -> list[SceneItem]:
    items = []
    for index, product in enumerate(products):
        mask = labels == index + 1
        count = int(np.count_nonzero(mask))
        if count == 0:
            items.append(SceneItem(product, (0, 0, 0, 0), 0.0))
            continue
        (x0, x1), (y0, y1) = _extent(mask.any(axis=0)), _extent(mask.any(axis=1))
        left, top, right, bottom = np.random.default_rng((seed, index, 2)).uniform(*DETECTOR_MARGIN, size=4)
        w, h = x1 - x0 + 1, y1 - y0 + 1
        box = (x0 - int(left * w), y0 - int(top * h), x1 + 1 + int(right * w), y1 + 1 + int(bottom * h))
        items.append(SceneItem(product, widen(box, size, MIN_CROP), visibility[index]))
    return items


def _extent(occupied: np.ndarray) -> tuple[int, int]:
    """First and last index where a non-empty boolean line is true."""
    return int(occupied.argmax()), len(occupied) - 1 - int(occupied[::-1].argmax())


def widen(box: tuple[int, int, int, int], size: tuple[int, int], minimum: int) -> tuple[int, int, int, int]:
    """The box clipped to the photo and grown around its centre to at least `minimum` px a side where it fits."""
    x0, y0, x1, y1 = box
    out = []
    for lo, hi, limit in ((x0, x1, size[0]), (y0, y1, size[1])):
        lo, hi = max(0, lo), min(limit, hi)
        need = min(minimum, limit) - (hi - lo)
        if need > 0:
            lo -= need // 2
            hi += need - need // 2
            if lo < 0:
                hi, lo = hi - lo, 0
            if hi > limit:
                lo, hi = lo - (hi - limit), limit
        out.append((lo, hi))
    return (out[0][0], out[1][0], out[0][1], out[1][1])


def visible_items(products: list[Product], p: SceneParams) -> list[float]:
    """Each product's visibility, from a small label-only composition (cheap; decides which get queries)."""
    scene = compose(products, p, "real", None, PLAN_SCALE)
    return [item.visibility for item in scene.items]
