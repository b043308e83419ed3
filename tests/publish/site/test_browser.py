"""Open the built site and report in headless Chromium (file://, offline) at 1400 and 400 px and check what a
person would see: the overview and its exports, numbers, windows (Python's bootstrap), groups, labels, sorting, the
URL state and the layout."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import NEEDS_CHROMIUM, open_page
from scipy.stats import beta
from site_fixtures import (  # noqa: F401
    WIDTHS,
    artifacts_fixture,
    driver_fixture,
    synth_data_fixture,
    synth_runs_fixture,
    windowed_run_fixture,
)
from synth_runs import (
    CACHED,
    DEFAULT_MODELS,
    FRESH,
    NASTY_NAME,
    confused_run,
    copy_run,
    evaluate_models,
    older_release,
    with_timings,
)
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.evaluation.contamination.tables import load_with_per_query, windowed_runs
from lookbench.evaluation.runner import EvalSettings
from lookbench.evaluation.window import filter_window
from lookbench.publish.reports.report import build_report
from lookbench.publish.reports.runs import LoadedRun
from lookbench.publish.reports.site import build_site
from lookbench.publish.reports.sitedata import _default_ties, build_site_data
from lookbench.results.io import load_result
from lookbench.results.schema import ResultFile

pytestmark = NEEDS_CHROMIUM

DAY0 = "2025-12-01"
DAY1 = "2026-01-15"


def _open(driver: Any, url: str) -> None:
    open_page(driver, url)
    assert driver.find_element("css selector", "body").get_attribute("data-ready") or "report" in url


def _errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _no_page_overflow(driver: Any) -> None:
    """The page itself never scrolls sideways (wide tables scroll inside their own box)."""
    width = driver.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], width


def _value_text(cell: Any) -> str:
    return cell.get_attribute("textContent").split("[")[0].strip() if cell.text == "" else cell.text.split("\n")[0]


def _shown(driver: Any, metric: str) -> dict[tuple[int, str], tuple[str, str, str]]:
    """{(run, scope): (value text, n text, rank text)} of the rendered tables for `metric`."""
    out = {}
    for row in driver.find_elements("css selector", f'table.board[data-metric="{metric}"] tbody.runs tr.run'):
        cell = row.find_element("css selector", "td.value")
        n = row.find_element("css selector", "td.n").text
        rank = row.find_element("css selector", "td.rank").text
        out[(int(cell.get_attribute("data-run")), cell.get_attribute("data-scope"))] = (_value_text(cell), n, rank)
    return out


def _expected(results: list[ResultFile], metric: str) -> dict[tuple[int, str], tuple[str, str]]:
    return {
        (i, scope): (f"{100 * values[metric].value:.2f}", str(values[metric].n))
        for i, result in enumerate(results)
        for scope, values in result.metrics.items()
        if metric in values
    }


def _tables_window(
    paths: list[Path], window: list[str], out: Path
) -> dict[str, dict[tuple[int, str], tuple[str, str]]]:
    """What `lookbench tables --since/--until` reports: {metric: {(run, scope): (percent text, n)}}."""
    metrics = "fine_recall@1,ndcg@5,mrr@10,outfit_recall@1"
    r = CliRunner().invoke(app, ["tables", *map(str, paths), *window, "--metrics", metrics, "--out", str(out)])
    assert r.exit_code == 0, r.output
    expected: dict[str, dict[tuple[int, str], tuple[str, str]]] = {}
    labels: dict[str, list[str]] = {}
    with (out / "tables.csv").open() as fh:
        for row in csv.DictReader(fh):
            runs = labels.setdefault(row["metric"], [])
            if row["model"] not in runs:
                runs.append(row["model"])
            key = (runs.index(row["model"]), row["subset"])
            expected.setdefault(row["metric"], {})[key] = (f"{100 * float(row['value']):.2f}", row["n"])
    return expected


def _choose(driver: Any, family: str, k: int | None = None) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "family")).select_by_value(family)
    if k is not None:
        Select(driver.find_element("id", "k")).select_by_value(str(k))


def _window(driver: Any, since: str = "", until: str = "") -> None:
    driver.execute_script(
        "document.getElementById('since').value = arguments[0]; document.getElementById('until').value = arguments[1];",
        since,
        until,
    )
    driver.find_element("id", "apply").click()


def _flags(driver: Any) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for row in driver.find_elements("css selector", 'table.board[data-scope="overall"] tbody.runs tr.run'):
        kinds = {s.get_attribute("data-kind") for s in row.find_elements("css selector", "span.flag")}
        out[int(row.get_attribute("data-run"))] = kinds
    return out


def _kept(driver: Any) -> list[tuple[str, str]]:
    counts = driver.find_elements("css selector", "#window-counts li")
    return [(c.get_attribute("data-kept"), c.get_attribute("data-total")) for c in counts]


def _hash(driver: Any) -> str:
    return str(driver.execute_script("return location.hash"))


def test_numbers_equal_python_with_and_without_a_window(
    driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path, artifacts: Path
) -> None:
    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    full = [load_result(p) for p in paths]
    late = _tables_window(paths, ["--since", "2026-01-01"], tmp_path / "late")
    early = _tables_window(paths, ["--until", "2025-12-31"], tmp_path / "early")
    ties = build_site_data(paths)["ties"]
    _open(driver, index.as_uri())
    assert driver.title == "LookBench leaderboard"
    shown = _shown(driver, "fine_recall@1")
    assert {key: v[:2] for key, v in shown.items()} == _expected(full, "fine_recall@1")
    python_ranks = {(row[0], scope): row[1] for scope, rows in ties["fine_recall@1"].items() for row in rows}
    assert {key: v[2] for key, v in shown.items()} == python_ranks
    assert _flags(driver) == {0: set(), 1: {"date"}, 2: {"data", "unknown"}}
    labels = {a.text for a in driver.find_elements("css selector", 'table.board a[href^="#model-"]')}
    assert NASTY_NAME in labels and not driver.find_elements("css selector", "table.board img")
    _no_page_overflow(driver)
    driver.save_screenshot(str(artifacts / f"leaderboard-{driver.viewport}.png"))

    # a window keeps or drops whole outfits: look-4 (one 2025 crop, two 2026 crops) is dropped
    _window(driver, since="2026-01-01")
    _, per_query = load_with_per_query(paths[0])
    assert per_query is not None
    kept = filter_window(per_query, full[0].snapshot.id, np.datetime64("2026-01-01", "us"), None)
    assert _kept(driver) == [(str(kept.num_rows), "48")] * 3 and kept.num_rows == 22
    assert {k: v[:2] for k, v in _shown(driver, "fine_recall@1").items()} == late["fine_recall@1"]
    assert _flags(driver) == {0: set(), 1: set(), 2: {"data", "unknown"}}  # twin: cutoff before 2026
    for family, k, metric in (("ndcg", 5, "ndcg@5"), ("mrr", 10, "mrr@10"), ("outfit_recall", None, "outfit_recall@1")):
        _choose(driver, family, k)
        assert {key: v[:2] for key, v in _shown(driver, metric).items()} == late[metric], metric
    _no_page_overflow(driver)
    driver.save_screenshot(str(artifacts / f"leaderboard-window-{driver.viewport}.png"))

    _window(driver, until="2025-12-31")
    _choose(driver, "fine_recall", 1)
    assert {k: v[:2] for k, v in _shown(driver, "fine_recall@1").items()} == early["fine_recall@1"]
    assert _flags(driver) == {0: set(), 1: {"date"}, 2: {"data", "unknown"}}  # window starts 2025-12-01

    driver.find_element("id", "reset").click()
    _choose(driver, "coarse_recall", 5)
    assert {key: v[:2] for key, v in _shown(driver, "coarse_recall@5").items()} == _expected(full, "coarse_recall@5")
    assert driver.title == "LookBench leaderboard"
    assert _errors(driver) == []


def test_runs_on_different_query_sets_are_not_ranked_together(
    driver: Any, synth_runs: tuple[Path, list[Path]], windowed_run: Path, tmp_path: Path, artifacts: Path
) -> None:
    _, paths = synth_runs
    index = build_site([*paths, windowed_run], tmp_path / "site")
    _open(driver, index.as_uri())
    overall = driver.find_element("css selector", 'table.board[data-scope="overall"]')
    groups = overall.find_elements("css selector", "tbody.runs")
    assert len(groups) == 2
    assert "Group A: 48 queries" in groups[0].find_element("css selector", "tr.set-caption").text
    assert "Group B: 22 queries" in groups[1].find_element("css selector", "tr.set-caption").text
    alone = groups[1].find_elements("css selector", "tr.run")
    assert [r.get_attribute("data-run") for r in alone] == ["3"]
    assert alone[0].find_element("css selector", "td.rank").text == "1"
    assert alone[0].find_element("css selector", "td.rank").get_attribute("title") == ""  # never tested
    assert "sharp [since 2026-01-01]" in alone[0].find_element("css selector", "td.model").text
    assert alone[0].find_elements("css selector", ".window-tag")
    assert driver.find_element("id", "sets-split").is_displayed()
    # the run is labelled with its window everywhere
    title = "sharp [since 2026-01-01]"
    for selector in ("#chart-recall ul.legend li", "#chart-scatter ul.legend li", "#model-cards h3"):
        assert title in [e.text for e in driver.find_elements("css selector", selector)], selector
    headers = [h.text for h in driver.find_elements("css selector", "#categories th .run-name")]
    assert len(headers) == 3 and not any(h.startswith(title) for h in headers)  # breakdowns: one release block
    assert [e.text for e in driver.find_elements("css selector", '#chart-scatter text.point-label[data-run="3"]')]
    assert "[since 2026-01-01]" in driver.find_element("css selector", '#window-counts li[data-run="3"]').text
    _no_page_overflow(driver)
    driver.save_screenshot(str(artifacts / f"leaderboard-groups-{driver.viewport}.png"))

    driver.find_element("id", "apply-common").click()
    assert "since=2026-01-01" in _hash(driver)
    overall = driver.find_element("css selector", 'table.board[data-scope="overall"]')
    assert len(overall.find_elements("css selector", "tbody.runs")) == 1
    assert not driver.find_elements("id", "sets-split") and driver.find_element("id", "sets-common").is_displayed()
    ranks = {
        r.get_attribute("data-run"): r.find_element("css selector", "td.rank").text
        for r in overall.find_elements("css selector", "tr.run")
    }
    assert ranks["0"] == ranks["3"] and ranks["0"].endswith("=")  # the same model on the same queries: a tie
    assert _errors(driver) == []


def test_empty_window_and_since_after_until(driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    _open(driver, index.as_uri())
    _window(driver, since="2030-01-01")
    message = driver.find_element("id", "empty-window")
    assert message.is_displayed()
    assert "No queries in this window (since 2030-01-01)" in message.text and f"from {DAY0} to {DAY1}" in message.text
    assert not driver.find_elements("css selector", "table.board")
    assert not driver.find_elements("css selector", "details.published, .published-none")
    assert not driver.find_element("id", "charts").is_displayed()
    assert not driver.find_element("id", "breakdowns").is_displayed()
    assert _kept(driver) == [("0", "48")] * 3
    _no_page_overflow(driver)

    driver.find_element("id", "reset").click()
    before = _hash(driver)
    _window(driver, since="2026-01-10", until="2026-01-01")
    error = driver.find_element("id", "window-error")
    assert error.is_displayed() and "since (2026-01-10) is after until (2026-01-01)" in error.text
    assert _hash(driver) == before and _kept(driver) == [("48", "48")] * 3
    _window(driver, since="2026-01-01", until="2026-01-20")
    assert not driver.find_element("id", "window-error").is_displayed()
    assert _kept(driver) == [("22", "48")] * 3
    assert _errors(driver) == []


def test_date_control_shows_the_data_and_the_cutoffs(
    driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    _open(driver, index.as_uri())
    since, until = driver.find_element("id", "since-range"), driver.find_element("id", "until-range")
    day = driver.execute_script("return Math.round(Date.UTC(2025, 11, 1) / 86400000)")
    assert (int(since.get_attribute("min")), int(since.get_attribute("max"))) == (day, day + 45)
    assert driver.find_element("id", "since").get_attribute("min") == DAY0
    assert f"from {DAY0} to {DAY1}" in driver.find_element("id", "data-range").text
    assert len(driver.find_elements("css selector", "#date-strip rect.day")) == 2  # two release days
    marks = driver.find_elements("css selector", "#date-strip line.cutoff")
    assert [m.get_attribute("data-run") for m in marks] == ["1"]  # twin's 2025-12-20; sharp's 2025-05 is earlier
    cutoffs = {li.get_attribute("data-run"): li.text for li in driver.find_elements("css selector", "#cutoff-list li")}
    assert "training cutoff 2025-05 (before every query)" in cutoffs["0"]
    driver.find_element("css selector", '#cutoff-list li[data-run="1"] button.after-cutoff').click()
    assert driver.find_element("id", "since").get_attribute("value") == "2025-12-21"
    assert _kept(driver) == [("22", "48")] * 3
    driver.execute_script(
        "function move(r, v) { r.value = v; ['input', 'change'].forEach(e => r.dispatchEvent(new Event(e))); }"
        "move(arguments[0], arguments[0].max); move(arguments[1], arguments[1].min);",
        since,
        until,
    )
    assert int(until.get_attribute("value")) == int(since.get_attribute("value"))  # the thumbs never cross
    assert driver.find_element("id", "since").get_attribute("value") == DAY1
    assert driver.find_element("id", "until").get_attribute("value") == ""  # a thumb at the end: no bound
    assert _kept(driver) == [("22", "48")] * 3
    assert _errors(driver) == []


def test_sorting_and_url_state_round_trip(driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select

    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    _open(driver, index.as_uri())

    def order() -> list[str]:
        return [
            r.get_attribute("data-run")
            for r in driver.find_elements("css selector", 'table.board[data-scope="overall"] tr.run')
        ]

    def values() -> list[float]:
        cells = driver.find_elements("css selector", 'table.board[data-scope="overall"] td.value')
        return [float(_value_text(c)) for c in cells]

    def header(key: str) -> Any:
        return driver.find_element("css selector", f'table.board button.sort[data-key="{key}"]')  # sorts every board

    header("value").click()
    assert values() == sorted(values(), reverse=True) and "sort=value.desc" in _hash(driver)
    header("value").click()
    assert values() == sorted(values()) and "sort=value.asc" in _hash(driver)
    header("model").click()
    titles = [e.text for e in driver.find_elements("css selector", 'table.board[data-scope="overall"] td.model a')]
    assert titles == sorted(titles, key=str.lower) or titles == sorted(titles)
    header("n").click()
    assert "sort=n.desc" in _hash(driver)
    breakdown = driver.find_element("css selector", '#categories button.sort[data-key="run-2"]')
    breakdown.click()
    cells = driver.find_elements("css selector", '#categories tbody td[data-run="2"]')
    shown = [float(c.text.split(" ")[0]) for c in cells if c.text != "\u2013"]
    assert shown == sorted(shown, reverse=True) and "bsort=run-2.desc" in _hash(driver)

    _choose(driver, "ndcg", 5)
    Select(driver.find_element("id", "subset")).select_by_value("real_streetlook")
    _window(driver, since="2026-01-01")
    header("value").click()
    url = driver.current_url
    for key in ("metric=ndcg", "k=5", "subset=real_streetlook", "since=2026-01-01", "sort=value.desc", "bsort=run-2"):
        assert key in url, key
    before = (_shown(driver, "ndcg@5"), order(), driver.find_element("id", "categories").text)
    assert [t.get_attribute("data-scope") for t in driver.find_elements("css selector", "table.board")] == [
        "real_streetlook"
    ]
    _open(driver, url)  # a fresh load of the shared address shows the same view
    assert driver.find_element("id", "family").get_attribute("value") == "ndcg"
    assert driver.find_element("id", "k").get_attribute("value") == "5"
    assert driver.find_element("id", "subset").get_attribute("value") == "real_streetlook"
    assert driver.find_element("id", "since").get_attribute("value") == "2026-01-01"
    assert (_shown(driver, "ndcg@5"), order(), driver.find_element("id", "categories").text) == before
    assert (
        driver.find_element("css selector", "table.board th[aria-sort] button.sort").get_attribute("data-key")
        == "value"
    )
    _open(driver, index.as_uri() + "#metric=nonsense&k=7&since=2026-13-45&sort=value.sideways")  # ignored, safely
    assert driver.find_element("id", "family").get_attribute("value") == "fine_recall"
    assert driver.find_element("id", "since").get_attribute("value") == ""
    assert _errors(driver) == []


def test_labels_definitions_and_published_block(
    driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    _open(driver, index.as_uri())
    options = [o.text for o in driver.find_elements("css selector", "#family option")]
    assert options[:2] == ["Fine Recall@K", "Coarse Recall@K"] and "Outfit Recall@1" in options
    assert "graded nDCG@K" in options and "MRR@K" in options and "Item Recall@K" in options
    definition = driver.find_element("id", "metric-definition").text
    assert definition.startswith("Fine Recall@1: share of queries with a fine match in the top 1")
    link = driver.find_element("css selector", "#board-title a.def-link")
    assert link.get_attribute("href").endswith("#def-fine_recall")
    assert driver.find_element("id", "def-fine_recall").get_attribute("textContent") == "Fine Recall@K"
    assert driver.find_element("css selector", "button.sort[data-key=value]").text.startswith("Fine Recall@1 %")
    _choose(driver, "outfit_recall")
    assert (
        not driver.find_element("id", "k").is_enabled()
        and "K does not apply" in driver.find_element("id", "k-note").text
    )
    assert "k=" not in _hash(driver)
    _choose(driver, "fine_recall", 1)
    assert driver.find_element("id", "k").is_enabled()
    head = [th.text for th in driver.find_elements("css selector", "#categories thead th")]
    assert head[0].startswith("category") and head[1].startswith("queries")
    assert all("Fine Recall@1 % (queries)" in h for h in head[2:]) and len(head) == 5
    assert driver.find_elements("css selector", "#attributes thead th")[0].text.startswith("query main attribute")
    cards = {c.get_attribute("id"): c.text for c in driver.find_elements("css selector", "#model-cards .model")}
    assert "parameters: 150M" in cards["model-0"] and "parameters: 400M" in cards["model-1"]
    assert "release date: 2025-06" in cards["model-0"] and "training cutoff: 2025-05\n" in cards["model-0"] + "\n"
    assert "embedding throughput: not known" in cards["model-0"]
    assert f"run id: {paths[0].stem}\n" in cards["model-0"] and "report: none linked" in cards["model-0"]
    assert "verification: not checked" in cards["model-0"] and "licence: " in cards["model-0"]

    # published numbers: collapsed (this board is not the real release), registry ids, an Overall block
    blocks = driver.find_elements("css selector", "details.published")
    assert blocks and not any(b.get_attribute("open") for b in blocks)
    overall = driver.find_element("css selector", 'details.published[data-scope="overall"]')
    assert "not this board's snapshot" in overall.text
    overall.find_element("css selector", "summary").click()
    ids = [r.get_attribute("data-id") for r in overall.find_elements("css selector", "tr.published-row")]
    assert "clip-b32" in ids and "tianmu-mere" in ids
    assert "query-weighted mean of the four published subsets" in overall.text
    overall.find_elements("css selector", "th button.sort")[2].click()  # the published table sorts too
    published = [float(r.text.split()[-1]) for r in overall.find_elements("css selector", "tr.published-row")]
    assert published == sorted(published, reverse=True)
    overall.find_elements("css selector", "th button.sort")[2].click()
    published = [float(r.text.split()[-1]) for r in overall.find_elements("css selector", "tr.published-row")]
    assert published == sorted(published)
    _choose(driver, "mrr", 10)
    notes = driver.find_elements("css selector", ".published-none")
    assert notes and "The authors published no MRR@10 numbers" in notes[0].text
    assert not driver.find_elements("css selector", "details.published")
    _no_page_overflow(driver)
    assert _errors(driver) == []


def test_charts_legends_labels_and_throughput(
    driver: Any, synth_runs: tuple[Path, list[Path]], windowed_run: Path, tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    _, paths = synth_runs
    long = "-with-a-rather-long-model-name-for-the-label"
    copies = [
        copy_run(paths[1], tmp_path / "fresh.json", with_timings(FRESH, f"twin-fresh{long}")),
        copy_run(paths[1], tmp_path / "cached.json", with_timings(CACHED, f"twin-cached{long}")),
    ]
    index = build_site([*paths, windowed_run, *copies], tmp_path / "site")
    _open(driver, index.as_uri())
    legend = driver.find_elements("css selector", "#chart-categories ul.legend li")
    assert len(legend) == len([*paths, *copies])  # the chosen release block: the windowed run is a block of its own
    bars = driver.find_elements("css selector", "#chart-categories rect.bar")
    assert {b.get_attribute("data-group") for b in bars} == {"dress", "skirt", "pants", "shirt"}

    def labels_inside() -> None:
        boxes = driver.execute_script(
            "var svg = document.querySelector('#chart-scatter svg'), w = svg.viewBox.baseVal.width;"
            "return Array.prototype.map.call(svg.querySelectorAll('text'), function (t) {"
            "  var b = t.getBBox(); return [b.x, b.x + b.width, w, t.textContent]; });"
        )
        assert boxes and all(x0 >= 0 and x1 <= w for x0, x1, w, _ in boxes), boxes

    labels_inside()
    Select(driver.find_element("id", "scatter-x")).select_by_value("throughput")
    points = driver.find_elements("css selector", "#chart-scatter circle.point")
    assert [p.get_attribute("data-run") for p in points] == ["4"]  # only the run that embedded images
    missing = {
        li.get_attribute("data-run"): li.text for li in driver.find_elements("css selector", "#chart-scatter li")
    }
    assert "embedding cache" in missing["5"] and "does not say how many images" in missing["0"]
    assert "x=throughput" in _hash(driver)
    labels_inside()
    _no_page_overflow(driver)
    assert _errors(driver) == []


def test_report(driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path, artifacts: Path) -> None:
    from selenium.webdriver.support.ui import Select

    snapshot, paths = synth_runs
    run = confused_run(snapshot, paths[2], tmp_path / "confused.json")
    index = build_report(run, tmp_path / "report", per_subset=6)
    _open(driver, index.as_uri())
    cards = driver.find_elements("css selector", "article.query")
    total = len(cards)
    # the reader switches between misses (the default), hits and a random sample; the page says how each is chosen
    for sample in ("hits", "random", "misses"):
        Select(driver.find_element("id", "filter-sample")).select_by_value(sample)
        shown = [c for c in cards if c.is_displayed()]
        tags = [set(c.get_attribute("data-samples").split()) for c in shown]
        assert shown and all(sample in t or (sample == "misses" and "example" in t) for t in tags), sample
        assert driver.find_element("id", "shown-count").text == f"{len(shown)} of {total} queries shown"
        rule = [s.text for s in driver.find_elements("css selector", "#sample-rule span") if s.is_displayed()]
        assert len(rule) == 1 and {"hits": "highest", "random": "at random", "misses": "lowest"}[sample] in rule[0]
    # confusions show their counts, and only recurring ones are listed
    counts = [int(td.text) for td in driver.find_elements("css selector", "table.confusion td.num")]
    assert counts and min(counts) >= 2
    loaded = driver.execute_script(
        "return Array.prototype.every.call(document.images, function (i) { return i.complete && i.naturalWidth > 0; })"
    )
    assert loaded
    first = cards[0]
    assert len(first.find_elements("css selector", "li.hit")) == 5
    side = first.find_element("css selector", ".side").rect
    hits = first.find_element("css selector", "ol.hits").rect
    items = [li.rect for li in first.find_elements("css selector", "li.hit")]
    if driver.viewport <= 600:  # phone: the query above its results, results in a wrapping grid
        assert side["y"] + side["height"] <= hits["y"] + 1
        assert items[0]["y"] == items[1]["y"] and items[-1]["y"] > items[0]["y"]
    else:
        assert side["x"] + side["width"] <= hits["x"] + 1 and len({round(i["y"]) for i in items}) == 1
    summary = driver.find_element("css selector", "table.summary")
    summary.find_elements("css selector", "th button.sort")[1].click()
    fine = [float(td.text.split()[0]) for td in summary.find_elements("css selector", "tbody tr td:nth-child(2)")]
    assert fine == sorted(fine, reverse=True)
    legend = driver.find_element("id", "legend").text
    assert "distractors never count as a match" in legend
    for hit in driver.find_elements("css selector", "li.hit.is-noise"):
        assert not hit.find_elements("css selector", ".attr") and "never a match" in hit.get_attribute("textContent")
    Select(driver.find_element("id", "filter-subset")).select_by_value("real_streetlook")
    visible = [c for c in cards if c.is_displayed()]
    assert {c.get_attribute("data-subset") for c in visible} == {"real_streetlook"}
    assert all(c.find_elements("css selector", "img.photo") for c in visible)
    assert NASTY_NAME in driver.find_element("tag name", "h1").text
    _no_page_overflow(driver)
    driver.save_screenshot(str(artifacts / f"report-{driver.viewport}.png"))

    Select(driver.find_element("id", "filter-subset")).select_by_value("real_studio_flat")
    example = driver.find_element("css selector", 'table.confusion[data-subset="real_streetlook"] a.example')
    Select(driver.find_element("id", "filter-subset")).select_by_value("")
    target = example.get_attribute("href").split("#")[1]
    Select(driver.find_element("id", "filter-subset")).select_by_value("real_studio_flat")
    driver.execute_script("location.hash = arguments[0]", target)
    card = driver.find_element("id", target)
    assert card.is_displayed() and driver.find_element("id", "filter-subset").get_attribute("value") == ""
    assert _errors(driver) == []


# ---- the overview (the paper's table) and Python's bootstrap in the page ----


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, ["tables", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _no_errors_no_overflow(driver: Any) -> None:
    assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    width = driver.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], width


@pytest.mark.parametrize(
    ("view", "window", "baseline"),
    [
        ("", [], None),
        ("since=2026-01-01&base=2", ["--since", "2026-01-01"], 2),
        ("until=2026-01-10&base=0", ["--until", "2026-01-10"], 0),
        ("since=2026-01-01&ds=1&base=1", ["--since", "2026-01-01", "--distractor-share"], 1),
    ],
)
def test_the_overview_exports_what_tables_format_prints(
    driver: Any,
    synth_runs: tuple[Path, list[Path]],
    windowed_run: Path,
    tmp_path: Path,
    artifacts: Path,
    view: str,
    window: list[str],
    baseline: int | None,
) -> None:
    _, paths = synth_runs
    runs = [*paths, windowed_run] if not window or window[0] == "--since" else list(paths)
    index = build_site(runs, tmp_path / "site")
    _open(driver, index.as_uri() + "#" + view)
    assert driver.find_element("css selector", "main > section").get_attribute("id") == "overview"
    titles = [o.text for o in driver.find_elements("css selector", "#baseline option")]
    extra = [] if baseline is None else ["--baseline", titles[baseline + 1]]
    for fmt in ("latex", "csv", "markdown"):
        driver.find_element("css selector", f'button[data-export="{fmt}"]').click()
        shown = driver.find_element("id", "export-text").get_attribute("value")
        assert shown == _cli(*map(str, runs), *window, "--format", fmt, *extra), fmt
        link = driver.find_element("id", "export-download")
        assert link.get_attribute("download") == {"latex": "paper.tex", "csv": "paper.csv", "markdown": "paper.md"}[fmt]
    # marks are in the cell, as words, not on hover
    cells = driver.find_elements("css selector", "table.paper td[data-mark]")
    best = [c for c in cells if c.get_attribute("data-mark") == "best"]
    assert best and all("best" in c.text for c in best)
    assert all("tied" in c.text for c in cells if c.get_attribute("data-mark") == "tied")
    _no_errors_no_overflow(driver)
    if not view:
        driver.save_screenshot(str(artifacts / f"overview-{driver.viewport}.png"))


def _board(driver: Any, metric: str) -> dict[tuple[int, str], str]:
    out = {}
    for row in driver.find_elements("css selector", f'table.board[data-metric="{metric}"] tbody.runs tr.run'):
        cell = row.find_element("css selector", "td.value")
        text = cell.get_attribute("textContent")  # value then its interval (folded under it on phones)
        rank = row.find_element("css selector", "td.rank").get_attribute("textContent")
        out[(int(cell.get_attribute("data-run")), cell.get_attribute("data-scope"))] = text + " " + rank
    return out


# the intervals and ties are computed by the page's script, whatever the width; the phone layout of a windowed board
# is checked by test_numbers_equal_python_with_and_without_a_window
@pytest.mark.parametrize("driver", [WIDTHS[0]], ids=[f"{WIDTHS[0]}px"], indirect=True)
@pytest.mark.parametrize(
    "window", [["--since", "2026-01-01"], ["--until", "2026-01-10"], ["--since", "2025-12-01", "--until", "2025-12-31"]]
)
def test_window_intervals_and_ties_equal_python_to_the_last_digit(
    driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path, window: list[str]
) -> None:
    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    metrics = ["fine_recall@1", "coarse_recall@5", "item_recall@10", "mrr@10", "ndcg@5", "outfit_recall@1"]
    _cli(*map(str, paths), *window, "--metrics", ",".join(metrics), "--out", str(tmp_path / "t"))
    with (tmp_path / "t" / "tables.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    bounds = dict(zip(window[::2], window[1::2], strict=True))
    since, until = (np.datetime64(bounds[k], "us") if k in bounds else None for k in ("--since", "--until"))
    windowed = windowed_runs(paths, since, until)
    loaded = [LoadedRun(w.path, w.result, w.per_query) for w in windowed if w.per_query is not None]
    scopes = ["real_studio_flat", "real_streetlook", "overall"]
    ties = _default_ties(loaded, metrics, scopes)
    view = "&".join(f"{k[2:]}={v}" for k, v in bounds.items())
    _open(driver, index.as_uri() + "#" + view)
    for metric in metrics:
        family, _, k = metric.partition("@")
        driver.get(index.as_uri() + f"#{view}&metric={family}&k={k}")
        driver.refresh()
        shown = _board(driver, metric)
        labels = {(row[0], scope): row[1] for scope, group in ties[metric].items() for row in group}
        expected = {}
        order = list(dict.fromkeys(r["model"] for r in rows))
        for r in rows:
            if r["metric"] == metric and r["subset"] in scopes:
                key = (order.index(r["model"]), r["subset"])
                value, low, high = (100 * float(r[c]) for c in ("value", "ci_low", "ci_high"))
                ci = f"[{low:.2f}, {high:.2f}]"
                if metric == "outfit_recall@1" and low == high:  # no outfit scored, or every one: exact interval
                    n, k = int(r["n"]), round(value * int(r["n"]) / 100)
                    edges = (
                        beta.ppf(0.025, k, n - k + 1) if k else 0.0,
                        beta.ppf(0.975, k + 1, n - k) if k < n else 1.0,
                    )
                    ci = f"{k}/{n} outfits; exact 95%[{100 * edges[0]:.2f}, {100 * edges[1]:.2f}]"
                expected[key] = f"{value:.2f}{ci} {labels[key]}"
        assert {k: v.replace(" [", "[") for k, v in shown.items()} == expected, metric
    _no_errors_no_overflow(driver)


def test_choices_that_do_not_apply_and_captions_that_tell_groups_apart(
    driver: Any, synth_runs: tuple[Path, list[Path]], windowed_run: Path, tmp_path: Path
) -> None:
    _, paths = synth_runs

    def other_content(result: dict[str, Any]) -> None:
        result["snapshot"]["content_hash"] = "f" * 64  # same snapshot id, other files
        result["model"]["name"] = "twin-elsewhere"

    other = copy_run(paths[1], tmp_path / "other.json", other_content)
    index = build_site([*paths, windowed_run, other], tmp_path / "site")
    _open(driver, index.as_uri() + "#metric=outfit_recall&subset=real_studio_flat")
    # Outfit Recall does not apply to a studio subset: disabled with the reason, and the page says what it shows
    option = driver.find_element("css selector", '#family option[value="outfit_recall"]')
    assert option.get_attribute("disabled") and "street-look subsets only" in option.text
    assert "Outfit Recall does not apply to RealStudioFlat" in driver.find_element("id", "metric-note").text
    assert driver.find_elements("css selector", 'table.board[data-metric="fine_recall@1"]')
    assert not driver.find_elements("id", "empty-window")
    # each group's caption says what makes it different: the content hash, the window, the query count
    _open(driver, index.as_uri() + "#")
    captions = [
        c.get_attribute("textContent")
        for c in driver.find_elements("css selector", 'table.board[data-scope="overall"] tr.set-caption')
    ]
    assert len(captions) == 3 and len(set(captions)) == 3
    hashes = {load_result(p).snapshot.content_hash[:12] for p in paths}
    assert f"48 queries of v20260201 (content {hashes.pop()})" in captions[0]
    assert "(content ffffffffffff)" in captions[1] and "22 queries" in captions[2] and "since 2026-01-01" in captions[2]
    # the common window is still offered with a run on other content on the board
    driver.find_element("id", "apply-common").click()
    assert "since=2026-01-01" in _hash(driver)
    assert _errors(driver) == []
    _no_page_overflow(driver)


def test_cut_offs_a_subset_lacks_are_disabled_with_the_reason(
    driver: Any,
    synth_data: tuple[Path, Path, dict[str, np.ndarray]],
    synth_runs: tuple[Path, list[Path]],
    tmp_path: Path,
) -> None:
    _, snapshot, vectors = synth_data
    _, paths = synth_runs
    # a deeper run cut at 30 as well, on the studio subset only: K = 30 exists there and nowhere else
    deep = evaluate_models(
        tmp_path, snapshot, vectors, DEFAULT_MODELS[:1], settings=EvalSettings(subsets=["real_studio_flat"], ks=(1, 30))
    )[0]
    assert "fine_recall@30" in load_result(deep).metrics["real_studio_flat"]
    index = build_site([*paths, deep], tmp_path / "site")

    def k_options() -> dict[str, tuple[bool, str]]:
        options = driver.find_elements("css selector", "#k option")
        return {o.get_attribute("value"): (bool(o.get_attribute("disabled")), o.text) for o in options}

    _open(driver, index.as_uri() + "#metric=fine_recall&k=30&subset=real_streetlook")
    options = k_options()
    assert set(options) == {"1", "5", "10", "20", "30"}
    assert (
        options["30"][0]
        and "not on RealStreetLook: no run there was cut at 30 (K = 1, 5, 10, 20 only)" in options["30"][1]
    )
    assert not any(options[k][0] for k in ("1", "5", "10", "20"))
    # the page says what it shows instead, and shows it
    assert (
        "Fine Recall@30 is not recorded on RealStreetLook, so @20 is shown."
        in driver.find_element("id", "metric-note").text
    )
    assert driver.find_element("id", "k").get_attribute("value") == "20"
    assert driver.find_elements("css selector", 'table.board[data-metric="fine_recall@20"]')
    # where the deep run scored, K = 30 applies
    _open(driver, index.as_uri() + "#metric=fine_recall&k=30&subset=real_studio_flat")
    assert k_options()["30"] == (False, "30")
    assert driver.find_element("id", "metric-note").text == ""
    assert driver.find_elements("css selector", 'table.board[data-metric="fine_recall@30"]')
    assert _errors(driver) == []
    _no_page_overflow(driver)


def test_series_across_releases(
    driver: Any, synth_runs: tuple[Path, list[Path]], tmp_path: Path, artifacts: Path
) -> None:
    _, paths = synth_runs
    runs = [*paths, copy_run(paths[1], tmp_path / "twin-old.json", older_release)]
    index = build_site(runs, tmp_path / "site")
    _open(driver, index.as_uri())
    section = driver.find_element("id", "series")
    assert section.is_displayed()
    heads = [th.text for th in section.find_elements("css selector", "thead th")]
    assert heads[1:3] == ["v20251215 (2025-12-15)", "v20260201 (2026-02-01)"]
    twin = section.find_element("css selector", 'tr[data-model="twin"]')
    old, new = (twin.find_element("css selector", f'td[data-release="{r}"]') for r in ("v20251215", "v20260201"))
    value = load_result(paths[1]).metrics["overall"]["fine_recall@1"]
    assert new.text.startswith(f"{100 * value.value:.2f} ±") and "after cutoff" in new.text
    assert "on/before cutoff" in old.text  # released 2025-12-15, cutoff 2025-12-20
    assert "training cutoff 2025-12-20" in twin.text and "v20251215, v20260201" in twin.text
    sharp = section.find_element("css selector", 'tr[data-model="sharp"]')
    assert "not run" in sharp.find_element("css selector", 'td[data-release="v20251215"]').text
    # each model's chart: a dot per release it was run on, placed by date, inside its interval's whisker
    charts = {
        row.get_attribute("data-model"): row.find_element("css selector", "td.release-chart svg.spark")
        for row in section.find_elements("css selector", "tbody tr")
    }
    assert set(charts) == {"sharp", "twin", NASTY_NAME}
    dots = {
        model: [
            (d.get_attribute("data-release"), float(d.get_attribute("cx")), float(d.get_attribute("cy")))
            for d in svg.find_elements("css selector", "circle.pt")
        ]
        for model, svg in charts.items()
    }
    assert [r for r, _, _ in dots["twin"]] == ["v20251215", "v20260201"] and len(dots["sharp"]) == 1
    assert dots["twin"][0][1] < dots["twin"][1][1] and dots["sharp"][0][1] == dots["twin"][1][1]
    for model, svg in charts.items():
        for release, _, cy in dots[model]:
            whisker = svg.find_element("css selector", f'line.whisker[data-release="{release}"]')
            assert float(whisker.get_attribute("y1")) <= cy <= float(whisker.get_attribute("y2"))
    # a higher score sits higher on the shared scale: blurry (noisiest) is lowest on the newest release
    values = {
        m: float(charts[m].find_element("css selector", "circle.pt").get_attribute("data-value"))
        for m in ("sharp", NASTY_NAME)
    }
    assert values["sharp"] > values[NASTY_NAME] and dots["sharp"][0][2] < dots[NASTY_NAME][0][2]
    # the training cutoff (2025-12-20) falls between twin's two releases (2025-12-15, 2026-02-01)
    cut = charts["twin"].find_element("css selector", "line.cutoff")
    assert dots["twin"][0][1] < float(cut.get_attribute("x1")) < dots["twin"][1][1]
    assert "training cutoff 2025-12-20" in cut.get_attribute("textContent")
    # sharp's cutoff (2025-05, read as 2025-05-31) precedes both releases: its line sits at its own date, not the first
    # release's; every x is linear in the date
    sharp_cut = float(charts["sharp"].find_element("css selector", "line.cutoff").get_attribute("x1"))
    day = {d: np.datetime64(d, "D").astype(int) for d in ("2025-05-31", "2025-12-15", "2025-12-20", "2026-02-01")}
    (x0, x1), x_twin = (dots["twin"][0][1], dots["twin"][1][1]), float(cut.get_attribute("x1"))
    for when, x in (("2025-05-31", sharp_cut), ("2025-12-20", x_twin)):
        expected = (day[when] - day["2025-12-15"]) / (day["2026-02-01"] - day["2025-12-15"])
        assert (x - x0) / (x1 - x0) == pytest.approx(expected, abs=1e-3)
    # a y-axis with its top and bottom in percent, the higher on top, as every chart shares one scale
    ticks = charts["sharp"].find_elements("css selector", "text.tick")
    top, bottom = (float(t.get_attribute("data-value")) for t in ticks)
    assert [t.text for t in ticks] == [f"{100 * top:.1f}", f"{100 * bottom:.1f}"] and top > bottom
    value = values["sharp"]
    height = float(charts["sharp"].find_element("css selector", "line.y-axis").get_attribute("y2")) - 8
    assert dots["sharp"][0][2] == pytest.approx(8 + height * (top - value) / (top - bottom), abs=1e-3)
    # the overview names each row's release, as `tables --format` does
    driver.find_element("css selector", 'button[data-export="markdown"]').click()
    shown = driver.find_element("id", "export-text").get_attribute("value")
    assert shown == _cli(*map(str, runs), "--format", "markdown") and "| twin (v20251215)" in shown
    # the boards never rank the two releases together
    overall = driver.find_element("css selector", 'table.board[data-scope="overall"]')
    captions = [c.get_attribute("textContent") for c in overall.find_elements("css selector", "tr.set-caption")]
    assert len(captions) == 2 and "v20251215" in captions[1] and "v20251215" not in captions[0]
    assert _errors(driver) == []
    _no_page_overflow(driver)
    driver.save_screenshot(str(artifacts / f"series-{driver.viewport}.png"))
