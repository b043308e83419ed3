"""`lookbench eval --search/--precision/--decode`: backends in the result file, faiss recall, clear flag errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench.cli.main import app
from lookbench.search.select import cuda_present

runner = CliRunner()


def _snapshot_and_vectors(root: Path, noise: int = 300) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    queries = [make_row(f"q{i}", "dress", f"c{i % 3}") for i in range(12)]
    gallery = [make_row(f"q{i}", "dress", f"c{i % 3}") for i in range(12)]
    pool = [make_row(f"n{i}", "top", "red") for i in range(noise)]
    snap = write_snapshot(
        root / "snap", {"real_studio_flat": {"query": queries, "gallery": gallery}, "noise": {"gallery": pool}}
    )
    vectors = root / "vectors"
    g = rng.normal(size=(12, 16)).astype(np.float32)
    arrays = {
        "real_studio_flat/query": g + 0.3 * rng.normal(size=(12, 16)).astype(np.float32),
        "real_studio_flat/gallery": g,
        "noise/gallery": np.tile(rng.normal(size=(5, 16)).astype(np.float32), (noise // 5, 1)),  # exact ties
    }
    for key, array in arrays.items():
        (vectors / key).parent.mkdir(parents=True, exist_ok=True)
        np.save(vectors / f"{key}.npy", array)
    return snap, vectors


def _eval(snap: Path, vectors: Path, out: Path, *flags: str) -> dict:  # type: ignore[type-arg]
    args = ["eval", "-s", str(snap), "-m", f"embeddings:{vectors}", "-o", str(out), "--resamples", "20", *flags]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(out.read_text()))


def test_auto_search_is_exact_without_cuda_and_recorded(tmp_path: Path) -> None:
    snap, vectors = _snapshot_and_vectors(tmp_path)
    data = _eval(snap, vectors, tmp_path / "auto.json")
    expected = "torch" if cuda_present() else "exact"
    assert data["config"]["search_backend"] == expected
    assert data["config"]["search"]["backend"] == expected and data["config"]["search"]["recall"] is None


def test_faiss_records_recall_against_exact(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    snap, vectors = _snapshot_and_vectors(tmp_path)
    exact = _eval(snap, vectors, tmp_path / "exact.json", "--search", "exact")
    flat = _eval(snap, vectors, tmp_path / "flat.json", "--search", "faiss")
    search = flat["config"]["search"]
    assert search["backend"] == "faiss" and search["index"] == "flat" and search["recall_queries"] == 500
    recall = search["recall"]["real_studio_flat"]
    assert set(recall) == {"recall@1", "recall@5", "recall@10", "recall@20"}
    assert all(0.0 <= value <= 1.0 for value in recall.values()) and recall["recall@1"] == 1.0
    assert flat["metrics"]["overall"]["fine_recall@1"] == exact["metrics"]["overall"]["fine_recall@1"]


@pytest.mark.torch
def test_torch_search_writes_the_same_rankings_as_exact(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    import pyarrow.parquet as pq

    snap, vectors = _snapshot_and_vectors(tmp_path)
    _eval(snap, vectors, tmp_path / "exact.json", "--search", "exact")
    data = _eval(snap, vectors, tmp_path / "torch.json", "--search", "torch")
    assert data["config"]["search"]["backend"] == "torch"
    a = pq.read_table(tmp_path / "exact.per_query.parquet")
    b = pq.read_table(tmp_path / "torch.per_query.parquet")
    for column in ("topk_rows", "topk_scores", "fine"):
        assert a[column].to_pylist() == b[column].to_pylist()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--search", "annoy"], "--search: expected one of auto, exact, torch, faiss"),
        (["--precision", "int4"], "--precision: expected one of auto, fp32, tf32, bf16, fp16"),
        (["--decode", "gpu"], "--decode: expected one of auto, cpu, device"),
        (["--batch-size", "0"], "--batch-size"),
    ],
)
def test_bad_flags_are_one_line_errors(tmp_path: Path, flags: list[str], message: str) -> None:
    snap, vectors = _snapshot_and_vectors(tmp_path, noise=5)
    result = runner.invoke(app, ["eval", "-s", str(snap), "-m", f"embeddings:{vectors}", *flags])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
