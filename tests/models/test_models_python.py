"""`python:<module>:<factory>`: a user's own model in a few lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_helpers import studio_snapshot
from lookbench.errors import EmbeddingError, LookBenchError
from lookbench.evaluation.contamination.assess import cutoff_since
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.meta import ModelMeta
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

class Carded(Thumbnail):
    card = {"release_date": "2024-02", "training_cutoff": "2023-12-31", "training_data": ["laion"]}

    def describe(self):
        return {"note": "carded"}

def carded():
    return Carded()

def bad_card():
    model = Thumbnail()
    model.card = "2023-12-31"
    return model

class CardInDescribe(Thumbnail):
    def describe(self):
        return {"card": {"release_date": "2024-02"}}

def card_in_describe():
    return CardInDescribe()

def no_card():
    model = Thumbnail()
    model.card = None
    return model

def loose_card():
    model = Thumbnail()
    model.card = {"release_date": "2024-02", "accuracy": "not a fact"}
    return model

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
    assert meta.meta.model_id == "thumbnail-4x4" and meta.details["note"] == "4x4 thumbnails"
    assert meta.meta.kind == "python"


def test_python_model_errors(user_module: str) -> None:
    with pytest.raises(EmbeddingError, match="lacks model_id"):
        resolve_model(f"python:{user_module}:broken")
    with pytest.raises(EmbeddingError, match="no callable"):
        resolve_model(f"python:{user_module}:missing")
    with pytest.raises(EmbeddingError, match="cannot import"):
        resolve_model("python:no_such_module_here:make")
    with pytest.raises(LookBenchError, match="MODULE:FACTORY"):
        resolve_model("python:just_a_module")


def test_a_card_attribute_is_recorded_and_read_by_since_cutoff(user_module: str) -> None:
    meta = resolve_model(f"python:{user_module}:carded").describe()
    card = ModelMeta(release_date="2024-02", training_cutoff="2023-12-31", training_data=("laion",))
    assert meta.meta.fact_sheet() == card.fact_sheet()
    assert meta.details == {"factory": f"{user_module}:carded", "note": "carded"}
    assert cutoff_since(meta) == np.datetime64("2024-01-01", "us")
    assert resolve_model(f"python:{user_module}:make").describe().meta.fact_sheet() is None
    assert resolve_model(f"python:{user_module}:no_card").describe().meta.fact_sheet() is None  # None: no card
    with pytest.raises(EmbeddingError, match="`card` must be a ModelMeta or a dict of its fields, got str"):
        resolve_model(f"python:{user_module}:bad_card")
    with pytest.raises(EmbeddingError, match=r"python:\w+:loose_card: card field accuracy: Extra inputs"):
        resolve_model(f"python:{user_module}:loose_card")
    with pytest.raises(
        EmbeddingError, match="describe\\(\\) returns a card; declare it as the model's `card` attribute"
    ):
        resolve_model(f"python:{user_module}:card_in_describe")
