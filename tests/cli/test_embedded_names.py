"""`default` and `validation` name the embedded snapshots in every command that takes a snapshot location."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench.cli.main import app
from lookbench.datasets.synth import default as embedded_default

runner = CliRunner()


def _snapshot(root: Path, gallery_rows: int) -> Path:
    spec = {
        "real_studio_flat": {
            "query": [make_row("a", "dress", "red", ["v-neck"])],
            "gallery": [make_row(f"g{i}", "dress", "red", []) for i in range(gallery_rows)],
        }
    }
    return write_snapshot(root, spec, "v20260301")


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Two distinguishable tiny snapshots standing in for the cached default and validation releases."""
    folders = {"default": _snapshot(tmp_path / "d", 3), "validation": _snapshot(tmp_path / "v", 5)}
    monkeypatch.setattr(embedded_default, "default_snapshot", lambda cache_dir=None: folders["default"])
    monkeypatch.setattr(embedded_default, "validation_snapshot", lambda cache_dir=None: folders["validation"])
    return folders


@pytest.mark.parametrize(("name", "gallery_rows"), [("default", 3), ("validation", 5)])
def test_snapshot_info_opens_the_embedded_release_by_name(embedded: dict[str, Path], name: str, gallery_rows: int):
    result = runner.invoke(app, ["snapshot", "info", name])
    assert result.exit_code == 0, result.output
    assert re.search(rf"real_studio_flat\s*│\s*1\s*│\s*{gallery_rows}\s*│", result.output), result.output


def test_eval_scores_the_validation_release_by_name(embedded: dict[str, Path], tmp_path: Path):
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["eval", "-s", "validation", "-m", "features:thumbnail", "-o", str(out)])
    assert result.exit_code == 0, result.output
    recorded = json.loads(out.read_text())["snapshot"]
    assert Path(recorded["location"]) == embedded["validation"]
    assert recorded["subsets"]["real_studio_flat"]["gallery"] == 5


def test_a_folder_named_like_an_embedded_release_is_reached_by_its_path(
    embedded: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    _snapshot(tmp_path / "validation", 7)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["snapshot", "info", "./validation"])
    assert result.exit_code == 0, result.output
    assert re.search(r"real_studio_flat\s*│\s*1\s*│\s*7\s*│", result.output), result.output


def test_an_unknown_name_is_a_one_line_user_error(embedded: dict[str, Path], tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["snapshot", "info", "validaton"])
    assert result.exit_code == 2
    assert "validaton" in result.output


def test_eval_without_a_snapshot_scores_the_embedded_default(embedded: dict[str, Path], tmp_path: Path):
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["eval", "-m", "features:thumbnail", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "no --snapshot given: using the embedded LookBench-Synth default" in result.output
    recorded = json.loads(out.read_text())["snapshot"]
    assert Path(recorded["location"]) == embedded["default"]
    assert recorded["subsets"]["real_studio_flat"]["gallery"] == 3


def test_composed_derive_without_a_snapshot_reads_the_embedded_default(embedded: dict[str, Path], tmp_path: Path):
    result = runner.invoke(app, ["composed", "derive", "--out", str(tmp_path / "c"), "--no-render"])
    assert result.exit_code == 2  # the stand-in is no Synth release: refused, naming the folder it was given
    assert f"real_studio_flat/gallery of {embedded['default']} has no hard_negative_of column" in result.output
