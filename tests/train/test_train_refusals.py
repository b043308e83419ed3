"""Training refuses what it cannot do as asked: foreign output folders, meaningless configs, resumes that differ."""

from __future__ import annotations

from pathlib import Path

import pytest
from trainkit import HERE, row, tiny_config, training_snapshot, write_config
from typer.testing import CliRunner

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from lookbench._util.outfolder import read_marker  # noqa: E402
from lookbench.cli.main import app  # noqa: E402
from lookbench.errors import TrainError  # noqa: E402
from lookbench.snapshot.writer import rows_to_table, write_split  # noqa: E402
from lookbench.train.config import parse_config  # noqa: E402
from lookbench.train.loop import Trainer  # noqa: E402


@pytest.fixture
def train_snap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    return training_snapshot(tmp_path / "train", items=6, views=2)


def quick(snap: Path, **sections: object) -> dict[str, object]:
    """Four steps on the tiny backbone, without validation or guard."""
    data = {"train": {"snapshot": str(snap)}, "validation": None, "guard": {"enabled": False}, "workers": 0}
    base = {"data": data, "runtime": {"threads": 1}, "schedule": {"steps": 4, "warmup_steps": 0}}
    return tiny_config(snap, snap, **{**base, **sections})


def one_line_exit_2(result: object, *fragments: str) -> None:
    output = " ".join(result.output.split())  # type: ignore[attr-defined]
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert "Traceback" not in result.output and all(f in output for f in fragments), result.output  # type: ignore[attr-defined]


def test_an_output_folder_holding_the_users_files_is_refused_and_left_alone(train_snap: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.md").write_text("my notes\n")
    (out / "config.json").write_text('{"mine": true}\n')
    (out / "notes.txt").write_text("keep\n")
    config = write_config(tmp_path / "c.yaml", quick(train_snap))
    result = CliRunner().invoke(app, ["train", str(config), "--out", str(out), "--no-progress"])
    one_line_exit_2(result, str(out), "not marked as a lookbench run folder")
    assert (out / "README.md").read_text() == "my notes\n" and (out / "config.json").read_text() == '{"mine": true}\n'
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "config.json", "notes.txt"]
    overwrite = CliRunner().invoke(app, ["train", str(config), "--out", str(out), "--overwrite", "--no-progress"])
    assert overwrite.exit_code == 0, overwrite.output  # the run's own files are replaced, nothing else
    assert (out / "notes.txt").read_text() == "keep\n" and (out / "model.json").is_file()
    assert "notes.txt" not in read_marker(out).files  # type: ignore[union-attr]


def test_a_run_folder_is_resumed_and_an_empty_one_is_used(train_snap: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    cfg = parse_config(quick(train_snap), "test")
    Trainer(cfg, out, progress=False, say=lambda _m: None).run()
    assert (out / "model.json").is_file() and (out / "README.md").is_file()
    with pytest.raises(TrainError, match="already holds a trained model"):
        Trainer(cfg, out, progress=False, say=lambda _m: None).run()
    Trainer(cfg, out, overwrite=True, progress=False, say=lambda _m: None).run()  # its own files: replaced


def test_strict_with_the_guard_off_is_refused_before_work(train_snap: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", quick(train_snap))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", str(config), "--out", str(out), "--strict", "--no-progress"])
    one_line_exit_2(result, "--strict", "data.guard.enabled")
    assert not out.exists()


def test_one_item_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    snap = training_snapshot(tmp_path / "train", items=1, views=4)
    cfg = parse_config(quick(snap), "test")
    with pytest.raises(TrainError, match=r"1 item\(s\).*at least 2"):
        Trainer(cfg, tmp_path / "run", progress=False, say=lambda _m: None).run()
    assert not (tmp_path / "run" / "model.json").exists()


@pytest.mark.parametrize("device", ["tpu", "cuda:x", "gpu"])
def test_unknown_devices_are_config_errors(train_snap: Path, device: str) -> None:
    with pytest.raises(TrainError, match=rf"runtime\.device: .*'{device}': expected auto, cpu, cuda"):
        parse_config(quick(train_snap, runtime={"device": device}), "c.yaml")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_a_gpu_is_refused_before_work(train_snap: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", quick(train_snap, runtime={"device": "cuda", "threads": 1}))
    result = CliRunner().invoke(app, ["train", str(config), "--out", str(tmp_path / "run"), "--no-progress"])
    one_line_exit_2(result, "runtime.device: cuda", "0 CUDA GPU(s)")
    assert not (tmp_path / "run").exists()


def interrupted(cfg: object, out: Path) -> None:
    """A run that stopped after its step-2 checkpoint (its later checkpoints and export removed)."""
    import shutil

    Trainer(cfg, out, progress=False, say=lambda _m: None).run()  # type: ignore[arg-type]
    for later in sorted((out / "checkpoints").glob("step-*"))[1:]:
        shutil.rmtree(later)
    for name in ("model.json", "model.safetensors", "README.md"):
        (out / name).unlink()


@pytest.mark.parametrize(
    ("change", "rows"),
    [
        ("an item gained", [(i, v) for i in range(7) for v in range(2)]),
        ("only images", [(i, v + 5) for i in range(6) for v in range(2)]),  # same items and labels, other photos
    ],
)
def test_resume_after_the_training_data_changed_is_refused(
    train_snap: Path, tmp_path: Path, change: str, rows: list[tuple[int, int]]
) -> None:
    cfg = parse_config(quick(train_snap), "test")
    interrupted(cfg, tmp_path / "run")
    table = rows_to_table([row(f"train-{item}", item, view) for item, view in rows])
    write_split(table, train_snap / "real_studio_flat" / "gallery.parquet")
    with pytest.raises(TrainError, match="training data changed since this checkpoint"):
        Trainer(cfg, tmp_path / "run", progress=False, say=lambda _m: None).run()


def test_resume_with_unchanged_data_continues(train_snap: Path, tmp_path: Path) -> None:
    cfg = parse_config(quick(train_snap), "test")
    interrupted(cfg, tmp_path / "run")
    said: list[str] = []
    result = Trainer(cfg, tmp_path / "run", progress=False, say=said.append).run()
    assert result.resumed_from == 2 and result.steps == 4


def test_a_checkpoint_missing_its_rank_file_says_so(train_snap: Path, tmp_path: Path) -> None:
    cfg = parse_config(quick(train_snap), "test")
    interrupted(cfg, tmp_path / "run")
    checkpoint = tmp_path / "run" / "checkpoints" / "step-000000002"
    (checkpoint / "rank-00000-of-00001.pt").unlink()
    with pytest.raises(TrainError, match="incomplete, rank-00000-of-00001.pt is missing") as error:
        Trainer(cfg, tmp_path / "run", progress=False, say=lambda _m: None).run()
    assert "number of processes" not in str(error.value)
