"""Tie grouping, safe embedding, published numbers and the site/report builders, without a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from site_fixtures import synth_runs_fixture  # noqa: F401
from synth_runs import NASTY_NAME
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.contamination.tables import load_with_per_query
from lookbench.metrics.bootstrap import paired_bootstrap
from lookbench.reports.encode import first_ranks
from lookbench.reports.published import load_published
from lookbench.reports.render import script_json
from lookbench.reports.sitedata import build_site_data
from lookbench.reports.ties import rank_labels, tie_ranks
from lookbench.reports.tiestats import PairTester, two_sided_p
from lookbench.results.compare import pair_queries

runner = CliRunner()


def test_tie_ranks_group_neighbours() -> None:
    p = {(1, 0): 0.3, (2, 1): 0.01, (3, 2): 0.2, (4, 3): None}
    ranks = tie_ranks([0.9, 0.8, 0.7, 0.5, 0.49], lambda i, j: p[(i, j)])
    assert rank_labels(ranks) == ["1=", "1=", "3=", "3=", "5"]
    assert [r[2] for r in ranks] == [None, 0.3, 0.01, 0.2, None]


def test_script_json_cannot_close_the_script() -> None:
    data = {"name": "</script><!-- & \u2028"}
    text = str(script_json(data))
    assert "</" not in text and "<!--" not in text and "&" not in text
    assert json.loads(text) == data


def test_published_numbers() -> None:
    published = load_published()
    assert set(published) == {"real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook"}
    assert published["aigen_streetlook"]["Tianmu-MERE"]["fine_recall@1"] == pytest.approx(0.7875)
    assert published["aigen_streetlook"]["CLIP-B/32"]["ndcg@20"] == pytest.approx(0.1846)
    assert all("Recall" not in m for models in published.values() for v in models.values() for m in v)


def test_site_data(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    data = build_site_data(paths)
    assert [r["label"] for r in data["runs"]] == ["sharp", "twin", NASTY_NAME]
    assert data["attributesKnown"] and data["ks"] == [1, 5, 10, 20]
    flags = [[f["kind"] for f in r["flags"]] for r in data["runs"]]
    assert flags == [[], ["date"], ["unknown", "data", "data"]]
    ties = data["ties"]["fine_recall@1"]["overall"]
    assert [row[1] for row in ties] == ["1=", "1=", "3"] and ties[2][0] == 2
    assert len(data["runs"][0]["q"]["fine"]) == 48 and set(data["queries"][0]["d"]) == {20423, 20468}
    assert [r["q"]["shared"] for r in data["runs"]] == [0, 0, 0] and len(data["queries"]) == 1
    moved = tmp_path / "moved.json"
    result = json.loads(paths[0].read_text())
    result["snapshot"]["location"] = str(tmp_path / "gone")
    moved.write_text(json.dumps(result))
    (tmp_path / result["per_query_file"]).write_bytes(paths[0].with_name(result["per_query_file"]).read_bytes())
    assert build_site_data([moved])["attributesKnown"] is False
    r = runner.invoke(app, ["report", str(moved), "--out", str(tmp_path / "report")])
    assert r.exit_code == 2 and "the report needs the run's snapshot for its images" in r.output.replace("\n", "")


def test_cli_builds_escaped_site_and_report(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    r = runner.invoke(app, ["leaderboard", *map(str, paths), "--out", str(tmp_path / "site")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "site" / "index.html").read_text()
    assert "<img" not in page and "\\u003c/script\\u003e\\u003cimg src=x" in page
    assert len(re.findall(r"</script>", page)) == 2
    assert "http://" not in page.replace('"http://www.w3.org/2000/svg"', "") and "https://" not in page

    r = runner.invoke(app, ["report", str(paths[2]), "--out", str(tmp_path / "report"), "--per-subset", "5"])
    assert r.exit_code == 0, r.output
    report = (tmp_path / "report" / "index.html").read_text()
    assert "&lt;/script&gt;&lt;img src=x" in report and NASTY_NAME not in report
    assert report.count('<article class="query"') == 10
    assert report.count("data:image/jpeg;base64,") >= 10 * 6
    r = runner.invoke(
        app,
        ["report", str(paths[0]), "-o", str(tmp_path / "r2"), "-q", "real_streetlook:3", "-q", "real_studio_flat:0"],
    )
    assert r.exit_code == 0, r.output
    chosen = (tmp_path / "r2" / "index.html").read_text()
    assert chosen.count('<article class="query"') == 2 and 'class="photo"' in chosen
    r = runner.invoke(app, ["report", str(paths[0]), "-o", str(tmp_path / "r3"), "-q", "real_streetlook:999"])
    assert r.exit_code == 2 and "real_streetlook:999" in r.output


def test_pair_tester_agrees_with_paired_bootstrap(synth_runs: tuple[Path, list[Path]]) -> None:
    _, paths = synth_runs
    tables = [t for _, t in (load_with_per_query(p) for p in paths) if t is not None]
    tester = PairTester(tables)
    ia, ib, clusters = pair_queries(tables[0], tables[2])
    for metric in ("fine_recall@1", "ndcg@5", "coarse_recall@20"):
        ref = paired_bootstrap(tables[0][metric].to_numpy()[ia], tables[2][metric].to_numpy()[ib], clusters, metric)
        mine = tester.p(0, 2, metric, "overall")
        assert mine is not None and abs(mine - ref.p_value) < 0.03, metric
    assert tester.p(0, 2, "fine_recall@1", "overall") < 0.05  # sharp vs blurry: clearly different
    assert tester.p(0, 1, "fine_recall@1", "real_studio_flat") >= 0.05  # sharp vs twin: not
    assert tester.p(0, 0, "ndcg@5", "overall") == 1.0
    assert tester.p(0, 2, "outfit_recall@1", "real_studio_flat") is None
    assert two_sided_p(np.array([[1.0, -1.0, 0.0], [2.0, 1.0, 0.0]])).tolist() == [0.0, 1.0, 1.0]


def test_first_ranks_respect_slices() -> None:
    flags = pa.array([[False, True, False], [False, False, False], [True, False, True]])
    assert first_ranks(pa.chunked_array([flags.slice(1)]), 2).tolist() == [0, 1]
    assert first_ranks(pa.chunked_array([flags]), 3).tolist() == [2, 0, 1]
