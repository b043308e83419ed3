"""`benchmarks/training_ablations.py --reuse NAME=DIR`: a finished run of the variant's recipe is taken as is, and
anything else (an unknown variant, an unfinished folder, another recipe) is a one-line error, exit 2, before any
model is scored or any output is written."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "training_ablations.py"
CONFIG = ROOT / "examples" / "train-synth-effnet.yaml"
BASE = ["data.train.snapshot=data", "data.validation=null"]


def ablations():  # type: ignore[no-untyped-def]
    """The benchmark script as a module (it lives outside the package, next to `training_eval.py`)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        return importlib.import_module("training_ablations")
    finally:
        sys.path.remove(str(SCRIPT.parent))


def finished_run(folder: Path, config: dict[str, object]) -> Path:
    """A folder holding what a finished `lookbench train` run leaves (the weights are never read by the check)."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "model.json").write_text("{}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"")
    return folder


def run_script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, str(SCRIPT), "--config", str(CONFIG), "--out", str(tmp_path / "out"), *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_reuse_refuses_a_folder_that_is_not_a_finished_run(tmp_path: Path) -> None:
    half = tmp_path / "half"
    half.mkdir()
    (half / "config.json").write_text("{}", encoding="utf-8")
    done = run_script(tmp_path, "--reuse", f"fine-tuned={half}", "--skip-scaling")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(half) in lines[0] and "model.json" in lines[0] and "model.safetensors" in lines[0]
    assert not (tmp_path / "out").exists()


def test_reuse_refuses_an_unknown_variant(tmp_path: Path) -> None:
    done = run_script(tmp_path, "--reuse", f"bigger-lr={tmp_path}", "--skip-scaling")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "bigger-lr" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_reuse_refuses_a_run_of_another_recipe(tmp_path: Path) -> None:
    module = ablations()
    softmax = module.load_config(CONFIG, [*BASE, *module.VARIANTS["softmax"]]).model_dump(mode="json")
    run = finished_run(tmp_path / "softmax-run", softmax)
    done = run_script(tmp_path, "--reuse", f"fine-tuned={run}", "--data", "data", "--skip-scaling")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "loss" in lines[0] and str(run) in lines[0], done.stderr
    assert not (tmp_path / "out").exists()


def test_reuse_takes_a_run_of_the_variants_recipe(tmp_path: Path) -> None:
    module = ablations()
    for name, overrides in module.VARIANTS.items():
        expected = module.load_config(CONFIG, [*BASE, *overrides]).model_dump(mode="json")
        # the run's own data and runtime settings (paths, threads, validation) do not decide its weights
        recorded = {**expected, "data": {"workers": 7}, "runtime": {"threads": 1}}
        module.check_recipe(name, finished_run(tmp_path / name, recorded), expected)
        other = {**expected, "model": {**expected["model"], "freeze_layers": expected["model"]["freeze_layers"] + 1}}
        with pytest.raises(SystemExit) as refused:
            module.check_recipe(name, finished_run(tmp_path / f"{name}-other", other), expected)
        assert refused.value.code == 2


def test_reuse_refuses_a_config_that_is_not_an_object(tmp_path: Path) -> None:
    module = ablations()
    expected = module.load_config(CONFIG, BASE).model_dump(mode="json")
    run = tmp_path / "list"
    finished_run(run, {})
    (run / "config.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SystemExit) as refused:
        module.check_recipe("fine-tuned", run, expected)
    assert refused.value.code == 2
