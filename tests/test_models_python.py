"""`python:<module>:<factory>`: a user's own model in a few lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from embedding_helpers import studio_snapshot
from lookbench.embeddings.options import EmbedOptions
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import open_snapshot

USER_MODULE = """
import numpy as np

class Thumbnail:
    model_id = "thumbnail-4x4"
    revision = "1"

    def embed(self, images):
        return np.stack([np.asarray(im.resize((4, 4)), dtype=np.float32).ravel() + 1 for im in images])

    def describe(self):
        return {"note": "4x4 thumbnails"}

def make():
    return Thumbnail()

def broken():
    return object()
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"user_model_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.chdir(tmp_path)
    return name


def test_python_model(user_module: str, tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path / "snap", gallery=5))
    provider = resolve_model(f"python:{user_module}:make", EmbedOptions(cache_dir=tmp_path / "c", progress=False))
    out = provider.embed_split(snap, "real_studio_flat", "gallery")
    assert out.shape == (5, 48) and (out >= 1).all()
    meta = provider.describe()
    assert meta["model_id"] == "thumbnail-4x4" and meta["note"] == "4x4 thumbnails" and meta["kind"] == "python"


def test_python_model_errors(user_module: str) -> None:
    with pytest.raises(EmbeddingError, match="lacks model_id"):
        resolve_model(f"python:{user_module}:broken")
    with pytest.raises(EmbeddingError, match="no callable"):
        resolve_model(f"python:{user_module}:missing")
    with pytest.raises(EmbeddingError, match="cannot import"):
        resolve_model("python:no_such_module_here:make")
    with pytest.raises(LookBenchError, match="MODULE:FACTORY"):
        resolve_model("python:just_a_module")
