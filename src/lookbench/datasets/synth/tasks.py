"""Rendering tasks: each turns a slice of the plan into an Arrow table of snapshot rows, seeded by the plan alone,
so a task gives the same bytes in any process and in any order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from lookbench.datasets.synth.encode import jpeg_bytes
from lookbench.datasets.synth.plan import (
    CatalogueItem,
    NoiseBasis,
    NoiseChunk,
    ScenePlan,
    StudioQuery,
    noise_products,
    scene_rng,
)
from lookbench.datasets.synth.products import Product
from lookbench.datasets.synth.render import render_product
from lookbench.datasets.synth.shots import shop_photo, shop_pose
from lookbench.datasets.synth.street import compose, scene_params
from lookbench.datasets.synth.studio import query_shot, studio_image
from lookbench.datasets.synth.styles import Style
from lookbench.snapshot.schema import BBOX_TYPE, IMAGE_TYPE
from lookbench.snapshot.writer import image_value

GENERATOR_VERSION = "synth-6"
TASK = "image_to_image"

_BASE = [
    pa.field("image", IMAGE_TYPE),
    pa.field("raw_image", IMAGE_TYPE),
    pa.field("category", pa.string()),
    pa.field("main_attribute", pa.string()),
    pa.field("other_attributes", pa.list_(pa.string())),
    pa.field("bbox", BBOX_TYPE),
    pa.field("item_ID", pa.string()),
    pa.field("task", pa.string()),
    pa.field("difficulty", pa.string()),
    pa.field("first_seen_at", pa.timestamp("us", tz="UTC")),
    pa.field("source", pa.string()),
]
STUDIO_QUERY_SCHEMA = pa.schema(_BASE)
STREET_QUERY_SCHEMA = pa.schema([*_BASE, pa.field("outfit_id", pa.string())])
GALLERY_SCHEMA = pa.schema([*_BASE, pa.field("hard_negative_of", pa.string()), pa.field("shot", pa.string())])
NOISE_SCHEMA = pa.schema([*_BASE, pa.field("shot", pa.string()), pa.field("near_miss_of", pa.string())])
"""Gallery and noise rows name the shop-photo convention they were shot in (`synth.shots.CONVENTIONS`); a noise row
that is a hard near-miss names the query product it was derived from."""

TRAIN_SCHEMA = pa.schema([*_BASE, pa.field("outfit_id", pa.string()), pa.field("view", pa.string())])
"""Training rows name their view (catalogue, studio, street); street crops keep their outfit, not the scene."""
VIEWS = {"catalogue": "catalogue", "studio": "studio", "scene": "street"}

Kind = Literal["studio", "scene", "catalogue", "noise", "train"]
SCHEMAS: dict[Kind, pa.Schema] = {
    "studio": STUDIO_QUERY_SCHEMA,
    "scene": STREET_QUERY_SCHEMA,
    "catalogue": GALLERY_SCHEMA,
    "noise": NOISE_SCHEMA,
    "train": TRAIN_SCHEMA,
}


@dataclass(frozen=True)
class RenderTask:
    """A slice of one split: studio queries, street scenes, catalogue shots or a chunk of distractors."""

    kind: Kind
    style: Style
    items: tuple[Any, ...]
    seed: int
    release: date
    training: bool = False
    """Rows for a `train` split (TRAIN_SCHEMA) rather than for the task kind's evaluation split."""


_BASIS = NoiseBasis()


def set_noise_basis(basis: NoiseBasis) -> None:
    """Give this process the query products and gallery category mix that distractors are drawn against."""
    global _BASIS
    _BASIS = basis


def row(product: Product, image: bytes, difficulty: str, **extra: Any) -> dict[str, Any]:
    """One snapshot row of a product and its image."""
    return {
        "image": image_value(image, f"{product.product_id}.jpg"),
        "raw_image": None,
        "category": product.category,
        "main_attribute": product.main_attribute,
        "other_attributes": product.other_attributes(),
        "bbox": None,
        "item_ID": product.product_id,
        "task": TASK,
        "difficulty": difficulty,
        "first_seen_at": product.first_seen_at,
        "source": GENERATOR_VERSION,
        **extra,
    }


def _studio(task: RenderTask) -> list[dict[str, Any]]:
    rows = []
    for query in task.items:
        assert isinstance(query, StudioQuery)
        rng = np.random.default_rng(list(query.seed))
        product = query.product
        rendered = render_product(product, pose=shop_pose(product, rng))
        image = studio_image(rendered, product.category, task.style, query_shot(rng), rng)
        rows.append(row(product, jpeg_bytes(image), "easy" if task.style == "real" else "medium"))
    return rows


def _catalogue(task: RenderTask) -> list[dict[str, Any]]:
    rows = []
    for item in task.items:
        assert isinstance(item, CatalogueItem)
        photo = shop_photo(item.product, np.random.default_rng(list(item.seed)))
        image = jpeg_bytes(photo.image, photo.quality)
        rows.append(row(item.product, image, "easy", hard_negative_of=item.negative_of, shot=photo.convention))
    return rows


def _scenes(task: RenderTask) -> list[dict[str, Any]]:
    rows = []
    for scene in task.items:
        assert isinstance(scene, ScenePlan)
        params = scene_params(scene_rng(scene.seed, "geometry"))
        composed = compose(list(scene.products), params, task.style, scene_rng(scene.seed, "pixels"))
        assert composed.image is not None
        raw = image_value(jpeg_bytes(composed.image), f"{scene.outfit_id}.jpg")
        for index in scene.queried:
            item = composed.items[index]
            crop = composed.image.crop(item.bbox)
            difficulty = "medium" if scene.visibility[index] > 0.85 else "hard"
            query = row(item.product, jpeg_bytes(crop), difficulty, outfit_id=scene.outfit_id)
            query["raw_image"] = raw
            query["bbox"] = [float(v) for v in item.bbox]
            rows.append(query)
    return rows


def _noise(task: RenderTask) -> list[dict[str, Any]]:
    (chunk,) = task.items
    assert isinstance(chunk, NoiseChunk)
    rng = np.random.default_rng([*chunk.seed, 1])
    rows = []
    for drawn in noise_products(task.seed, task.release, chunk, _BASIS):
        photo = shop_photo(drawn.product, rng)
        image = jpeg_bytes(photo.image, photo.quality)
        rows.append(row(drawn.product, image, "easy", shot=photo.convention, near_miss_of=drawn.near_miss_of))
    return rows


RUNNERS = {"studio": _studio, "catalogue": _catalogue, "scene": _scenes, "noise": _noise}


def run_task(task: RenderTask) -> pa.Table:
    """Render a task's rows into a table of its split's schema."""
    rows = RUNNERS[task.kind](task)
    if not task.training:
        return pa.Table.from_pylist(rows, schema=SCHEMAS[task.kind])
    for row_ in rows:
        row_["view"] = VIEWS[task.kind]
        row_["raw_image"] = None
    return pa.Table.from_pylist(rows, schema=TRAIN_SCHEMA)
