"""`lookbench eval` on a composed subset: methods, tuning, results, per-query table, breakdowns, compare, tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from composedkit import composed_snapshot
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.evaluation.window import rewindow
from lookbench.results.compare import compare_results
from lookbench.results.io import load_with_per_query


def _run(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    return result


def _row(output: str, metric: str) -> list[str]:
    """The cells of `metric`'s row in `lookbench compare`'s table."""
    line = next(line for line in output.splitlines() if f" {metric} " in line)
    return [cell.strip() for cell in line.strip("│ ").split("│")]


def _eval(snap: Path, vectors: Path, out: Path, *extra: str) -> dict[str, Any]:
    result = _run("eval", "-s", str(snap), "-m", f"embeddings:{vectors}", "-o", str(out), "--resamples", "50", *extra)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def task(tmp_path: Path) -> tuple[Path, Path]:
    return composed_snapshot(tmp_path)


def test_image_only_returns_the_look_and_arithmetic_the_change(task: tuple[Path, Path], tmp_path: Path) -> None:
    snap, vectors = task
    image = _eval(snap, vectors, tmp_path / "image.json", "--subsets", "composed", "--compose", "image", "--k", "1,5")
    arith = _eval(snap, vectors, tmp_path / "arith.json", "--subsets", "composed", "--compose", "arithmetic")
    assert image["model"]["name"] == "vectors+image" and arith["model"]["name"] == "vectors+arithmetic"
    assert set(image["metrics"]) == {"composed"}  # no image subset, so no overall
    m = image["metrics"]["composed"]
    assert m["recall@1"]["value"] == 0.0 and m["hard_negative@1"]["value"] == 1.0
    _, table = load_with_per_query(tmp_path / "image.json")
    assert table is not None
    first = table.slice(0, 1).to_pylist()[0]
    # corpus rows: r1 h1 t1 r2 h2 t2 v1 w1, then noise; r1 (the reference) is removed from the first ranking
    assert 0 not in first["topk_rows"]
    # t1 and w1 score the same: the tie rule (a hash of the ids, lookbench.search.ties) puts w1 first
    assert first["topk_scores"][2] == first["topk_scores"][3]
    assert first["topk_item_ids"][:4] == ["v1", "h1", "w1", "t1"]
    assert first["relevant"][:4] == [False, False, True, True]
    assert first["hard_negative"][:4] == [True, True, False, False]
    assert first["item"][:4] == [False, False, False, True]  # t1 is the explicit target
    assert first["num_relevant"] == 2 and first["num_changes"] == 1
    assert first["change_groups"] == ["sleeve length"]
    # AP@5 = (1/3 + 2/4) / min(2, 5)
    assert first["map@5"] == pytest.approx((1 / 3 + 2 / 4) / 2)
    a = arith["metrics"]["composed"]
    assert a["recall@1"]["value"] == 1.0 and a["map@10"]["value"] > m["map@5"]["value"]
    record = arith["model"]["composition"]["subsets"]["composed"]
    assert record["parameter"] == "strength" and record["chosen_on"] == "composed/validation"
    assert record["chosen_by"] == "recall@10" and record["validation_queries"] == 1
    assert record["fit_items"] == 15  # the studio gallery and the noise (labelled bags, in other dimensions)
    assert set(arith["breakdowns"]["composed"]) == {"change_group", "num_changes"}
    assert set(arith["breakdowns"]["composed"]["num_changes"]) == {"1", "2"}
    colour = arith["breakdowns"]["composed"]["change_group"]["colour"]["recall@1"]
    assert colour["n"] == 2 and colour["ci_low"] <= colour["value"] <= colour["ci_high"]

    compared = _run("compare", str(tmp_path / "arith.json"), str(tmp_path / "image.json"), "--metrics", "recall@1")
    assert compared.exit_code == 0, compared.output
    _, _, (paired,) = compare_results(tmp_path / "arith.json", tmp_path / "image.json", ["recall@1"], 50)
    assert paired.diff == pytest.approx(a["recall@1"]["value"] - m["recall@1"]["value"])  # 1.0: every query
    assert paired.n == a["recall@1"]["n"] and _row(compared.output, "recall@1")[3] == f"{100 * paired.diff:+.2f}"
    tables = _run("tables", str(tmp_path / "arith.json"), str(tmp_path / "image.json"), "--metrics", "recall@1,map@5")
    assert tables.exit_code == 0 and "Composed" in tables.output and "vectors+arithmetic" in tables.output


def test_a_run_with_image_and_composed_subsets_keeps_overall_to_the_image_subsets(
    task: tuple[Path, Path], tmp_path: Path
) -> None:
    snap, vectors = task
    data = _eval(snap, vectors, tmp_path / "both.json", "--compose", "image")
    _eval(snap, vectors, tmp_path / "image.json", "--compose", "image", "--subsets", "composed")
    assert set(data["metrics"]) == {"real_studio_flat", "overall", "composed"}
    assert data["metrics"]["overall"]["fine_recall@1"]["n"] == 2
    assert "recall@10" not in data["metrics"]["overall"] and "ndcg@5" not in data["metrics"]["composed"]
    table = pq.read_table(tmp_path / "both.per_query.parquet")
    assert table.num_rows == 6 and {"relevant", "ndcg@5", "map@10"} <= set(table.column_names)
    # the composed subset scores the same whether or not image subsets run beside it: paired difference 0 on its
    # queries, and only they are paired for a composed-only metric
    _, _, (paired,) = compare_results(tmp_path / "both.json", tmp_path / "image.json", ["map@10"], 50)
    assert paired.diff == 0.0 and paired.n == data["metrics"]["composed"]["map@10"]["n"]
    assert paired.mean_a == pytest.approx(data["metrics"]["composed"]["map@10"]["value"])
    compared = _run("compare", str(tmp_path / "both.json"), str(tmp_path / "image.json"), "--metrics", "map@10")
    assert compared.exit_code == 0 and _row(compared.output, "map@10")[-1] == str(paired.n)
    site = _run("leaderboard", str(tmp_path / "both.json"), "--out", str(tmp_path / "site"))
    assert site.exit_code == 0, site.output
    site = _run("leaderboard", str(tmp_path / "image.json"), "--out", str(tmp_path / "site2"))
    # a composed-only run is on the page (tests/publish/site/test_composed_pages.py)
    assert site.exit_code == 0, site.output
    report = _run("report", str(tmp_path / "both.json"), "--out", str(tmp_path / "report"))
    assert report.exit_code == 0, report.output
    result, per_query = load_with_per_query(tmp_path / "both.json")
    assert per_query is not None
    windowed = rewindow(result, per_query, np.datetime64("2020-01-01"), None)
    assert windowed.breakdowns["composed"]["num_changes"]["1"]["recall@1"].n == 3


def test_text_methods_need_a_text_tower(task: tuple[Path, Path], tmp_path: Path) -> None:
    snap, vectors = task
    for method in ("text", "sum"):
        result = _run("eval", "-s", str(snap), "-m", f"embeddings:{vectors}", "-o", str(tmp_path / "x.json"),
                      "--compose", method)  # fmt: skip
        assert result.exit_code == 2 and "needs a two-tower model" in result.output
    result = _run("eval", "-s", str(snap), "-m", f"embeddings:{vectors}", "--compose", "magic")
    assert result.exit_code == 2 and "unknown method 'magic'" in result.output
    listed = _run("composed", "methods")
    assert listed.exit_code == 0 and "arithmetic" in listed.output


def test_a_python_model_with_embed_texts_is_a_two_tower_model(task: tuple[Path, Path], tmp_path: Path) -> None:
    snap, _ = task
    module = tmp_path / "twotower.py"
    module.write_text(
        "import numpy as np\n"
        "class TwoTower:\n"
        "    model_id, revision = 'two-tower', '1'\n"
        "    def embed(self, images):\n"
        "        return np.stack([np.asarray(im.resize((2, 2)), np.float32).ravel() + 1 for im in images])\n"
        "    def embed_texts(self, texts):\n"
        "        return np.stack([np.full(12, 1.0 + len(t), np.float32) for t in texts])\n"
        "def make():\n"
        "    return TwoTower()\n",
        encoding="utf-8",
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        out = tmp_path / "sum.json"
        result = _run("eval", "-s", str(snap), "-m", "python:twotower:make", "--subsets", "composed",
                      "-o", str(out), "--resamples", "20", "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
        assert result.exit_code == 0, result.output
    finally:
        sys.path.remove(str(tmp_path))
    data = json.loads(out.read_text(encoding="utf-8"))
    record = data["model"]["composition"]["subsets"]["composed"]
    assert data["model"]["composition"]["method"] == "sum" and data["model"]["name"] == "two-tower+sum"
    assert record["parameter"] == "weight" and len(record["validation"]) == 11
    assert record["value"] in [round(0.1 * i, 1) for i in range(11)]


def test_a_text_method_on_an_image_only_model_is_refused_before_embedding(
    task: tuple[Path, Path], tmp_path: Path
) -> None:
    snap, _ = task
    calls = tmp_path / "embedded.txt"
    module = tmp_path / "imageonly.py"
    module.write_text(
        "import numpy as np\n"
        "class ImageOnly:\n"
        "    model_id, revision = 'image-only', '1'\n"
        "    def embed(self, images):\n"
        f"        open({str(calls)!r}, 'a').write(f'{{len(images)}}\\n')\n"
        "        return np.stack([np.asarray(im.resize((2, 2)), np.float32).ravel() + 1 for im in images])\n"
        "def make():\n"
        "    return ImageOnly()\n",
        encoding="utf-8",
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        for method in ("text", "sum"):
            result = _run("eval", "-s", str(snap), "-m", "python:imageonly:make", "--compose", method,
                          "-o", str(tmp_path / "x.json"), "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
            assert result.exit_code == 2 and "needs a two-tower model" in result.output, result.output
            assert not calls.exists()  # not one image embedded
    finally:
        sys.path.remove(str(tmp_path))
