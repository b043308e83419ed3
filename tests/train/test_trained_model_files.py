"""`trained:DIR` with damaged files: a truncated weights file or weights of another shape are one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trainkit import HERE, tiny_config, training_snapshot

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from lookbench.errors import LookBenchError  # noqa: E402
from lookbench.models.embed_options import EmbedOptions  # noqa: E402
from lookbench.models.registry import resolve_model  # noqa: E402
from lookbench.train.config import parse_config  # noqa: E402
from lookbench.train.loop import Trainer  # noqa: E402


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("trained")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOOKBENCH_CACHE", str(root / "cache"))
        patch.syspath_prepend(str(HERE))
        snap = training_snapshot(root / "train", items=4, views=2)
        data = {"train": {"snapshot": str(snap)}, "validation": None, "guard": {"enabled": False}, "workers": 0}
        config = tiny_config(snap, snap, data=data, runtime={"threads": 1}, schedule={"steps": 2, "warmup_steps": 0})
        Trainer(parse_config(config, "test"), root / "model", progress=False, say=lambda _m: None).run()
    return root / "model"


def copy_of(exported: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(exported, folder)
    return folder


def load_error(folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.syspath_prepend(str(HERE))
    with pytest.raises(LookBenchError) as error:
        resolve_model(f"trained:{folder}", EmbedOptions())
    message = str(error.value)
    assert "\n" not in message and str(folder / "model.safetensors") in message
    return message


def test_the_intact_export_loads(exported: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    assert resolve_model(f"trained:{exported}", EmbedOptions()) is not None


def test_a_truncated_weights_file_is_one_line(exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = copy_of(exported, tmp_path)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    assert "not a readable safetensors file" in load_error(folder, monkeypatch)


def test_weights_of_another_shape_are_one_line(exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = copy_of(exported, tmp_path)
    info = json.loads((folder / "model.json").read_text())
    info["embedding_dim"] = 4  # the exported head projects to 8
    (folder / "model.json").write_text(json.dumps(info))
    message = load_error(folder, monkeypatch)
    assert "does not fit the architecture in model.json (size mismatch for" in message
