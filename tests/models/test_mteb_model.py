"""`mteb:NAME[@REVISION]`: MTEB's registry as a model source, its facts as the card; hostile names refused."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.torch
mteb = pytest.importorskip("mteb")

from lookbench._util.images import decode_image  # noqa: E402
from lookbench.cli.main import app  # noqa: E402
from lookbench.snapshot import open_snapshot  # noqa: E402
from tiny_mteb import NAME, build_snapshot, embed, tiny_meta  # noqa: E402

runner = CliRunner()


@pytest.fixture(name="registered")
def registered_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    from mteb.models.model_implementations import MODEL_REGISTRY

    monkeypatch.setitem(MODEL_REGISTRY, NAME, tiny_meta())


@pytest.mark.slow
def test_models_source_mteb_lists_the_registry_image_models() -> None:
    outcome = runner.invoke(app, ["models", "--source", "mteb", "--json"])
    assert outcome.exit_code == 0, outcome.output
    listed = {c["name"]: c for c in json.loads(outcome.output)}
    expected = {m.name for m in mteb.get_model_metas() if "image" in m.modalities}
    assert set(listed) == expected and len(expected) > 10
    clip = mteb.get_model_meta("openai/clip-vit-base-patch32")
    card = listed["openai/clip-vit-base-patch32"]
    assert card["release_date"] == str(clip.release_date) and card["params"] == clip.n_parameters
    assert card["spec"] == "mteb:openai/clip-vit-base-patch32" and "image" in card["modalities"]
    everything = runner.invoke(app, ["models", "--source", "mteb", "--modality", "any", "--json"])
    assert len(json.loads(everything.output)) == len(mteb.get_model_metas()) > len(expected)
    unknown = runner.invoke(app, ["models", "--source", "mteb", "--modality", "smell"])
    assert unknown.exit_code == 2 and "--modality: expected one of image" in unknown.output


def test_eval_runs_a_registered_model_through_its_own_encode(registered: None, tmp_path: Path) -> None:
    pytest.importorskip("torchvision", reason="MTEB loads an image model only where torchvision is installed")
    snapshot_dir = build_snapshot(tmp_path / "snap")
    out = tmp_path / "r.json"
    args = ["eval", "-s", str(snapshot_dir), "-m", f"mteb:{NAME}", "-o", str(out), "--resamples", "20"]
    outcome = runner.invoke(app, [*args, "--cache-dir", str(tmp_path / "cache")])
    assert outcome.exit_code == 0, outcome.output
    result = json.loads(out.read_text())
    card = result["model"]["meta"]
    assert card["release_date"] == "2025-06-01" and card["params"] == 8 * 8 * 3 * 16
    assert card["training_data"] == ["CUB200I2IRetrieval"] and card["license"] == "mit"
    assert result["model"]["details"]["modalities"] == ["image"]
    assert result["model"]["meta"]["revision"] == "1"
    # the same vectors computed here directly give the same ranking
    snapshot = open_snapshot(snapshot_dir)
    images = {
        split: [decode_image(d) for _, batch in snapshot.iter_images(s, sp) for d in batch]
        for split, (s, sp) in {"q": ("real_studio_flat", "query"), "g": ("real_studio_flat", "gallery")}.items()
    }
    q, g = embed(images["q"]), embed(images["g"])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    from lookbench.results.io import load_with_per_query

    _, table = load_with_per_query(out)
    assert table is not None
    top1 = [rows[0] for rows in table["topk_rows"].to_pylist()]
    noise = [decode_image(d) for _, batch in snapshot.iter_images("noise", "gallery") for d in batch]
    n = embed(noise)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    assert top1 == list(np.argmax(q @ np.concatenate([g, n]).T, axis=1))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mteb:no-such-org/no-such-model", "not found in MTEB registry"),
        ("mteb:sentence-transformers/all-MiniLM-L6-v2", "field modalities is ['text']"),
        (f"mteb:{NAME}@2", "field revision"),
    ],
)
def test_eval_refuses_unknown_text_only_or_wrong_revision(
    registered: None, tmp_path: Path, spec: str, message: str
) -> None:
    snapshot_dir = build_snapshot(tmp_path / "snap")
    out = tmp_path / "r.json"
    outcome = runner.invoke(app, ["eval", "-s", str(snapshot_dir), "-m", spec, "-o", str(out)])
    assert outcome.exit_code == 2
    assert message in " ".join(outcome.output.split())
    assert not out.exists()


def test_eval_refuses_a_model_meta_without_release_date(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from mteb.models.model_implementations import MODEL_REGISTRY

    monkeypatch.setitem(MODEL_REGISTRY, NAME, tiny_meta(release_date=None))
    outcome = runner.invoke(app, ["eval", "-s", str(build_snapshot(tmp_path)), "-m", f"mteb:{NAME}"])
    assert outcome.exit_code == 2
    assert f"mteb:{NAME}: field release_date of its ModelMeta is not set" in " ".join(outcome.output.split())


def test_eval_refuses_a_model_whose_mteb_extras_are_not_installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if importlib.util.find_spec("torchaudio") is not None:
        pytest.skip("torchaudio is installed, so MTEB's audio extra is not missing")
    from mteb.models.model_implementations import MODEL_REGISTRY

    monkeypatch.setitem(MODEL_REGISTRY, NAME, tiny_meta(extras=["audio"]))
    out = tmp_path / "r.json"
    outcome = runner.invoke(app, ["eval", "-s", str(build_snapshot(tmp_path)), "-m", f"mteb:{NAME}", "-o", str(out)])
    assert outcome.exit_code == 2, outcome.output
    said = " ".join(outcome.output.split())
    assert f"mteb:{NAME}: Model {NAME} is missing required dependencies:" in said and "torchaudio" in said
    assert "Traceback" not in outcome.output and not out.exists()
