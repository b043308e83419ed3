"""Every count a user types has a documented limit (lookbench._util.limits) and is refused over it in one line,
before any work; an array those counts size is refused before it is allocated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hostilekit import invoke, make_snapshot, vectors, write_vectors

from lookbench._util.limits import MAX_ALLOCATION, LimitError
from lookbench.metrics.bootstrap import resample_counts


def one_line(result: object, *fragments: str) -> None:
    """Exit 2, no exception besides the exit, one line holding the fragments."""
    output = result.output  # type: ignore[attr-defined]
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), output  # type: ignore[attr-defined]
    text = " ".join(output.split())
    assert len(output.strip().splitlines()) == 1 and all(f in text for f in fragments), output


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("limits")
    return make_snapshot(root / "snap"), write_vectors(root / "emb", vectors())


@pytest.mark.parametrize(
    ("option", "value", "shown"),
    [
        ("--resamples", "10000000000", "resamples: 10,000,000,000 is outside 0..100,000"),
        ("--k", "1,1000000000", "--k: cut-offs must lie in 1..100"),
        ("--processes", "100000000", "--processes: 100,000,000 is outside 1..1,024"),
        ("--shards", "10000000000", "--shards: 10,000,000,000 is outside 1..1,000,000"),
        ("--batch-size", "10000000000", "--batch-size: 10,000,000,000 is outside 0..65,536"),
        ("--workers", "10000000000", "--workers: 10,000,000,000 is outside 0..1,024"),
    ],
)
def test_eval_refuses_a_count_over_its_limit_before_any_work(
    inputs: tuple[Path, Path], tmp_path: Path, option: str, value: str, shown: str
) -> None:
    snap, emb = inputs
    out = tmp_path / "r.json"
    one_line(invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(out), option, value), shown)
    assert not out.exists() and not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("option", "value", "shown"),
    [
        ("--resamples", "10000000000", "--resamples: 10,000,000,000 is outside 0..100,000"),
        ("--permutations", "1000000000", "--permutations: 1,000,000,000 is outside 1..100,000"),
        ("--permutations", "100000", "would take 8.9 GiB, over the 4 GiB limit"),
        ("--per-side", "10000000000", "--per-side: 10,000,000,000 is outside 1..1,000,000"),
        ("--queries", "10000000000", "--queries: 10,000,000,000 is outside 1..1,000,000"),
    ],
)
def test_audit_refuses_a_count_over_its_limit_before_any_work(
    inputs: tuple[Path, Path], tmp_path: Path, option: str, value: str, shown: str
) -> None:
    out = tmp_path / "audit.json"
    one_line(invoke("audit", str(inputs[0]), "--output", str(out), option, value), shown)
    assert not out.exists()


def test_tables_compare_refuses_resamples_over_the_limit(tmp_path: Path) -> None:
    missing = str(tmp_path / "a.json")
    one_line(invoke("compare", missing, missing, "--resamples", "10000000000"), "--resamples", "100,000")


def test_synth_refuses_workers_over_the_limit_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "data"
    one_line(invoke("synth", "--out", str(out), "--size", "tiny", "--workers", "100000"), "--workers", "0..1,024")
    assert not out.exists()


def test_bootstrap_draws_over_the_memory_limit_are_refused_before_allocating() -> None:
    clusters = 20_000
    resamples = MAX_ALLOCATION // (16 * clusters) + 1
    with pytest.raises(LimitError, match=r"bootstrap resamples over 20,000 queries would take 4.0 GiB"):
        resample_counts(np.random.default_rng(0), clusters, resamples)
    assert resample_counts(np.random.default_rng(0), 3, 4).sum() == 12  # 4 resamples of 3 draws each
