"""Result files under hostile use: windows, concurrent writers, swapped pairs, odd model names, file modes."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from filelock import FileLock
from hostilekit import clean_error, evaluate, invoke, make_snapshot, vectors, write_vectors


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_window_goes_into_the_default_name_and_title(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = make_snapshot(tmp_path / "s")
    emb = write_vectors(tmp_path / "emb", vectors())
    monkeypatch.chdir(tmp_path)
    assert invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--resamples", "10").exit_code == 0
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--resamples", "10", "--since", "2026-03-01")
    assert run.exit_code == 0, run.output
    assert "window since 2026-03-01" in " ".join(run.output.split())
    full = json.loads((tmp_path / "results" / "emb__v20260301__main.json").read_text())
    windowed = json.loads((tmp_path / "results" / "emb__v20260301__main__since-2026-03-01.json").read_text())
    assert full["config"]["window"] is None
    assert windowed["config"]["window"]["since"] == "2026-03-01"


def test_a_pair_from_two_runs_is_refused_everywhere(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    out, other = tmp_path / "res" / "run.json", tmp_path / "res" / "other.json"
    first = evaluate(snap, write_vectors(tmp_path / "a", vectors()), out)
    table = out.with_name("run.per_query.parquet")
    assert first["per_query_file"] == table.name and len(first["per_query_sha256"]) == 64
    kept = tmp_path / "first.parquet"
    shutil.copy(table, kept)
    worse = {key: np.roll(array, 1, axis=0) for key, array in vectors().items()}
    evaluate(snap, write_vectors(tmp_path / "b", worse), out)  # a second run writes the same name
    evaluate(snap, write_vectors(tmp_path / "c", vectors()), other)
    shutil.copy(kept, table)  # ... and the first run's per-query file comes back beside the second JSON
    for args in (
        ["tables", str(out)],
        ["leaderboard", str(out), "--out", str(tmp_path / "site")],
        ["report", str(out), "--out", str(tmp_path / "report")],
        ["compare", str(out), str(other), "--resamples", "10"],
    ):
        clean_error(invoke(*args), str(table), "sha256 differs")


def test_writers_of_one_name_take_turns(tmp_path: Path) -> None:
    from lookbench.embeddings.precomputed import PrecomputedEmbeddings
    from lookbench.evaluation.runner import EvalSettings
    from lookbench.evaluation.runner import evaluate as run_eval
    from lookbench.results.io import LOCK_NAME, load_with_per_query, save_run
    from lookbench.snapshot import open_snapshot

    output = run_eval(
        open_snapshot(make_snapshot(tmp_path / "s")),
        PrecomputedEmbeddings(write_vectors(tmp_path / "e", vectors())),
        EvalSettings(resamples=10),
    )
    target = tmp_path / "res" / "run.json"
    target.parent.mkdir()
    writer = threading.Thread(target=save_run, args=(output.result, output.per_query, target))
    with FileLock(str(target.parent / LOCK_NAME)):
        writer.start()
        time.sleep(0.5)
        assert not target.exists() and not target.with_name("run.per_query.parquet").exists()
    writer.join(timeout=30)
    result, table = load_with_per_query(target)
    assert table is not None and table.num_rows == 4 and result.per_query_sha256


def test_per_query_file_must_stay_beside_the_result(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    out = tmp_path / "res" / "run.json"
    data = evaluate(snap, write_vectors(tmp_path / "e", vectors()), out)
    shutil.copy(out.with_name("run.per_query.parquet"), tmp_path / "elsewhere.parquet")
    data["per_query_file"] = "../elsewhere.parquet"
    out.write_text(json.dumps(data))
    clean_error(invoke("tables", str(out)), "per_query_file '../elsewhere.parquet' must be a file name beside")


def test_files_get_the_umask_mode(tmp_path: Path, umask_022: None) -> None:
    from lookbench.snapshot.manifest import write_manifest

    snap = make_snapshot(tmp_path / "s")
    write_manifest(snap)
    out = tmp_path / "res" / "run.json"
    evaluate(snap, write_vectors(tmp_path / "e", vectors()), out)
    assert invoke("tables", str(out), "--out", str(tmp_path / "tables")).exit_code == 0
    assert invoke("leaderboard", str(out), "--out", str(tmp_path / "site")).exit_code == 0
    assert invoke("report", str(out), "--out", str(tmp_path / "report")).exit_code == 0
    written = [
        *snap.rglob("*.parquet"),
        snap / "MANIFEST.json",
        out,
        out.with_name("run.per_query.parquet"),
        *(tmp_path / "tables").iterdir(),
        *(tmp_path / "site").iterdir(),
        *(tmp_path / "report").iterdir(),
    ]
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode)) for p in written if p.is_file()}
    assert set(modes.values()) == {"0o644"}, modes


def test_model_names_become_safe_file_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = make_snapshot(tmp_path / "s")
    hostile = write_vectors(tmp_path / "hostile", vectors(), card={"name": "../../../evil"})
    plain = write_vectors(tmp_path / "work" / "my-embeddings", vectors())
    monkeypatch.chdir(tmp_path / "work")
    for emb in (hostile, plain):
        run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--resamples", "10")
        assert run.exit_code == 0, run.output
    names = sorted(p.name for p in (tmp_path / "work" / "results").iterdir() if p.name != ".lookbench-results.lock")
    assert names == [
        "evil__v20260301__main.json",
        "evil__v20260301__main.per_query.parquet",
        "my-embeddings__v20260301__main.json",
        "my-embeddings__v20260301__main.per_query.parquet",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hostile", "s", "work"]


def test_markdown_tables_escape_html(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    out = tmp_path / "run.json"
    name = '<img src=x onerror="alert(1)">|[/x]'
    evaluate(snap, write_vectors(tmp_path / "e", vectors(), card={"name": name}), out)
    run = invoke("tables", str(out), "--out", str(tmp_path / "t"))
    assert run.exit_code == 0, run.output
    markdown = (tmp_path / "t" / "tables.md").read_text()
    assert "<img" not in markdown and '&lt;img src=x onerror="alert(1)"&gt;\\|\\[/x\\]' in markdown
    assert pq.read_table(out.with_name("run.per_query.parquet")).num_rows == 4
