"""A tiny random image encoder registered in MTEB's registry, and a snapshot whose items it can find."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from conftest import make_row, write_snapshot

NAME = "lookbench-tests/tiny-image"
DIM = 16
SIDE = 8
CATEGORIES = ("dress", "skirt", "shirt")


def thumbnails(images: list[Image.Image]) -> np.ndarray:
    """8x8 RGB thumbnails as flat float vectors."""
    return np.stack([np.asarray(im.convert("RGB").resize((SIDE, SIDE)), np.float32).ravel() / 255 for im in images])


def projection(seed: int = 0) -> np.ndarray:
    """The encoder's fixed random weights."""
    return np.random.default_rng(seed).normal(size=(SIDE * SIDE * 3, DIM)).astype(np.float32)


def embed(images: list[Image.Image]) -> np.ndarray:
    """What the tiny encoder computes."""
    return thumbnails(images) @ projection()


def tiny_meta(
    release_date: str | None = "2025-06-01", modalities: list[str] | None = None, extras: list[str] | None = None
) -> Any:
    """A ModelMeta whose loader builds the tiny encoder (an mteb AbsEncoder); `extras` are mteb extras it needs."""
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta

    class TinyImageEncoder(AbsEncoder):
        def __init__(self, model_name: str, revision: str | None = None, device: str | None = None, **_: Any) -> None:
            self.model_name = model_name

        def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, **_: Any) -> np.ndarray:
            return np.concatenate([embed(batch["image"]) for batch in inputs])

    return ModelMeta(
        loader=TinyImageEncoder,
        name=NAME,
        revision="1",
        release_date=release_date,
        languages=None,
        n_parameters=SIDE * SIDE * 3 * DIM,
        memory_usage_mb=None,
        max_tokens=None,
        embed_dim=DIM,
        license="mit",
        open_weights=True,
        public_training_code=None,
        public_training_data=None,
        framework=["PyTorch"],
        similarity_fn_name="cosine",
        use_instructions=False,
        training_datasets={"CUB200I2IRetrieval"},
        modalities=modalities or ["image"],
        extra_requirements_groups=extras,
    )


def build_snapshot(root: Path, queries: int = 12) -> Path:
    """One subset with noise: even items' gallery photo is the query's own image (found at rank 1), odd items'
    is another image; every third item has a second gallery photo, so some queries have two relevant rows."""
    query_rows, gallery_rows = [], []
    for i in range(queries):
        category = CATEGORIES[i % len(CATEGORIES)]
        when = dt.datetime(2025, 11, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=7 * i)
        query_rows.append(make_row(f"item-{i}", category, "red", [], seed=i, first_seen_at=when))
        twin = make_row(f"item-{i}", category, "red", [], seed=i if i % 2 == 0 else 300 + i)
        gallery_rows.append(twin)
        if i % 3 == 0:
            gallery_rows.append(make_row(f"item-{i}", category, "red", [], seed=600 + i))
    noise = [make_row(f"noise-{j}", "dress", "red", [], seed=900 + j) for j in range(7)]
    spec = {"real_studio_flat": {"query": query_rows, "gallery": gallery_rows}, "noise": {"gallery": noise}}
    return write_snapshot(root, spec, "v20260201")
