"""End-to-end training runs on a tiny backbone: export + eval, ONNX, resume after a kill, DDP on CPU (gloo)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from trainkit import HERE, eval_snapshot, tiny_config, training_snapshot, write_config
from typer.testing import CliRunner

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from tinynet import KILL_ENV, TinyNet  # noqa: E402

from lookbench.cli.main import app  # noqa: E402
from lookbench.results.io import load_result  # noqa: E402
from lookbench.train.config import parse_config  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def snapshots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(HERE))
    return training_snapshot(tmp_path / "train", items=12, views=3), eval_snapshot(tmp_path / "eval")


def run_cli(args: list[str], tmp_path: Path, extra_env: dict[str, str] | None = None, module: bool = True):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)]),
        "LOOKBENCH_CACHE": str(tmp_path / "cache"),
        **(extra_env or {}),
    }
    command = [sys.executable, "-m", "lookbench.cli.main", *args] if module else args
    return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def unguarded_config(train_snap: Path, workers: int, **sections: object) -> dict[str, object]:
    """The tiny config without validation or guard (what these tests compare is the training itself)."""
    data = {"train": {"snapshot": str(train_snap)}, "validation": None, "guard": {"enabled": False}, "workers": workers}
    return tiny_config(train_snap, train_snap, data=data, runtime={"threads": 1}, **sections)


def weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_train_exports_a_model_that_eval_runs_with_its_card(snapshots: tuple[Path, Path], tmp_path: Path) -> None:
    from lookbench.train.loop import Trainer

    train_snap, eval_snap = snapshots
    cfg = parse_config(tiny_config(train_snap, eval_snap, export={"onnx": True}), "test")
    out = tmp_path / "runs" / "tiny"
    result = Trainer(cfg, out, progress=False, say=lambda _m: None).run()
    assert result.steps == 6 and result.images == 36 and result.items == 12
    info = json.loads((out / "model.json").read_text())
    assert info["card"]["training_cutoff"] == "2026-02-12"
    assert info["card"]["training_data"] == ["v20260301", "test-shop"]
    assert info["training"]["guard"]["dropped"] == 0 and info["validation"][-1]["step"] == 6
    validated = {"location": str(eval_snap), "snapshot": "v20260601", "evaluation_snapshot_allowed": True}
    assert info["training"]["validated_on"] == validated
    card = (out / "README.md").read_text()
    assert "- Validated on: v20260601 (an evaluation snapshot, explicitly allowed)" in card
    assert "Left out of" not in card and info["training"]["sources"][0]["dropped_categories"] == []
    (overlap,) = info["training"]["guard"]["evaluation_overlap"]
    assert overlap["labels"]["queries"] == 6 and overlap["near_duplicates"] == 0
    # the queries behind the counts: the kit gives every item one of 3 label sets by item number, so each of the 6
    # queries' sets is held by a training item (identical, hence strict); colours never vary within a design
    (named,) = json.loads((out / "overlap_queries.json").read_text())["snapshots"]
    every = [["real_studio_flat", row, f"eval-{row}"] for row in range(6)]
    found = {name: [[q["subset"], q["row"], q["item_id"]] for q in refs] for name, refs in named["classes"].items()}
    assert found == {
        "identical": every,
        "same_design_other_colour": [],
        "strict_fine_match": every,
        "near_duplicate_pixels": [],
    }
    assert [json.loads(line)["step"] for line in (out / "train.jsonl").read_text().splitlines()][:3] == [1, 2, 3]
    assert (out / "validation" / "step-000000006.json").is_file()
    # validation reports the gain with and without the noise pool, and how often the top-1 is a distractor
    quiet = load_result(out / "validation" / "step-000000006__noise-none.json")
    assert quiet.config.noise == "none"
    reported = info["validation"][-1]["metrics"]
    assert reported["fine_recall@1__noise-none"]["value"] == quiet.metrics["overall"]["fine_recall@1"].value
    assert 0 <= reported["distractor_share@1"]["value"] <= 1

    runner = CliRunner()
    target = tmp_path / "res" / "tiny.json"
    cli = runner.invoke(app, ["eval", "-s", str(eval_snap), "-m", f"trained:{out}", "-o", str(target)])
    assert cli.exit_code == 0, cli.output
    saved = load_result(target)
    assert saved.model.name == "tiny" and saved.model.meta.training_cutoff == "2026-02-12"
    validated = load_result(out / "validation" / "step-000000006.json")
    assert saved.metrics["overall"]["fine_recall@1"].value == validated.metrics["overall"]["fine_recall@1"].value

    onnx_target = tmp_path / "res" / "tiny-onnx.json"
    cli = runner.invoke(
        app, ["eval", "-s", str(eval_snap), "-m", f"trained:{out}?runtime=onnx", "-o", str(onnx_target)]
    )
    assert cli.exit_code == 0, cli.output
    from lookbench.results.per_query import read_per_query

    torch_ids = read_per_query(target.with_name("tiny.per_query.parquet")).column("topk_rows").to_pylist()
    onnx_ids = read_per_query(onnx_target.with_name("tiny-onnx.per_query.parquet")).column("topk_rows").to_pylist()
    assert [ids[:1] for ids in torch_ids] == [ids[:1] for ids in onnx_ids]

    same = tiny_config(train_snap, eval_snap, export={"onnx": True})
    again = runner.invoke(app, ["train", str(write_config(tmp_path / "c.yaml", same)), "--out", str(out)])
    assert again.exit_code == 2 and "already holds a trained model" in again.output
    other = runner.invoke(
        app, ["train", str(write_config(tmp_path / "d.yaml", tiny_config(train_snap, eval_snap))), "--out", str(out)]
    )
    assert other.exit_code == 2 and "holds a train run of another config" in other.output


def test_the_card_lists_the_categories_its_training_release_left_out(
    snapshots: tuple[Path, Path], tmp_path: Path
) -> None:
    from lookbench.train.loop import Trainer

    train_snap, _ = snapshots
    recorded = {"exhausted_categories": "drop", "dropped_categories": ["bag", "heels"]}
    (train_snap / "synth_manifest.json").write_text(json.dumps(recorded))
    cfg = parse_config(unguarded_config(train_snap, workers=0, schedule={"steps": 1}), "test")
    out = tmp_path / "runs" / "dropped"
    Trainer(cfg, out, progress=False, say=lambda _m: None).run()
    (source,) = json.loads((out / "model.json").read_text())["training"]["sources"]
    assert source["dropped_categories"] == ["bag", "heels"]
    lines = [line for line in (out / "README.md").read_text().splitlines() if "Left out" in line]
    expected = "- Left out of v20260301 (every design excluded): bag, heels; the model never saw them in training"
    assert lines == [expected]


@pytest.mark.slow
def test_resume_after_a_kill_equals_an_uninterrupted_run_bitwise(snapshots: tuple[Path, Path], tmp_path: Path) -> None:
    train_snap, eval_snap = snapshots
    config = unguarded_config(
        train_snap,
        workers=2,
        optim={"accumulation": 2, "lr": 0.01},
        loss={
            "identity": {"kind": "arcface", "sample_rate": 0.5},
            "category": {"weight": 0.5},
            "attributes": {"weight": 0.5},
        },
        schedule={"steps": 7, "warmup_steps": 2},
        checkpoint={"every_steps": 2, "keep": 1},
    )
    path = write_config(tmp_path / "resume.yaml", config)
    whole = run_cli(["train", str(path), "--out", "whole", "--no-progress"], tmp_path)
    assert whole.returncode == 0, whole.stderr
    # forward 7 is the first micro-batch of step 4 (two per step): killed after the step-2 checkpoint, mid-step
    killed = run_cli(["train", str(path), "--out", "killed", "--no-progress"], tmp_path, {KILL_ENV: "7"})
    assert killed.returncode == -9, killed.stderr
    assert [p.name for p in (tmp_path / "killed" / "checkpoints").iterdir()] == ["step-000000002"]
    changed = run_cli(["train", str(path), "--out", "killed", "--set", "optim.lr=0.02"], tmp_path)
    assert changed.returncode == 2 and "holds a train run of another config" in changed.stderr
    resumed = run_cli(["train", str(path), "--out", "killed", "--no-progress"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert re.search(r"resuming\s+from\s+step\s+2", resumed.stdout), resumed.stdout
    a, b = weights(tmp_path / "whole"), weights(tmp_path / "killed")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    logs = [
        [
            {k: v for k, v in json.loads(line).items() if k.startswith("loss")}
            for line in (tmp_path / run / "train.jsonl").read_text().splitlines()
        ]
        for run in ("whole", "killed")
    ]
    assert logs[0] == logs[1] and len(logs[0]) == 7


@pytest.mark.slow
def test_two_process_ddp_on_cpu_equals_one_process(snapshots: tuple[Path, Path], tmp_path: Path) -> None:
    train_snap, eval_snap = snapshots
    base = unguarded_config(
        train_snap,
        workers=0,
        model={"backbone": "python:tinynet:make_plain", "embedding_dim": 8},
        schedule={"steps": 4, "warmup_steps": 1},
        checkpoint={"every_steps": 4},
    )
    one = write_config(tmp_path / "one.yaml", {**base, "optim": {**base["optim"], "accumulation": 2}})
    two = write_config(tmp_path / "two.yaml", base)
    single = run_cli(["train", str(one), "--out", "single", "--no-progress"], tmp_path)
    assert single.returncode == 0, single.stderr
    torchrun = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        "-m",
        "lookbench.cli.main",
        "train",
        str(two),
        "--out",
        "ddp",
        "--no-progress",
    ]
    ddp = run_cli(torchrun, tmp_path, module=False)
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    assert re.search(r"2\s+process\(es\)", ddp.stdout), ddp.stdout
    a, b = weights(tmp_path / "single"), weights(tmp_path / "ddp")
    assert a.keys() == b.keys()
    for key in a:
        assert np.allclose(a[key], b[key], atol=2e-5), (key, float(np.abs(a[key] - b[key]).max()))
    initial = weights_at_init(parse_config(base, "ddp").seed, "python:tinynet:make_plain", TinyNet.feature_dim, 8)
    assert initial.keys() == a.keys()
    assert any(not np.allclose(a[k], initial[k], atol=1e-3) for k in a)  # training moved the weights
    other = weights_at_init(parse_config(base, "ddp").seed + 1, "python:tinynet:make_plain", TinyNet.feature_dim, 8)
    # ... from these initial weights: four small steps stay nearer to them than another seed's draw is
    assert all(np.abs(a[k] - initial[k]).sum() < np.abs(other[k] - initial[k]).sum() for k in a if "bias" not in k)
    shards = sorted(p.name for p in (tmp_path / "ddp" / "checkpoints" / "step-000000004").iterdir())
    assert shards == ["main.pt", "rank-00000-of-00002.pt", "rank-00001-of-00002.pt"]
    wrong = run_cli(["train", str(two), "--out", "ddp"], tmp_path)
    assert wrong.returncode == 2


def weights_at_init(seed: int, backbone: str, feature_dim: int, dim: int) -> dict[str, np.ndarray]:
    """The exported model's weights before the first step: the trainer seeds torch, builds the backbone and then the
    embedding head, in that order, so re-building them under the same seed gives the run's initial weights."""
    from lookbench.models.backbones import EmbeddingHead, EmbeddingModel
    from lookbench.models.registry import create_backbone

    torch.manual_seed(seed)
    model = EmbeddingModel(create_backbone(backbone), EmbeddingHead(feature_dim, dim))
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
