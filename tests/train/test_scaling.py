"""`lookbench scaling`: a tiny grid trains, evaluates with intervals, writes table, plot and raw results, resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from trainkit import HERE, eval_snapshot, tiny_config, training_snapshot, write_config
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.errors import TrainError
from lookbench.results.io import load_result
from lookbench.train.scaling import Cell, ScalingConfig, cell_config, load_scaling


def study_files(tmp_path: Path, **grid: object) -> Path:
    train = training_snapshot(tmp_path / "train", items=12, views=3)
    evaluation = eval_snapshot(tmp_path / "eval")
    base = write_config(
        tmp_path / "base.yaml",
        tiny_config(
            train,
            evaluation,
            data={
                "train": {"snapshot": str(train)},
                "validation": None,
                "guard": {"against": [str(evaluation)]},
                "workers": 0,
            },
        ),
    )
    study = {
        "train": str(base),
        "set": ["schedule.steps=8"],
        "grid": {"fractions": [0.5, 1.0], "min_steps": 3, **grid},
        "evaluate": {"snapshot": str(evaluation), "resamples": 50},
    }
    path = tmp_path / "scaling.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def test_cells_scale_steps_and_fractions(tmp_path: Path) -> None:
    study, base = load_scaling(study_files(tmp_path))
    assert base.schedule.steps == 8
    half = cell_config(study, base, Cell("python:tinynet:make", 0.5))
    assert half.schedule.steps == 4 and half.data.train[0].fraction == 0.5
    fixed = ScalingConfig.model_validate({**study.model_dump(), "grid": {"fractions": [0.25], "steps": "fixed"}})
    assert cell_config(fixed, base, Cell("python:tinynet:make", 0.25)).schedule.steps == 8
    assert Cell("timm:vit_small?pretrained=0", 0.25).name == "timm_vit_small_pretrained_0__f0.25"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grid": {"fractions": [0, 1]}}, "fractions must lie in"),
        ({"grid": {"fractions": [1]}, "extra": 1}, "extra: unknown key"),
        ({"train": "missing.yaml"}, "training config not found"),
        ({"set": ["optim.lr=-1"]}, "optim.lr"),
    ],
)
def test_bad_scaling_configs(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = study_files(tmp_path)
    data = {**yaml.safe_load(path.read_text()), **change}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(TrainError, match=message):
        load_scaling(path)


@pytest.mark.torch
def test_scaling_study_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    path = study_files(tmp_path)
    out = tmp_path / "study"
    result = CliRunner().invoke(app, ["scaling", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    raw = json.loads((out / "scaling.json").read_text())
    assert [(r["fraction"], r["images"], r["steps"]) for r in raw] == [(0.0, 0, 0), (0.5, 18, 4), (1.0, 36, 8)]
    for record in raw:
        fine = record["metrics"]["fine_recall@1"]
        assert 0 <= fine["ci_low"] <= fine["value"] <= fine["ci_high"] <= 1
        assert (out / "results" / record["result_file"]).is_file()
        quiet = load_result(out / "results" / record["result_file"].replace(".json", "__noise-none.json"))
        alone = record["metrics"]["fine_recall@1__noise-none"]["value"]
        assert quiet.config.noise == "none" and alone == quiet.metrics["overall"]["fine_recall@1"].value
        assert "distractor_share@1" in record["metrics"]
    assert (out / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = (out / "scaling.md").read_text()
    assert "| python:tinynet:make | frozen | 0 |" in table and "| python:tinynet:make | 0.5 | 18 | 6 | 4 |" in table
    assert (out / "scaling.csv").read_text().splitlines()[0].startswith("backbone,fraction,images,items,steps")
    again = CliRunner().invoke(app, ["scaling", str(path), "--out", str(out)])
    assert again.exit_code == 0 and again.output.count("done before, kept") == 3


def test_scaling_cli_reports_config_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("grid: [1, 2]\n")
    result = CliRunner().invoke(app, ["scaling", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "grid" in result.output and "Traceback" not in result.output


def test_the_leaderboard_site_shows_a_scaling_study(tmp_path: Path) -> None:
    import numpy as np
    from PIL import Image

    evaluation = eval_snapshot(tmp_path / "eval")
    rng = np.random.default_rng(0)
    for subset, split, rows in [
        ("real_studio_flat", "query", 6),
        ("real_studio_flat", "gallery", 6),
        ("noise", "gallery", 4),
    ]:
        (tmp_path / "emb" / subset).mkdir(parents=True, exist_ok=True)
        np.save(tmp_path / "emb" / subset / f"{split}.npy", rng.normal(size=(rows, 4)).astype(np.float32))
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "eval",
            "-s",
            str(evaluation),
            "-m",
            f"embeddings:{tmp_path / 'emb'}",
            "-o",
            str(tmp_path / "res" / "run.json"),
            "--resamples",
            "20",
        ],
    )
    assert result.exit_code == 0, result.output
    study = tmp_path / "study"
    study.mkdir()
    fine = {"value": 0.4321, "ci_low": 0.3, "ci_high": 0.55, "n": 6}
    records = [
        {
            "backbone": "efficientnet-lite0",
            "fraction": f,
            "images": n,
            "items": n // 2,
            "steps": s,
            "metrics": {"fine_recall@1": fine},
            "result_file": f"c{f}.json",
        }
        for f, n, s in [(0.0, 0, 0), (0.5, 500, 50), (1.0, 1000, 100)]
    ]
    (study / "scaling.json").write_text(json.dumps(records))
    Image.new("RGB", (8, 6), (200, 10, 10)).save(study / "scaling.png")
    site = tmp_path / "site"
    built = runner.invoke(
        app, ["leaderboard", str(tmp_path / "res" / "run.json"), "--out", str(site), "--scaling", str(study)]
    )
    assert built.exit_code == 0, built.output
    page = (site / "index.html").read_text()
    assert '<section id="scaling">' in page and "data:image/png;base64,iVBORw0KGgo" in page
    assert "<td>frozen</td>" in page and "<td>1000</td>" in page and "43.21 [30.00, 55.00]" in page
    assert ">Fine Recall@1 % [95% CI]</th>" in page and "fine_recall@1 %" not in page  # human names
    without = runner.invoke(app, ["leaderboard", str(tmp_path / "res" / "run.json"), "--out", str(tmp_path / "s2")])
    assert without.exit_code == 0 and 'id="scaling"' not in (tmp_path / "s2" / "index.html").read_text()
    for bad, message in [(tmp_path / "nowhere", "no scaling.json"), (study / "scaling.png", "not a scaling.json")]:
        refused = runner.invoke(
            app, ["leaderboard", str(tmp_path / "res" / "run.json"), "--out", str(site), "--scaling", str(bad)]
        )
        assert refused.exit_code == 2 and message in refused.output
