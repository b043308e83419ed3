"""Two-tower baselines with a real open_clip architecture (random-initialised, loaded from a local file)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from composedkit import composed_snapshot
from typer.testing import CliRunner

from embedding_helpers import tiny_open_clip
from lookbench.cli.main import app
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model

pytestmark = pytest.mark.torch


@pytest.fixture
def clip_spec(tmp_path: Path) -> str:
    pytest.importorskip("open_clip")
    pytest.importorskip("torch")
    spec, _ = tiny_open_clip(tmp_path, "lookbench-tiny-clip", vocab_size=49408, context_length=16)
    return spec


def test_text_tower_embeds_into_the_image_space(clip_spec: str, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    provider = resolve_model(clip_spec, EmbedOptions(cache_dir=tmp_path / "cache", progress=False))
    encoder = provider.encoder  # type: ignore[attr-defined]
    vectors = encoder.embed_texts(["like this, but blue", "with short sleeves"])
    assert vectors.shape == (2, 16) and np.isfinite(vectors).all()
    import open_clip

    tokens = open_clip.get_tokenizer("lookbench-tiny-clip")(["like this, but blue"])
    with torch.no_grad():
        expected = encoder.model.encode_text(tokens).numpy()
    assert np.allclose(vectors[:1], expected, atol=1e-5)


@pytest.mark.slow
def test_sum_chooses_its_weight_on_validation_and_text_only_runs(clip_spec: str, tmp_path: Path) -> None:
    snap, _ = composed_snapshot(tmp_path)
    results = {}
    for method in ("sum", "text", "auto"):
        out = tmp_path / f"{method}.json"
        run = CliRunner().invoke(
            app,
            ["eval", "-s", str(snap), "-m", clip_spec, "--subsets", "composed", "--compose", method, "-o", str(out),
             "--resamples", "20", "--cache-dir", str(tmp_path / "cache")],
        )  # fmt: skip
        assert run.exit_code == 0, run.output
        results[method] = json.loads(out.read_text(encoding="utf-8"))
    record = results["sum"]["model"]["composition"]["subsets"]["composed"]
    assert record["parameter"] == "weight" and record["chosen_on"] == "composed/validation"
    assert sorted(map(float, record["validation"])) == [round(0.1 * i, 1) for i in range(11)]
    assert record["text_tower"] == clip_spec
    assert results["auto"]["model"]["composition"]["method"] == "sum"
    text = results["text"]["model"]["composition"]["subsets"]["composed"]
    assert text["value"] == 1.0 and text["chosen_on"] == "fixed"
    assert 0.0 <= results["text"]["metrics"]["composed"]["recall@10"]["value"] <= 1.0
