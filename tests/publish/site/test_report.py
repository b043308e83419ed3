"""The visual report: images stored once, attribute chips only where they mean something, grouped confusions."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401
from synth_runs import confused_per_query, confused_run, copy_run
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.evaluation.contamination.tables import load_with_per_query
from lookbench.publish.reports.encode import fine_at_1
from lookbench.publish.reports.images import ImageTable
from lookbench.publish.reports.report import build_report
from lookbench.publish.reports.retrieval import ACROSS, attribute_group, confusions, query_cards, select_samples
from lookbench.results.io import load_result
from lookbench.snapshot import open_snapshot

runner = CliRunner()


def _images(page: str) -> dict[str, str]:
    match = re.search(r'<script type="application/json" id="report-images">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_each_distinct_image_is_stored_once(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    page = build_report(paths[0], tmp_path / "report", per_subset=12).read_text()
    images = _images(page)
    assert len(set(images.values())) == len(images)  # no data URI twice
    assert page.count("base64,") == len(images)  # nowhere else in the page
    used = re.findall(r'data-img="(\d+)"', page)
    assert set(used) == set(images) and len(used) > len(images)  # some images are shown more than once
    table = ImageTable()
    assert table.add("data:image/webp;base64,AA") == table.add("data:image/webp;base64,AA") == "0"
    assert table.add(None) is None and table.by_id() == {"0": "data:image/webp;base64,AA"}


def test_attributes_are_compared_only_for_same_category_results(synth_runs: tuple[Path, list[Path]]) -> None:
    snapshot, paths = synth_runs
    _, per_query = load_with_per_query(paths[2])
    assert per_query is not None
    cards = query_cards(open_snapshot(snapshot), per_query, list(range(per_query.num_rows)), ImageTable())
    hits = [hit for card in cards for hit in card.hits]
    assert any(h.noise for h in hits) and any(not h.coarse and not h.noise for h in hits)
    for hit in hits:
        if hit.noise or not hit.coarse:
            assert not hit.compared and hit.matched == [] and hit.missing == []
        else:
            assert hit.compared and hit.matched + hit.missing
    page = build_report(paths[2], paths[2].parent / "chips", per_subset=24, per_category=24).read_text()
    for item in re.findall(r'<li class="hit[^"]*is-noise[^"]*">(.*?)</li>', page, re.S):
        assert 'class="attr' not in item and "never a match" in item
    assert "distractors <b>never count</b>" in page


def test_confusions_are_grouped_by_attribute_group(synth_runs: tuple[Path, list[Path]]) -> None:
    snapshot, paths = synth_runs
    _, per_query = load_with_per_query(paths[0])
    assert per_query is not None
    found = confusions(open_snapshot(snapshot), confused_per_query(snapshot, per_query), top=50, examples=2, recurs=1)
    rows = [(group.name, c) for groups in found.values() for group in groups for c in group.rows]
    names = {name for name, _ in rows}
    assert "colour" in names and ACROSS in names  # red vs blue; white vs striped (colour vs pattern)
    for name, c in rows:
        groups = {attribute_group(c.wanted), attribute_group(c.got)}
        assert name == (groups.pop() if len(groups) == 1 else ACROSS), c
        assert c.count >= len(c.examples) >= 1 and len(c.examples) <= 2
    for groups in found.values():
        assert ACROSS not in [g.name for g in groups][:-1]  # across-group pairs come last
    assert attribute_group("red") == "colour" and attribute_group("beige") == "not in the taxonomy"


def test_confusion_examples_are_in_the_report(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    snapshot, paths = synth_runs
    confused = confused_run(snapshot, paths[2], tmp_path / "confused.json")
    page = build_report(confused, tmp_path / "report", chosen=[("real_studio_flat", 0)]).read_text()
    links = re.findall(r'<a class="example" href="#([^"]+)"', page)
    assert links and all(f'<article class="query" id="{anchor}"' in page for anchor in links)
    assert "More queries: examples of the confusions below" in page and 'class="confused"' in page


def test_report_snapshot_option_reads_a_moved_snapshot(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    snapshot, paths = synth_runs
    gone = str(tmp_path / "was-here")
    moved_result = copy_run(paths[0], tmp_path / "run.json", lambda r: r["snapshot"].update(location=gone))
    moved = tmp_path / "elsewhere" / snapshot.name
    shutil.copytree(snapshot, moved)
    r = runner.invoke(app, ["report", str(moved_result), "-o", str(tmp_path / "r"), "--snapshot", str(moved)])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "r" / "index.html").read_text()
    assert f"read from {moved.name})" in page and str(moved) not in page  # a local path by its folder name only
    assert "differs from the one evaluated" not in page
    query = moved / "real_studio_flat" / "query.parquet"
    table = pq.read_table(query)
    pq.write_table(table.slice(0, table.num_rows), query, compression="zstd")  # same rows, other bytes
    r = runner.invoke(app, ["report", str(moved_result), "-o", str(tmp_path / "r2"), "--snapshot", str(moved)])
    assert r.exit_code == 0, r.output
    assert "differs from the one evaluated" in (tmp_path / "r2" / "index.html").read_text()
    r = runner.invoke(
        app, ["report", str(moved_result), "-o", str(tmp_path / "r3"), "--snapshot", str(tmp_path / "no")]
    )
    assert r.exit_code == 2 and "the report needs the run's snapshot" in r.output.replace("\n", "")


def test_only_recurring_confusions_are_listed(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    snapshot, paths = synth_runs
    _, per_query = load_with_per_query(paths[0])
    assert per_query is not None
    confused = confused_per_query(snapshot, per_query)
    every = confusions(open_snapshot(snapshot), confused, top=50, recurs=1)
    listed = confusions(open_snapshot(snapshot), confused, top=50)
    counts = [c.count for groups in every.values() for g in groups for c in g.rows]
    shown = [c.count for groups in listed.values() for g in groups for c in g.rows]
    assert 1 in counts and sorted(shown) == sorted(n for n in counts if n >= 2)
    single = confused.slice(0, 1)  # one query: nothing can recur
    assert all(groups == [] for groups in confusions(open_snapshot(snapshot), single).values())


def test_the_reader_switches_between_misses_hits_and_a_random_sample(
    synth_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = synth_runs
    _, per_query = load_with_per_query(paths[2])
    assert per_query is not None
    fine = fine_at_1(per_query)
    samples = select_samples(per_query, None, per_subset=6, per_category=2)
    assert set(samples) == {"misses", "hits", "random"}
    assert fine[samples["misses"]].tolist() == [0.0] * len(samples["misses"])  # only misses
    assert fine[samples["hits"]].tolist() == [1.0] * len(samples["hits"])  # only hits
    subsets, cats = per_query["subset"].to_pylist(), per_query["category"].to_pylist()
    for name, wanted, cap in (("misses", 0.0, 6), ("hits", 1.0, 3)):  # hits and random: half as many
        expected = 0
        for subset in set(subsets):
            pool = Counter(c for c, s, f in zip(cats, subsets, fine, strict=True) if s == subset and f == wanted)
            expected += min(cap, sum(min(2, n) for n in pool.values()))  # up to 2 per category
        assert len(samples[name]) == expected > 0, name
    assert len(samples["random"]) == 6
    assert samples == select_samples(per_query, None, per_subset=6, per_category=2)  # seeded: the same sample
    assert samples["random"] != samples["misses"] and samples["random"] != samples["hits"]
    page = build_report(paths[2], tmp_path / "report", per_subset=6, per_category=2).read_text()
    assert (
        f'<option value="hits">hits ({len(samples["hits"])})</option>' in page
        and "3 queries drawn at random (seeded" in page
    )
    tags = re.findall(r'data-samples="([^"]*)"', page)
    for name, members in samples.items():
        assert sum(name in t.split() for t in tags) == len(members)
    chosen = build_report(paths[2], tmp_path / "chosen", chosen=[("real_studio_flat", 0)]).read_text()
    assert "Shown: the 1 queries asked for" in chosen and 'id="filter-sample"' not in chosen


def _throughput_line(page: str) -> str:
    match = re.search(r'<p class="muted" id="throughput">(.*?)</p>', page, re.S)
    assert match is not None
    return match.group(1)


def test_throughput_names_the_machine_and_the_load_or_says_it_was_not_recorded(
    synth_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = synth_runs

    def timed(result: dict[str, Any]) -> None:
        result["environment"].update(cpu="Test CPU 9000", cores="4", gpu="Test GPU 80GB")
        result["timings"].update(embed_s=2.0, embedded_images=120.0, load_start=1.5, load_end=3.5)

    def older(result: dict[str, Any]) -> None:  # written before lookbench recorded the machine and the load
        result["environment"] = {k: v for k, v in result["environment"].items() if k not in ("cpu", "cores", "gpu")}
        result["timings"] = {"embed_s": 4.0, "embedded_images": 100.0}

    def cached(result: dict[str, Any]) -> None:
        result["timings"].update(embed_s=0.02, embedded_images=0.0)

    lines = {
        name: _throughput_line(
            build_report(copy_run(paths[0], tmp_path / f"{name}.json", edit), tmp_path / name).read_text()
        )
        for name, edit in (("timed", timed), ("older", older), ("cached", cached))
    }
    assert lines["timed"] == (
        "Throughput: 60.0 images/s (120 images in 2.00 s) on Test CPU 9000 (4 cores), GPU Test GPU 80GB, "
        "load 1.5 at start, 3.5 at end"
    )
    assert lines["older"] == (
        "Throughput: 25.0 images/s (100 images in 4.00 s) on machine not recorded "
        "(a result file from before lookbench recorded it)"
    )
    assert lines["cached"].startswith("Throughput not known: no image was embedded in this run")


def test_summary_intervals_and_the_link_back_to_the_board(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    result = load_result(paths[0])
    r = CliRunner().invoke(app, ["report", str(paths[0]), "-o", str(tmp_path / "r"), "--board", "../index.html"])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "r" / "index.html").read_text()
    assert '<a id="board-link" href="../index.html">Back to the leaderboard</a>' in page
    fine = result.metrics["overall"]["fine_recall@1"]
    shown = f'{100 * fine.value:.2f} <span class="ci">[{100 * fine.ci_low:.2f}, {100 * fine.ci_high:.2f}]</span>'
    assert shown in page
    r = CliRunner().invoke(app, ["report", str(paths[0]), "-o", str(tmp_path / "bad"), "--board", "javascript:x()"])
    assert r.exit_code == 2 and "--board: expected a relative link or an http(s) URL" in r.output
    assert len(r.output.strip().splitlines()) == 1
