"""Street-look scenes: a figure wearing 2-4 products in a cluttered scene, with occlusion,
perspective and blur; returns each garment's visible box and visibility."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

from lookbench.synth.catalogue import SPECS
from lookbench.synth.palette import HAIR, SKIN_TONES
from lookbench.synth.products import Product
from lookbench.synth.styles import Style, finish, shade_garment, street_background

SCENE_SIZE = (256, 384)
MIN_VISIBLE = 0.45
"""A garment less visible than this (after occlusion) gets no query."""


@dataclass(frozen=True)
class Placement:
    """Where a product's canonical render goes on the figure: anchor (unit canvas) -> figure point, scale."""

    anchor: tuple[float, float]
    target: tuple[float, float]
    scale: float
    flip: bool = False


@dataclass(frozen=True)
class SceneItem:
    """One worn product in a finished scene."""

    product: Product
    bbox: tuple[int, int, int, int]
    visibility: float


@dataclass(frozen=True)
class Scene:
    """A finished street photo and its worn products."""

    image: Image.Image
    items: list[SceneItem]


def _placements(product: Product, u: float, cx: float, y0: float, bag_side: int) -> list[Placement]:
    kind = SPECS[product.category].kind
    if kind == "top":
        return [Placement((0.5, 0.2), (cx, y0 + 0.16 * u), 0.5 * u)]
    if kind == "dress":
        return [Placement((0.5, 0.2), (cx, y0 + 0.16 * u), 0.78 * u)]
    if kind == "pants":
        return [Placement((0.5, 0.06), (cx, y0 + 0.4 * u), 0.54 * u)]
    if kind == "skirt":
        return [Placement((0.5, 0.12), (cx, y0 + 0.4 * u), 0.54 * u)]
    if kind == "bag":
        return [Placement((0.5, 0.6), (cx + bag_side * 0.2 * u, y0 + 0.55 * u), 0.3 * u)]
    bottom = 0.8 if kind == "sneakers" else 0.86
    return [
        Placement((0.85, bottom), (cx - 0.01 * u, y0 + 0.985 * u), 0.19 * u, flip=True),
        Placement((0.15, bottom), (cx + 0.01 * u, y0 + 0.985 * u), 0.19 * u),
    ]


def _order(product: Product) -> int:
    return {"pants": 0, "skirt": 0, "sneakers": 1, "boots": 1, "dress": 2, "top": 2, "bag": 3}[
        SPECS[product.category].kind
    ]


def _body(draw: ImageDraw.ImageDraw, u: float, cx: float, y0: float, rng: np.random.Generator) -> tuple[int, int, int]:
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    legs = skin if rng.random() < 0.6 else (30, 30, 34)
    for s in (-1, 1):
        sx, sy = cx + s * 0.085 * u, y0 + 0.17 * u
        ex, ey = sx + s * 0.16 * u, sy + 0.28 * u
        draw.line([(sx, sy), (ex, ey)], fill=skin, width=max(3, int(0.05 * u)))
        draw.ellipse([ex - 0.025 * u, ey - 0.025 * u, ex + 0.025 * u, ey + 0.025 * u], fill=skin)
        draw.rectangle(
            [cx + s * 0.1 * u - 0.03 * u, y0 + 0.42 * u, cx + s * 0.1 * u + 0.03 * u, y0 + 0.96 * u], fill=legs
        )
    draw.rectangle([cx - 0.025 * u, y0 + 0.1 * u, cx + 0.025 * u, y0 + 0.18 * u], fill=skin)
    return skin


def _head(
    draw: ImageDraw.ImageDraw, u: float, cx: float, y0: float, skin: tuple[int, int, int], rng: np.random.Generator
) -> None:
    hair = HAIR[int(rng.integers(len(HAIR)))]
    hy = y0 + 0.07 * u
    r = 0.055 * u
    draw.ellipse([cx - r * 1.1, hy - r * 1.15, cx + r * 1.1, hy + r * 0.6], fill=hair)
    draw.ellipse([cx - r * 0.9, hy - r, cx + r * 0.9, hy + r], fill=skin)


def _occluders(
    draw: ImageDraw.ImageDraw, labels: ImageDraw.ImageDraw, size: tuple[int, int], rng: np.random.Generator
) -> None:
    w, h = size
    for _ in range(int(rng.integers(1, 3))):
        colour = tuple(int(v) for v in rng.integers(20, 230, size=3))
        kind = rng.random()
        if kind < 0.4:
            x = int(rng.integers(int(w * 0.2), int(w * 0.8)))
            bw = int(rng.integers(8, 18))
            box = [x, 0, x + bw, h]
        elif kind < 0.7:
            top = int(h * rng.uniform(0.72, 0.86))
            x0 = int(rng.integers(-w // 2, w // 3))
            box = [x0, top, x0 + int(w * rng.uniform(0.5, 0.9)), h]
        else:
            side = -1 if rng.random() < 0.5 else 1
            cx = w / 2 + side * w * rng.uniform(0.38, 0.5)
            cy = h * rng.uniform(0.3, 0.7)
            box = [int(cx - w * 0.18), int(cy - h * 0.2), int(cx + w * 0.18), int(cy + h * 0.2)]
            draw.ellipse(box, fill=colour)
            labels.ellipse(box, fill=0)
            continue
        draw.rectangle(box, fill=colour)
        labels.rectangle(box, fill=0)


def _perspective(size: tuple[int, int], rng: np.random.Generator) -> list[float]:
    w, h = size
    j = 0.06
    src = [(0, 0), (w, 0), (w, h), (0, h)]
    dst = [(x + rng.uniform(-j, j) * w, y + rng.uniform(-j, j) * h) for x, y in src]
    rows = []
    rhs = []
    for (x, y), (X, Y) in zip(dst, src, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -X * x, -X * y])
        rows.append([0, 0, 0, x, y, 1, -Y * x, -Y * y])
        rhs.extend([X, Y])
    return [float(v) for v in np.linalg.solve(np.asarray(rows, dtype=float), np.asarray(rhs, dtype=float))]


def street_scene(products: list[tuple[Product, Image.Image]], style: Style, rng: np.random.Generator) -> Scene:
    """Dress a figure in the given (product, RGBA render) pairs and photograph it in the street."""
    size = SCENE_SIZE
    image = street_background(style, size, rng)
    labels = Image.new("L", size, 0)
    draw, label_draw = ImageDraw.Draw(image), ImageDraw.Draw(labels)
    u = size[1] * rng.uniform(0.84, 0.92)
    cx = size[0] / 2 + rng.uniform(-20, 20)
    y0 = size[1] * 0.02
    skin = _body(draw, u, cx, y0, rng)
    bag_side = -1 if rng.random() < 0.5 else 1
    area: dict[int, int] = {}
    ordered = sorted(range(len(products)), key=lambda i: _order(products[i][0]))
    for index in ordered:
        product, render = products[index]
        render = shade_garment(render, style)
        for place in _placements(product, u, cx, y0, bag_side):
            item = ImageOps.mirror(render) if place.flip else render
            side = max(1, int(place.scale))
            item = item.resize((side, side), Image.Resampling.BILINEAR)
            ax = place.anchor[0] if not place.flip else 1 - place.anchor[0]
            x = int(place.target[0] - ax * side)
            y = int(place.target[1] - place.anchor[1] * side)
            alpha = item.getchannel("A").point(lambda v: 255 if v > 127 else 0)
            image.paste(item, (x, y), alpha)
            labels.paste(index + 1, (x, y, x + side, y + side), alpha)
        area[index] = int(np.sum(np.asarray(labels) == index + 1))
    _head(draw, u, cx, y0, skin, rng)
    label_draw.ellipse([cx - 0.07 * u, y0, cx + 0.07 * u, y0 + 0.13 * u], fill=0)
    _occluders(draw, label_draw, size, rng)
    coeffs = _perspective(size, rng)
    image = image.transform(
        size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.BICUBIC, fillcolor=(128, 128, 128)
    )
    labels = labels.transform(size, Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.NEAREST, fillcolor=0)
    image = image.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.5, 1.3))))
    image = finish(image, style, rng)
    label_array = np.asarray(labels)
    items = []
    for index, (product, _) in enumerate(products):
        ys, xs = np.nonzero(label_array == index + 1)
        if len(xs) == 0:
            items.append(SceneItem(product, (0, 0, 0, 0), 0.0))
            continue
        mx, my = max(4, int(0.06 * (xs.max() - xs.min()))), max(4, int(0.06 * (ys.max() - ys.min())))
        box = (
            max(0, int(xs.min()) - mx),
            max(0, int(ys.min()) - my),
            min(size[0], int(xs.max()) + mx + 1),
            min(size[1], int(ys.max()) + my + 1),
        )
        items.append(SceneItem(product, box, min(1.0, len(xs) / max(1, area[index]))))
    return Scene(image, items)
