"""`train` and `scaling` claim their --out folder by lookbench's marker, never by the names of the files in it; these
refusals come before torch is needed, so they run without it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import Result
from trainkit import eval_snapshot, tiny_config, training_snapshot, write_config
from typer.testing import CliRunner

from conftest import files_under, write_files
from lookbench._util.outfolder import MARKER_NAME, read_marker
from lookbench.cli.main import app
from lookbench.results.query_sets import OVERLAP_QUERIES_FILE
from lookbench.train.guard import GUARD_REPORT

USERS = {
    "README.md": b"# my notes\n",
    "config.json": b'{"mine": true}\n',
    "train.jsonl": b'{"step": "mine"}\n',
    "guard.json": b'{"mine": 1}\n',
    "scaling.json": b"{}\n",
    "cells/mine.txt": b"mine\n",
}


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    train, evaluation = training_snapshot(tmp_path / "train", items=6, views=2), eval_snapshot(tmp_path / "eval")
    return write_config(tmp_path / "c.yaml", tiny_config(train, evaluation, data={"validation": None}))


def users_folder(path: Path) -> Path:
    """A folder of the user's own files, named like the outputs."""
    return write_files(path, USERS)


def run(*args: str) -> Result:
    return CliRunner().invoke(app, [*args, "--no-progress"] if args[0] == "train" else list(args))


def one_line_exit_2(result: Result, *fragments: str) -> None:
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and all(f in text for f in fragments), result.output


def scaling_config(tmp_path: Path, config: Path) -> Path:
    study = {"train": str(config), "grid": {"fractions": [1.0]}, "evaluate": {"snapshot": str(tmp_path / "eval")}}
    path = tmp_path / "scaling.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


@pytest.mark.parametrize("guard_only", [False, True])
def test_train_refuses_a_folder_of_the_users_files(tmp_path: Path, config: Path, guard_only: bool) -> None:
    out = users_folder(tmp_path / "mine")
    result = run("train", str(config), "--out", str(out), *(["--guard-only"] if guard_only else []))
    one_line_exit_2(result, f"{out}: not empty and not marked as a lookbench run folder", "--overwrite")
    assert files_under(out) == USERS


def test_train_overwrite_replaces_only_the_runs_own_files(tmp_path: Path, config: Path) -> None:
    out = users_folder(tmp_path / "mine")
    result = run("train", str(config), "--out", str(out), "--guard-only", "--overwrite")
    assert result.exit_code == 0, result.output
    after = files_under(out)
    assert after.pop(GUARD_REPORT) != USERS[GUARD_REPORT] and OVERLAP_QUERIES_FILE in after
    assert {k: v for k, v in after.items() if k in USERS} == {k: v for k, v in USERS.items() if k != GUARD_REPORT}
    assert read_marker(out).files == (GUARD_REPORT, OVERLAP_QUERIES_FILE)  # type: ignore[union-attr]


def test_train_refuses_a_run_folder_of_another_config(tmp_path: Path, config: Path) -> None:
    out = tmp_path / "run"
    assert run("train", str(config), "--out", str(out), "--guard-only").exit_code == 0
    kept = files_under(out)
    other = run("train", str(config), "--out", str(out), "--guard-only", "--set", "seed=4")
    one_line_exit_2(other, f"{out}: holds a train run of another config", "--overwrite")
    assert files_under(out) == kept
    forced = run("train", str(config), "--out", str(out), "--guard-only", "--set", "seed=4", "--overwrite")
    assert forced.exit_code == 0, forced.output


def test_train_refuses_a_malformed_marker(tmp_path: Path, config: Path) -> None:
    out = users_folder(tmp_path / "mine")
    (out / MARKER_NAME).write_text("not json\n")
    for extra in ([], ["--overwrite"]):
        result = run("train", str(config), "--out", str(out), "--guard-only", *extra)
        one_line_exit_2(result, f"{out / MARKER_NAME}: not a lookbench run marker")
    assert files_under(out) == {**USERS, MARKER_NAME: b"not json\n"}


def test_train_takes_a_folder_marked_by_an_earlier_version_as_its_own(tmp_path: Path, config: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lookbench-train").write_text("lookbench train run folder\n")
    (out / "train.jsonl").write_text("{}\n")
    assert run("train", str(config), "--out", str(out), "--guard-only").exit_code == 0
    assert read_marker(out).command == "train"  # type: ignore[union-attr]


def test_scaling_refuses_a_folder_of_the_users_files(tmp_path: Path, config: Path) -> None:
    out = users_folder(tmp_path / "mine")
    one_line_exit_2(
        run("scaling", str(scaling_config(tmp_path, config)), "--out", str(out)),
        f"{out}: not empty and not marked as a lookbench run folder",
    )
    assert files_under(out) == USERS
    (out / MARKER_NAME).write_text("{}")
    one_line_exit_2(
        run("scaling", str(scaling_config(tmp_path, config)), "--out", str(out)), "not a lookbench run marker"
    )
    assert files_under(out) == {**USERS, MARKER_NAME: b"{}"}


def test_train_overwrite_removes_only_what_the_marker_lists_and_refuses_a_users_folder(tmp_path: Path) -> None:
    from lookbench._util.outfolder import OutputFolderError, claim_output_folder
    from lookbench.train.runfolder import clear_for_overwrite

    out = tmp_path / "run"
    claim = claim_output_folder(out, "train")
    write_files(out, {"checkpoints/step-1/main.pt": b"run\n", "train.jsonl": b"run\n"})
    claim.record()
    write_files(out, {"validation/mine.txt": b"mine\n", "model.json": b"mine\n"})
    names = ("checkpoints", "train.jsonl", "validation", "model.json")
    before = files_under(out)
    with pytest.raises(OutputFolderError, match="validation: exists and .* does not list it"):
        clear_for_overwrite(out, names)
    assert files_under(out) == before
    (out / "validation" / "mine.txt").unlink()
    (out / "validation").rmdir()
    clear_for_overwrite(out, names)
    assert sorted(files_under(out)) == [MARKER_NAME, "model.json"] and (out / "model.json").read_bytes() == b"mine\n"
