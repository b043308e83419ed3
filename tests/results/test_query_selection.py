"""`lookbench compare --only-queries / --exclude-queries`: the paired bootstrap runs on the kept queries only, an
outfit's kept queries stay one resampling unit, and hostile query files are one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from click.testing import Result
from typer.testing import CliRunner

from conftest import make_row, png_bytes, write_snapshot
from lookbench.cli.main import app
from lookbench.errors import ResultError
from lookbench.results.compare import compare_results
from lookbench.results.io import load_with_per_query, save_run
from lookbench.results.query_sets import OverlapQueries, QueryRef, QuerySelection, SnapshotQueries, read_query_set

FINE = "fine_recall@1"
KEYS = [("real_studio_flat", 0), ("real_studio_flat", 1), ("real_streetlook", 0), ("real_streetlook", 1)]
FINE_A = [1.0, 1.0, 1.0, 0.0]
FINE_B = [0.0, 1.0, 0.0, 1.0]
"""Differences A - B: +1, 0, +1, -1; the two street queries are garments of one photo (one outfit)."""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def one_line_error(result: Result, fragment: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
    assert fragment in " ".join(result.output.split()), result.output


def spec() -> dict[str, dict[str, list[dict[str, object]]]]:
    photo = png_bytes(1, 32)
    return {
        "real_studio_flat": {
            "query": [make_row("a", "dress", "red", seed=1), make_row("b", "skirt", "blue", seed=2)],
            "gallery": [make_row("a", "dress", "red", seed=3), make_row("b", "skirt", "blue", seed=4)],
        },
        "real_streetlook": {
            "query": [
                make_row("s1", "pants", "black", raw=photo, seed=5),
                make_row("s2", "shirt", "white", raw=photo, seed=6),
            ],
            "gallery": [make_row("s1", "pants", "black", seed=7), make_row("s2", "shirt", "white", seed=8)],
        },
    }


def with_fine(source: Path, target: Path, values: list[float]) -> Path:
    """`source`'s run saved as `target` with hand-set Fine R@1 per query (in KEYS order)."""
    result, table = load_with_per_query(source)
    assert table is not None
    keys = list(zip(table["subset"].to_pylist(), table["query_row"].to_pylist(), strict=True))
    column = pa.array([values[KEYS.index(k)] for k in keys], pa.float64())
    save_run(result, table.set_column(table.schema.get_field_index(FINE), FINE, column), target)
    return target


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path, str]:
    """Two result files of one snapshot with FINE_A and FINE_B, and the snapshot's content hash."""
    snapshot = write_snapshot(tmp_path, spec(), "v20260301")
    vectors = tmp_path / "vectors"
    eye = np.eye(8, dtype=np.float32)
    for key, rows in {
        "real_studio_flat/query": [0, 1],
        "real_studio_flat/gallery": [0, 1],
        "real_streetlook/query": [2, 3],
        "real_streetlook/gallery": [2, 3],
    }.items():
        (vectors / key).parent.mkdir(parents=True, exist_ok=True)
        np.save(vectors / f"{key}.npy", eye[rows])
    base = tmp_path / "base.json"
    ran = invoke("eval", "-s", str(snapshot), "-m", f"embeddings:{vectors}", "-o", str(base), "--resamples", "10")
    assert ran.exit_code == 0, ran.output
    table = load_with_per_query(base)[1]
    assert table is not None and len(set(table["cluster"].to_pylist()[2:])) == 1  # the street queries: one outfit
    content_hash = json.loads(base.read_text())["snapshot"]["content_hash"]
    return with_fine(base, tmp_path / "a.json", FINE_A), with_fine(base, tmp_path / "b.json", FINE_B), content_hash


def overlap_file(path: Path, content_hash: str) -> Path:
    """studio/1 identical labels; street/1 a strict fine match."""
    refs = {
        "identical": [QueryRef(subset="real_studio_flat", row=1, item_id="b")],
        "same_design_other_colour": [],
        "strict_fine_match": [QueryRef(subset="real_streetlook", row=1, item_id="s2")],
        "near_duplicate_pixels": [],
    }
    entry = SnapshotQueries(
        snapshot="v20260301", content_hash=content_hash, queries=4, labels_compared=True, classes=refs
    )
    OverlapQueries(training=["train"], snapshots=[entry]).save(path)
    return path


def test_excluding_a_query_tests_the_remainder_with_outfits_kept_whole(
    runs: tuple[Path, Path, str], tmp_path: Path
) -> None:
    a, b, content_hash = runs
    listed = tmp_path / "ids.txt"
    listed.write_text("# comment\nreal_studio_flat/1\n\n", encoding="utf-8")
    (test,) = compare_results(a, b, [FINE], 4000, 0, QuerySelection(exclude=listed))[2]
    # remainder: studio/0 (+1, alone) and the outfit {street/0 +1, street/1 -1}: mean diff 1/3 over 3 queries; two
    # units, so each resample is 2/2, (1+0)/3 or 0/4: 1, 1/3 or 0 with P 1/4, 1/2, 1/4 -> 95% interval [0, 1]
    assert test.n == 3
    assert test.mean_a == pytest.approx(2 / 3) and test.mean_b == pytest.approx(1 / 3)
    assert test.diff == pytest.approx(1 / 3)
    assert (test.ci_low, test.ci_high) == (0.0, 1.0)  # split into single queries, a resample could reach -1
    assert test.p_value == pytest.approx(0.5, abs=0.05)
    shown = invoke("compare", str(a), str(b), "--metrics", FINE, "--exclude-queries", str(listed))
    assert shown.exit_code == 0 and "+33.33" in shown.output and "excluding" in shown.output


def test_overlap_file_classes_choose_the_queries(runs: tuple[Path, Path, str], tmp_path: Path) -> None:
    a, b, content_hash = runs
    path = overlap_file(tmp_path / "overlap_queries.json", content_hash)

    def fine(selection: QuerySelection) -> tuple[int, float, float, float]:
        (t,) = compare_results(a, b, [FINE], 500, 0, selection)[2]
        return t.n, t.diff, t.ci_low, t.ci_high

    # every class: studio/1 and street/1 out; studio/0 (+1) and street/0 (+1) remain
    assert fine(QuerySelection(exclude=path)) == (2, 1.0, 1.0, 1.0)
    assert fine(QuerySelection(exclude=path, classes=("identical",)))[:2] == (3, pytest.approx(1 / 3))
    assert fine(QuerySelection(only=path, classes=("strict_fine_match",))) == (1, -1.0, -1.0, -1.0)
    with pytest.raises(ResultError, match="no query remains"):
        fine(QuerySelection(only=path, exclude=path, classes=("identical",)))


def test_hostile_query_files(runs: tuple[Path, Path, str], tmp_path: Path) -> None:
    a, b, content_hash = runs
    args = ("compare", str(a), str(b), "--metrics", FINE)

    def listed(name: str, text: str) -> str:
        (tmp_path / name).write_text(text, encoding="utf-8")
        return str(tmp_path / name)

    one_line_error(invoke(*args, "--exclude-queries", listed("u.txt", "real_studio_flat/9\n")), "not among the 4")
    one_line_error(invoke(*args, "--exclude-queries", listed("n.txt", "hello\n")), "n.txt line 1: 'hello'")
    everything = listed("all.txt", "\n".join(f"{s}/{r}" for s, r in KEYS))
    one_line_error(invoke(*args, "--exclude-queries", everything), "no query remains")
    one_line_error(invoke(*args, "--only-queries", everything, "--exclude-queries", everything), "no query remains")
    one_line_error(invoke(*args, "--exclude-queries", listed("w.json", '{"snapshots": 3}')), "not an overlap_queries")
    one_line_error(invoke(*args, "--exclude-queries", listed("j.json", "{nope")), "not valid JSON")
    one_line_error(invoke(*args, "--exclude-queries", str(tmp_path / "missing.txt")), "query file not found")
    other = overlap_file(tmp_path / "other.json", "f" * 64)
    one_line_error(invoke(*args, "--exclude-queries", str(other)), "no overlap report for snapshot content")
    mine = overlap_file(tmp_path / "mine.json", content_hash)
    one_line_error(invoke(*args, "--exclude-queries", str(mine), "--overlap-class", "colour"), "choose from")
    one_line_error(
        invoke(*args, "--exclude-queries", everything, "--overlap-class", "identical"), "needs an overlap_queries"
    )
    one_line_error(invoke(*args, "--overlap-class", "identical"), "needs --only-queries or --exclude-queries")


def test_a_release_without_labels_offers_only_its_pixel_class(tmp_path: Path) -> None:
    """Label classes of a snapshot whose labels could not be compared are refused, not read as 'no overlap'."""
    near = [QueryRef(subset="real_studio_flat", row=0, item_id="a")]
    entry = SnapshotQueries(
        snapshot="v1",
        content_hash="c" * 64,
        queries=0,
        labels_compared=False,
        classes={
            "identical": [],
            "same_design_other_colour": [],
            "strict_fine_match": [],
            "near_duplicate_pixels": near,
        },
    )
    path = tmp_path / "o.json"
    OverlapQueries(training=["t"], snapshots=[entry]).save(path)
    assert read_query_set(path, ["near_duplicate_pixels"], "c" * 64) == {("real_studio_flat", 0)}
    for classes in ([], ["identical"]):
        with pytest.raises(ResultError, match="no labels to compare"):
            read_query_set(path, classes, "c" * 64)
