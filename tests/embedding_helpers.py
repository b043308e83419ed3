"""A small real encoder (colour statistics) and snapshot builders shared by the embedding tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from conftest import make_row, write_snapshot
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import EncoderBase
from lookbench.models.preprocess import Preprocess
from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import open_snapshot


class ColourStats(EncoderBase):
    """Embeds an image as per-channel means and standard deviations of its preprocessed pixels (6-d)."""

    model_id = "colour-stats"
    revision = "1"
    input_kind = "tensor"

    def __init__(self, fail_after: int | None = None) -> None:
        self.preprocess: Preprocess | None = Preprocess(crop=8, resize=8, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
        self.calls = 0
        self.rows = 0
        self.fail_after = fail_after

    def encode(self, batch: np.ndarray) -> np.ndarray:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt("simulated interruption")
        self.calls += 1
        self.rows += len(batch)
        return np.concatenate([batch.mean(axis=(2, 3)), batch.std(axis=(2, 3)) + 1e-3], axis=1)

    def describe(self) -> dict[str, Any]:
        return {"kind": "test"}


def colour_image(seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, size=(12, 12, 3), dtype=np.uint8))


def studio_snapshot(root: Path, gallery: int = 20, queries: int = 4, bad_rows: dict[int, bytes] | None = None) -> Path:
    """A real_studio_flat subset; `bad_rows` replaces gallery images by raw bytes."""
    rows = [make_row(f"g{i}", "top", "red", seed=100 + i) for i in range(gallery)]
    for row, data in (bad_rows or {}).items():
        rows[row]["image"] = {"bytes": data, "path": f"g{row}.png"}
    query = [make_row(f"q{i}", "top", "red", seed=i) for i in range(queries)]
    return write_snapshot(root, {"real_studio_flat": {"query": query, "gallery": rows}})


def embed_gallery(spec: str, tmp_path: Path, gallery: int = 3) -> tuple[ModelEmbeddings, np.ndarray]:
    """Resolve `spec` and embed the gallery of a small studio snapshot (its images: `png_bytes(100 + i)`)."""
    snap = open_snapshot(studio_snapshot(tmp_path / "snap", gallery=gallery, queries=1))
    provider = resolve_model(spec, EmbedOptions(cache_dir=tmp_path / "cache", batch_size=2, progress=False))
    assert isinstance(provider, ModelEmbeddings)
    return provider, provider.embed_split(snap, "real_studio_flat", "gallery")


def tiny_open_clip(tmp_path: Path, name: str, vocab_size: int = 64, context_length: int = 8) -> tuple[str, Any]:
    """Register a tiny open_clip architecture, save its random-initialised (seeded) weights; (spec, model).

    A text tower fed by open_clip's default tokenizer needs `vocab_size=49408` (its ids reach 49407).
    """
    import json

    import open_clip
    import torch

    config = {
        "embed_dim": 16,
        "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 16},
        "text_cfg": {"context_length": context_length, "vocab_size": vocab_size, "width": 32, "heads": 2, "layers": 1},
    }
    (tmp_path / f"{name}.json").write_text(json.dumps(config))
    open_clip.add_model_config(tmp_path / f"{name}.json")
    torch.manual_seed(0)
    model = open_clip.create_model(name).eval()
    weights = tmp_path / f"{name}.pt"
    torch.save(model.state_dict(), weights)
    return f"open_clip:{name}/{weights}", model
