"""Hostile training configs: unknown keys, bad values, wrong types, missing files give one clear error line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from trainkit import tiny_config, write_config
from typer.testing import CliRunner

from lookbench._util.configfile import apply_override
from lookbench.cli.main import app
from lookbench.errors import LookBenchError, TrainError
from lookbench.train.config import load_config


def config_file(tmp_path: Path, **sections: object) -> Path:
    return write_config(tmp_path / "train.yaml", tiny_config(tmp_path / "t", tmp_path / "e", **sections))


def test_a_valid_config_loads_with_defaults(tmp_path: Path) -> None:
    cfg = load_config(config_file(tmp_path))
    assert cfg.loss.identity.kind == "arcface" and cfg.batch.size == 8
    assert cfg.data.train[0].parts == ["*"] and cfg.data.guard.enabled
    bare = load_config(
        write_config(tmp_path / "bare.yaml", {"data": {"train": {"snapshot": "x"}}, "schedule": {"steps": 1}})
    )
    assert bare.data.validation is not None and bare.data.validation.snapshot == "validation"
    assert bare.data.guard.against == ["default"] and not bare.data.validation.allow_evaluation_snapshot
    assert cfg.fingerprint() == load_config(config_file(tmp_path)).fingerprint()


def test_training_takes_the_evaluation_precision_names(tmp_path: Path) -> None:
    assert load_config(config_file(tmp_path)).runtime.precision == "fp32"  # the default is unchanged
    for name in ("auto", "fp32", "tf32", "bf16"):
        assert load_config(config_file(tmp_path, runtime={"precision": name})).runtime.precision == name


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        ({"optimiser": {"lr": 1}}, "optimiser: unknown key"),
        ({"optim": {"lr": -1}}, "optim.lr: Input should be greater than 0"),
        ({"optim": {"lr": "fast"}}, "optim.lr: Input should be a valid number"),
        ({"loss": {"identity": {"kind": "triplet"}}}, "loss.identity.kind"),
        ({"loss": {"identity": {"weight": 0}, "category": {}, "attributes": {}}}, "every loss weight is 0"),
        ({"loss": {"identity": {"sample_rate": 1.5}}}, "loss.identity.sample_rate"),
        ({"batch": {"size": 10, "m_per_class": 4}}, "size 10 is not a multiple of m_per_class 4"),
        ({"schedule": {"steps": 5, "epochs": 1}}, "exactly one of steps and epochs"),
        ({"schedule": {"steps": None}}, "exactly one of steps and epochs"),
        ({"augment": {"scale": [0.9, 0.2]}}, "augment.scale"),
        ({"model": {"embedding_dim": 0}}, "model.embedding_dim"),
        ({"export": {"name": "../escape"}}, "export.name"),
        ({"runtime": {"precision": "fp16"}}, "runtime.precision: Value error, fp16 needs loss scaling"),
        ({"runtime": {"precision": "half"}}, "runtime.precision: Input should be 'auto', 'fp32', 'tf32', 'bf16' or"),
        ({"data": {"train": [], "workers": 0}}, "data.train"),
        ({"data": {"train": {"snapshot": "x", "parts": ["query"]}}}, "expected SUBSET/SPLIT"),
        ({"data": {"train": {"snapshot": "x", "fraction": 0}}}, "data.train.0.fraction"),
        (
            {"data": {"train": {"snapshot": "x"}, "validation": {"snapshot": "default"}, "guard": {}}},
            "data.validation.snapshot 'default' is an evaluation snapshot the run is reported on (data.guard.against)",
        ),
    ],
)
def test_bad_configs_name_the_field(tmp_path: Path, sections: dict[str, object], message: str) -> None:
    path = config_file(tmp_path, **sections)
    if "optimiser" in sections:
        data = yaml.safe_load(path.read_text())
        data["optimiser"] = sections["optimiser"]
        path.write_text(yaml.safe_dump(data))
    with pytest.raises(TrainError) as error:
        load_config(path)
    assert str(path) in str(error.value) and message in str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "expected a mapping of config sections"),
        ("seed: [unclosed\n", "not valid YAML: line 2"),
        ("", "data: Field required"),
    ],
)
def test_malformed_yaml(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(LookBenchError, match=message):
        load_config(path)


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(TrainError, match="training config not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("seed: 1 # caf\xe9\n".encode("latin-1"))
    with pytest.raises(LookBenchError, match="latin1.yaml: line 1: not UTF-8"):
        load_config(bad)
    twice = tmp_path / "twice.yaml"
    twice.write_text("seed: 1\nschedule: {steps: 3}\nseed: 2\n")
    with pytest.raises(LookBenchError, match=r"twice.yaml: .*duplicate key 'seed' \(first on line 1, again on line 3"):
        load_config(twice)


def test_overrides(tmp_path: Path) -> None:
    cfg = load_config(config_file(tmp_path), ["optim.lr=3e-4", "loss.identity.kind=cosface", "schedule.steps=9"])
    assert cfg.optim.lr == 3e-4 and cfg.loss.identity.kind == "cosface" and cfg.schedule.steps == 9
    for bad in ["optim.lr", "=3", "optim..lr=1"]:
        with pytest.raises(TrainError, match="expected KEY.PATH=VALUE"):
            apply_override({}, bad, TrainError)
    with pytest.raises(TrainError, match="seed is not a section"):
        apply_override({"seed": 1}, "seed.x=2", TrainError)
    with pytest.raises(TrainError, match="optim.momentum: unknown key"):
        load_config(config_file(tmp_path), ["optim.momentum=0.9"])


def test_cli_reports_config_errors_without_traceback(tmp_path: Path) -> None:
    path = config_file(tmp_path, optim={"lr": -1})
    result = CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "optim.lr" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["train", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "training config not found" in result.output
    result = CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path / "run"), "--set", "oops"])
    assert result.exit_code == 2 and "expected KEY.PATH=VALUE" in result.output
