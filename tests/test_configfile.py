"""Every config file (training, scaling, release) fails in one format: file, what it is, field: problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from lookbench._util.configfile import StrictConfig, load_config_file
from lookbench._util.hashing import json_sha256
from lookbench.errors import ReleaseError, TrainError
from lookbench.release.config import load_config as load_release
from lookbench.train.config import load_config as load_train
from lookbench.train.scaling import load_scaling


class Section(StrictConfig):
    rate: float = 0.5


class Sample(StrictConfig):
    name: str
    section: Section = Section()


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: a\nsection: {rate: x}\n", r"c.yaml: invalid sample config: section.rate: Input should be a valid"),
        ("name: a\nextra: 1\n", r"c.yaml: invalid sample config: extra: unknown key$"),
        ("section: {}\n", r"c.yaml: invalid sample config: name: Field required$"),
        ("- a\n", r"c.yaml: expected a mapping of config sections, got list$"),
        ("name: [a\n", r"c.yaml: not valid YAML: line 2"),
    ],
)
def test_errors_are_one_line_naming_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TrainError, match=message) as caught:
        load_config_file(write(tmp_path, text), Sample, what="sample config", error=TrainError)
    assert "\n" not in str(caught.value)


def test_overrides_apply_before_validation_and_bad_ones_name_the_override(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\n")
    assert load_config_file(path, Sample, ["section.rate=0.25"], what="x").section.rate == 0.25
    with pytest.raises(ReleaseError, match=r"c.yaml: invalid x: section.rate: Input should be a valid number"):
        load_config_file(path, Sample, ["section.rate=high"], what="x", error=ReleaseError)
    with pytest.raises(ReleaseError, match=r"--set 'name\.=1': expected KEY.PATH=VALUE"):
        load_config_file(path, Sample, ["name.=1"], what="x", error=ReleaseError)
    with pytest.raises(ReleaseError, match=r"--set 'name.sub=1': name is not a section"):
        load_config_file(path, Sample, ["name.sub=1"], what="x", error=ReleaseError)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(TrainError, match=r"^sample config not found: .*nothing.yaml$"):
        load_config_file(tmp_path / "nothing.yaml", Sample, what="sample config", error=TrainError)


def test_fingerprint_is_the_sha256_of_the_canonical_json() -> None:
    config = Sample(name="a", section=Section(rate=0.125))
    assert config.fingerprint() == json_sha256({"name": "a", "section": {"rate": 0.125}})
    assert config.fingerprint() != Sample(name="a").fingerprint()


@pytest.mark.parametrize(
    ("load", "error", "what"),
    [
        (load_train, TrainError, "training config"),
        (load_scaling, TrainError, "scaling config"),
        (load_release, ReleaseError, "release config"),
    ],
)
def test_the_three_config_files_share_the_format(tmp_path: Path, load, error, what) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "no_such_key: 1\n")
    with pytest.raises(error, match=rf"c.yaml: invalid {what}: .*no_such_key: unknown key"):
        load(path)
    with pytest.raises(error, match=rf"^{what} not found: "):
        load(tmp_path / "absent.yaml")
