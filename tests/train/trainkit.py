"""Small training and evaluation snapshots and configs for the training tests."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from PIL import Image

from lookbench.snapshot.writer import image_value, rows_to_table, write_split

HERE = Path(__file__).parent
CATEGORIES = [("t-shirt", "red", ["crew neck"]), ("dress", "blue", ["midi", "v-neck"]), ("skirt", "black", ["mini"])]


def item_image(item: int, view: int, size: int = 40) -> bytes:
    """A JPEG whose colour block depends on the item and whose offset/noise depends on the view."""
    rng = np.random.default_rng(item * 1000 + view)
    base = np.full((size, size, 3), 235, dtype=np.uint8)
    colour = np.array([(item * 53) % 256, (item * 97) % 256, (item * 151) % 256], dtype=np.uint8)
    x0, y0 = rng.integers(2, 10, size=2)
    base[y0 : y0 + 24, x0 : x0 + 24] = colour
    noisy = np.clip(base.astype(int) + rng.integers(-12, 12, size=base.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(noisy).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def row(
    item_id: str, item: int, view: int, data: bytes | None = None, first_seen: str = "2026-02-01"
) -> dict[str, Any]:
    """One split row with every required column plus a date."""
    category, main, others = CATEGORIES[item % len(CATEGORIES)]
    import datetime as dt

    return {
        "image": image_value(data if data is not None else item_image(item, view), f"{item_id}-{view}.jpg"),
        "raw_image": None,
        "category": category,
        "main_attribute": main,
        "other_attributes": others,
        "bbox": [0.0, 0.0, 40.0, 40.0],
        "item_ID": item_id,
        "task": "retrieval",
        "difficulty": "easy",
        "first_seen_at": dt.datetime.fromisoformat(first_seen).replace(tzinfo=dt.timezone.utc),
        "source": "test-shop",
    }


def training_snapshot(root: Path, items: int = 12, views: int = 3, extra: list[dict[str, Any]] | None = None) -> Path:
    """`root/v20260301/real_studio_flat/gallery.parquet` with `views` images of each item (repeated item_IDs)."""
    rows = [row(f"train-{i}", i, v, first_seen=f"2026-02-{1 + i % 20:02d}") for i in range(items) for v in range(views)]
    rows += extra or []
    snap = root / "v20260301"
    write_split(rows_to_table(rows), snap / "real_studio_flat" / "gallery.parquet")
    return snap


def eval_snapshot(root: Path, items: int = 6, offset: int = 100) -> Path:
    """`root/v20260601`: one subset (query = view 1, gallery = view 0 of the same items) and a small noise pool."""
    snap = root / "v20260601"
    query = [row(f"eval-{i}", offset + i, 1) for i in range(items)]
    gallery = [row(f"eval-{i}", offset + i, 0) for i in range(items)]
    noise = [row(f"noise-{i}", offset + 50 + i, 0) for i in range(4)]
    write_split(rows_to_table(query), snap / "real_studio_flat" / "query.parquet")
    write_split(rows_to_table(gallery), snap / "real_studio_flat" / "gallery.parquet")
    write_split(rows_to_table(noise), snap / "noise" / "gallery.parquet")
    return snap


def tiny_config(train: Path, evaluation: Path, **sections: Any) -> dict[str, Any]:
    """A fast config on the tiny backbone; `sections` replace or extend top-level sections."""
    config: dict[str, Any] = {
        "seed": 3,
        "data": {
            "train": {"snapshot": str(train)},
            # these runs check that validation scores exactly what `lookbench eval` scores on the same snapshot
            "validation": {
                "snapshot": str(evaluation),
                "resamples": 20,
                "batch_size": 8,
                "allow_evaluation_snapshot": True,
            },
            "guard": {"against": [str(evaluation)]},
            "workers": 0,
        },
        "model": {"backbone": "python:tinynet:make", "embedding_dim": 8},
        "loss": {
            "identity": {"kind": "arcface", "margin": 0.2, "scale": 16},
            "category": {"weight": 0.5},
            "attributes": {"weight": 0.5},
        },
        "optim": {"lr": 0.01, "head_lr_multiplier": 2, "layer_decay": 0.8},
        "schedule": {"steps": 6, "warmup_steps": 2},
        "batch": {"size": 8, "m_per_class": 2},
        "augment": {"backend": "basic", "scale": [0.6, 1.0], "color_jitter": 0.1},
        "checkpoint": {"every_steps": 2, "keep": 5},
        "log_every_steps": 1,
    }
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


def write_config(path: Path, config: dict[str, Any]) -> Path:
    """Write a config dict as YAML."""
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path
