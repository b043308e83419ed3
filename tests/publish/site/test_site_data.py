"""Tie grouping, safe embedding, published numbers and the site/report builders, without a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from site_fixtures import synth_data_fixture, synth_runs_fixture, windowed_run_fixture  # noqa: F401
from synth_runs import CACHED, FRESH, NASTY_NAME, copy_run, with_timings
from typer.testing import CliRunner

from lookbench._util.cores import cpu_model, usable_cores
from lookbench.cli.main import app
from lookbench.evaluation.contamination.tables import load_with_per_query
from lookbench.metrics.bootstrap import paired_bootstrap
from lookbench.models.card import load_cards
from lookbench.publish.reports.encode import first_ranks
from lookbench.publish.reports.labels import metric_title
from lookbench.publish.reports.published import RELEASE_QUERIES, is_release, load_published, published_block
from lookbench.publish.reports.render import script_json
from lookbench.publish.reports.sitedata import build_site_data, load_runs, query_set_groups
from lookbench.publish.reports.ties import rank_labels, tie_ranks
from lookbench.publish.reports.tiestats import PairTester, two_sided_p
from lookbench.results.compare import pair_queries
from lookbench.results.io import load_result
from lookbench.results.naming import window_text

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
    assert [r["title"] for r in data["runs"]] == ["sharp", "twin", NASTY_NAME]  # no window: no bracket
    assert data["attributesKnown"] and data["ks"] == [1, 5, 10, 20]
    assert data["families"] == ["fine_recall", "coarse_recall", "item_recall", "mrr", "ndcg", "outfit_recall"]
    assert data["metricInfo"]["outfit_recall"]["per_k"] is False and data["metricInfo"]["mrr"]["name"] == "MRR"
    flags = [[f["kind"] for f in r["flags"]] for r in data["runs"]]
    assert flags == [[], ["date"], ["unknown", "data", "data"]]
    ties = data["ties"]["fine_recall@1"]["overall"]
    assert [row[1] for row in ties] == ["1=", "1=", "3"] and ties[2][0] == 2
    assert {row[3] for row in ties} == {0}  # one query set: one group
    assert len(data["runs"][0]["q"]["fine"]) == 48 and set(data["queries"][0]["d"]) == {20423, 20468}
    assert [r["q"]["shared"] for r in data["runs"]] == [0, 0, 0] and len(data["queries"]) == 1
    sharp = data["runs"][0]
    assert (sharp["releaseText"], sharp["cutoffText"], sharp["cutoff"]) == ("2025-06", "2025-05", "2025-05-31")
    assert sharp["params"] == 150_000_000
    assert sharp["throughput"] is None and "does not say how many images" in sharp["throughputNote"]
    moved = copy_run(paths[0], tmp_path / "moved.json", lambda r: r["snapshot"].update(location=str(tmp_path / "gone")))
    assert build_site_data([moved])["attributesKnown"] is False
    r = runner.invoke(app, ["report", str(moved), "--out", str(tmp_path / "report")])
    assert r.exit_code == 2 and "the report needs the run's snapshot for its images" in r.output.replace("\n", "")
    assert "--snapshot PATH" in r.output.replace("\n", "")


def test_runs_on_different_query_sets_are_never_ranked_together(
    synth_runs: tuple[Path, list[Path]], windowed_run: Path
) -> None:
    _, paths = synth_runs
    data = build_site_data([*paths, windowed_run])
    windowed = data["runs"][3]
    assert windowed["title"] == "sharp [since 2026-01-01]" and windowed["windowText"] == "since 2026-01-01"
    for metric in ("fine_recall@1", "ndcg@5", "outfit_recall@1"):
        rows = data["ties"][metric]["overall"]
        groups = {row[0]: row[3] for row in rows}
        assert groups == {0: 0, 1: 0, 2: 0, 3: 1}, metric  # the 22-query run is a group of its own
        alone = next(row for row in rows if row[0] == 3)
        assert alone[1] == "1" and alone[2] is None  # ranked first in its group, never tested
    studio = data["ties"]["fine_recall@1"]["real_studio_flat"]
    assert {row[0]: row[3] for row in studio} == {0: 0, 1: 0, 2: 0, 3: 1}
    runs = load_runs([*paths, windowed_run])
    assert query_set_groups(runs, "overall") == [[0, 1, 2], [3]]


def test_throughput_counts_only_images_embedded_in_the_run(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    copies = [
        copy_run(paths[0], tmp_path / "fresh.json", with_timings(FRESH)),
        copy_run(paths[0], tmp_path / "cached.json", with_timings(CACHED)),
    ]
    fresh, cached = build_site_data(copies)["runs"]
    assert fresh["throughput"] == 60.0 and fresh["throughputNote"] is None
    assert cached["throughput"] is None and "embedding cache" in cached["throughputNote"]


def test_published_block() -> None:
    data = published_block([])
    assert data["open"] is False and data["release"] == "v20251201"
    assert data["names"]["clip-b32"] == "CLIP-B/32" and data["names"]["tianmu-mere"] == "Tianmu-MERE"
    scopes = data["scopes"]
    assert set(scopes) == {"real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook", "overall"}
    clip = [scopes[s]["clip-b32"]["fine_recall@1"] for s in RELEASE_QUERIES]
    weighted = sum(w * v for w, v in zip(RELEASE_QUERIES.values(), clip, strict=True)) / sum(RELEASE_QUERIES.values())
    assert scopes["overall"]["clip-b32"]["fine_recall@1"] == pytest.approx(weighted)
    assert "mrr@1" not in data["metrics"] and "fine_recall@20" in data["metrics"]
    assert all(name in {c.id for c in load_cards().values()} for name in data["names"])


def test_is_release(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    result = load_result(paths[0])
    assert not is_release(result)  # v20260201
    info = result.snapshot
    real = result.model_copy(
        update={"snapshot": info.model_copy(update={"id": "v20251201", "location": "hf://srpone/look-bench/v20251201"})}
    )
    assert is_release(real)
    synth = tmp_path / "v20251201"
    synth.mkdir()
    (synth / "synth_manifest.json").write_text("{}")
    named = result.model_copy(update={"snapshot": info.model_copy(update={"id": "v20251201", "location": str(synth)})})
    assert not is_release(named)  # a LookBench-Synth release that happens to carry the real release's name


def test_labels() -> None:
    assert window_text(None, None) is None
    assert window_text("2026-05-16", None) == "since 2026-05-16"
    assert window_text(None, "2026-05-31") == "until 2026-05-31"
    assert window_text("2026-05-02", "2026-05-31") == "2026-05-02 to 2026-05-31"
    # eval's bounds are datetime64 (a day or a time): the same words
    assert window_text(np.datetime64("2026-05-02T00:00:00"), np.datetime64("2026-05-31")) == "2026-05-02 to 2026-05-31"
    assert metric_title("fine_recall@5") == "Fine Recall@5" and metric_title("outfit_recall@1") == "Outfit Recall@1"
    assert metric_title("ndcg@10") == "graded nDCG@10"


def test_cli_builds_escaped_site_and_report(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    r = runner.invoke(app, ["leaderboard", *map(str, paths), "--out", str(tmp_path / "site")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "site" / "index.html").read_text()
    assert "<img" not in page and "\\u003c/script\\u003e\\u003cimg src=x" in page
    assert len(re.findall(r"</script>", page)) == 4  # data, bootstrap.js, sortable.js, site.js: nothing else closes one
    assert "http://" not in page.replace('"http://www.w3.org/2000/svg"', "") and "https://" not in page

    nasty = {"since": '<img src=x onerror="alert(1)">', "kept_queries": 1, "total_queries": 2}
    odd = copy_run(paths[0], tmp_path / "odd.json", lambda r: r["config"].update(window=nasty))
    r = runner.invoke(app, ["leaderboard", str(odd), *map(str, paths), "--out", str(tmp_path / "odd-site")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "odd-site" / "index.html").read_text()
    assert "<img" not in page and "[since \\u003cimg src=x" in page  # a window text from a file is only text

    r = runner.invoke(app, ["report", str(paths[2]), "--out", str(tmp_path / "report"), "--per-subset", "5"])
    assert r.exit_code == 0, r.output
    report = (tmp_path / "report" / "index.html").read_text()
    assert "&lt;/script&gt;&lt;img src=x" in report and NASTY_NAME not in report
    assert report.count('<article class="query"') >= 10
    r = runner.invoke(
        app,
        ["report", str(paths[0]), "-o", str(tmp_path / "r2"), "-q", "real_streetlook:3", "-q", "real_studio_flat:0"],
    )
    assert r.exit_code == 0, r.output
    chosen = (tmp_path / "r2" / "index.html").read_text()
    assert chosen.count('id="q-real_streetlook-3"') == 1 and chosen.count('id="q-real_studio_flat-0"') == 1
    assert 'class="photo"' in chosen
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


def test_runs_record_the_machine_and_load_and_the_page_shows_them(
    synth_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = synth_runs
    result = load_result(paths[0])
    assert result.environment["cpu"] == cpu_model() and int(result.environment["cores"]) == usable_cores()
    assert result.timings["load_start"] >= 0 and result.timings["load_end"] >= 0
    shown = build_site_data(paths[:1])["runs"][0]["machine"]
    assert shown.startswith(f"{cpu_model()} ({usable_cores()} cores), load ")

    def older(data: dict[str, Any]) -> None:  # a 1.2 result file from before the machine was recorded
        data["environment"] = {"python": "3.12.1"}
        data["timings"] = {"embed_s": 1.0}

    old = copy_run(paths[0], tmp_path / "old.json", older)
    assert "machine not recorded" in build_site_data([old])["runs"][0]["machine"]


def test_each_run_lists_its_facts_and_the_report_found_for_it(
    synth_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = synth_runs

    def carded(result: dict[str, Any]) -> None:
        result["model"]["meta"].update(
            embed_dim=256, license="apache-2.0", open_weights=True, weights_source="https://example.org/w"
        )

    runs = [copy_run(paths[0], tmp_path / "carded.json", carded), paths[1]]
    (tmp_path / "reports" / "carded").mkdir(parents=True)
    (tmp_path / "reports" / "carded" / "index.html").write_text("<html></html>")
    r = CliRunner().invoke(
        app, ["leaderboard", *map(str, runs), "-o", str(tmp_path / "site"), "--reports", str(tmp_path / "reports")]
    )
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "site" / "data.json").read_text())
    first, second = data["runs"]
    assert first["id"] == "carded" and first["report"] == "../reports/carded/index.html"
    assert (first["embedDim"], first["license"], first["openWeights"]) == ("256", "apache-2.0", "true")
    assert first["weightsUrl"] == "https://example.org/w" and first["file"] == "carded.json"
    meta = load_result(paths[1]).model.meta
    assert second["report"] is None and second["license"] == meta.license and second["weightsUrl"] is None
