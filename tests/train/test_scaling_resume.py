"""A scaling study re-run resumes exactly what it made, or refuses: changed configs, a cell killed before evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from trainkit import HERE, eval_snapshot, tiny_config, training_snapshot, write_config
from typer.testing import CliRunner

from lookbench.cli.main import app

pytestmark = pytest.mark.torch
pytest.importorskip("torch")
pytest.importorskip("matplotlib")

CELL = "python_tinynet_make__f1"


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-cell study (no frozen reference) of four steps."""
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    train = training_snapshot(tmp_path / "train", items=6, views=2)
    evaluation = eval_snapshot(tmp_path / "eval")
    data = {"train": {"snapshot": str(train)}, "validation": None, "guard": {"enabled": False}, "workers": 0}
    base = write_config(tmp_path / "base.yaml", tiny_config(train, evaluation, data=data, runtime={"threads": 1}))
    return write_study(tmp_path, base, evaluation, steps=4)


def write_study(tmp_path: Path, base: Path, evaluation: Path, steps: int) -> Path:
    path = tmp_path / "scaling.yaml"
    grid = {"fractions": [1.0], "min_steps": 2, "frozen": False}
    config = {"train": str(base), "set": [f"schedule.steps={steps}", "schedule.warmup_steps=0"], "grid": grid}
    path.write_text(yaml.safe_dump({**config, "evaluate": {"snapshot": str(evaluation), "resamples": 20}}))
    return path


def scaling(path: Path, out: Path) -> object:
    return CliRunner().invoke(app, ["scaling", str(path), "--out", str(out)])


def test_a_rerun_after_changing_the_steps_is_refused(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert scaling(study, out).exit_code == 0  # type: ignore[attr-defined]
    kept = (out / "scaling.json").read_bytes()
    changed = write_study(tmp_path, tmp_path / "base.yaml", tmp_path / "eval" / "v20260601", steps=6)
    result = scaling(changed, out)
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    text = " ".join(result.output.split())  # type: ignore[attr-defined]
    assert f"{CELL}.cell.json" in text and "made with another config" in text and "Traceback" not in text
    assert (out / "scaling.json").read_bytes() == kept  # the old study's report is left as it was


def test_a_study_killed_before_evaluating_a_trained_cell_resumes(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert scaling(study, out).exit_code == 0  # type: ignore[attr-defined]
    finished = json.loads((out / "scaling.json").read_text())
    for name in (f"{CELL}.json", f"{CELL}.per_query.parquet", f"{CELL}.cell.json", "../scaling.json"):
        (out / "results" / name).unlink()  # killed after the cell trained, before its evaluation was written
    result = scaling(study, out)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert f"{CELL}: trained before, evaluating" in result.output  # type: ignore[attr-defined]
    assert json.loads((out / "scaling.json").read_text()) == finished


def test_a_trained_cell_of_another_config_is_refused(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert scaling(study, out).exit_code == 0  # type: ignore[attr-defined]
    for name in (f"{CELL}.json", f"{CELL}.per_query.parquet", f"{CELL}.cell.json"):
        (out / "results" / name).unlink()
    changed = write_study(tmp_path, tmp_path / "base.yaml", tmp_path / "eval" / "v20260601", steps=6)
    result = scaling(changed, out)
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert "holds a model trained with another config" in " ".join(result.output.split())  # type: ignore[attr-defined]
