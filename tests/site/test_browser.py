"""Open the built site and report in headless Chromium (file://, offline) and check what a person would see."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from browser import available, chromium
from site_fixtures import artifacts_fixture, synth_runs_fixture  # noqa: F401
from synth_runs import NASTY_NAME
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.reports.report import build_report
from lookbench.reports.site import build_site
from lookbench.reports.sitedata import build_site_data
from lookbench.results.io import load_result
from lookbench.results.schema import ResultFile

pytestmark = pytest.mark.skipif(
    not available(), reason="needs Debian chromium + chromium-driver (scripts/ensure-chromium.sh)"
)


def _errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _shown(driver: Any, metric: str) -> dict[tuple[int, str], tuple[str, str, str]]:
    """{(run, scope): (value text, n text, rank text)} of the rendered tables for `metric`."""
    out = {}
    for row in driver.find_elements("css selector", f'table.board[data-metric="{metric}"] tbody.runs tr'):
        cell = row.find_element("css selector", "td.value")
        n = row.find_element("css selector", "td.n").text
        rank = row.find_element("css selector", "td.rank").text
        out[(int(cell.get_attribute("data-run")), cell.get_attribute("data-scope"))] = (cell.text, n, rank)
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


def _flags(driver: Any) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for row in driver.find_elements("css selector", 'table.board[data-scope="overall"] tbody.runs tr'):
        kinds = {s.get_attribute("data-kind") for s in row.find_elements("css selector", "span.flag")}
        out[int(row.get_attribute("data-run"))] = kinds
    return out


def test_leaderboard_in_chromium(synth_runs: tuple[Path, list[Path]], tmp_path: Path, artifacts: Path) -> None:
    _, paths = synth_runs
    index = build_site(paths, tmp_path / "site")
    full = [load_result(p) for p in paths]
    late = _tables_window(paths, ["--since", "2026-01-01"], tmp_path / "late")
    early = _tables_window(paths, ["--until", "2025-12-31"], tmp_path / "early")
    ties = build_site_data(paths)["ties"]
    with chromium() as driver:
        driver.get(index.as_uri())
        assert driver.title == "LookBench leaderboard"
        shown = _shown(driver, "fine_recall@1")
        assert {key: v[:2] for key, v in shown.items()} == _expected(full, "fine_recall@1")
        python_ranks = {(run, scope): label for scope, rows in ties["fine_recall@1"].items() for run, label, _ in rows}
        assert {key: v[2] for key, v in shown.items()} == python_ranks
        assert _flags(driver) == {0: set(), 1: {"date"}, 2: {"data", "unknown"}}
        assert driver.find_elements("css selector", "tbody.published tr.published-row")
        driver.find_element("id", "show-published").click()
        assert not driver.find_elements("css selector", "tbody.published tr.published-row")
        assert len(driver.find_elements("css selector", "#chart-recall polyline.curve")) == 3
        assert len(driver.find_elements("css selector", "#chart-scatter circle.point")) == 2
        assert driver.find_elements("css selector", "#chart-categories rect.bar")
        assert driver.find_elements("css selector", "#attributes tr[data-group]")
        header_flags = driver.find_elements("css selector", "#categories th span.flag")
        assert sorted(f.get_attribute("data-kind") for f in header_flags) == ["data", "date", "unknown"]
        labels = {a.text for a in driver.find_elements("css selector", 'table.board a[href^="#model-"]')}
        assert NASTY_NAME in labels and not driver.find_elements("css selector", "table.board img")
        driver.save_screenshot(str(artifacts / "leaderboard.png"))

        driver.execute_script("document.getElementById('since').value = '2026-01-01';")
        driver.find_element("id", "apply").click()
        counts = driver.find_elements("css selector", "#window-counts li")
        assert [(c.get_attribute("data-kept"), c.get_attribute("data-total")) for c in counts] == [("24", "48")] * 3
        assert {k: v[:2] for k, v in _shown(driver, "fine_recall@1").items()} == late["fine_recall@1"]
        assert _flags(driver) == {0: set(), 1: set(), 2: {"data", "unknown"}}  # twin: cutoff before 2026
        for family, k, metric in (
            ("ndcg", 5, "ndcg@5"),
            ("mrr", 10, "mrr@10"),
            ("outfit_recall", None, "outfit_recall@1"),
        ):
            _choose(driver, family, k)
            assert {key: v[:2] for key, v in _shown(driver, metric).items()} == late[metric], metric
        driver.save_screenshot(str(artifacts / "leaderboard-window.png"))

        driver.execute_script(
            "document.getElementById('since').value = ''; document.getElementById('until').value = '2025-12-31';"
        )
        driver.find_element("id", "apply").click()
        _choose(driver, "fine_recall", 1)
        assert {k: v[:2] for k, v in _shown(driver, "fine_recall@1").items()} == early["fine_recall@1"]
        assert _flags(driver) == {0: set(), 1: {"date"}, 2: {"data", "unknown"}}  # window starts 2025-12-01

        driver.find_element("id", "reset").click()
        _choose(driver, "coarse_recall", 5)
        assert {key: v[:2] for key, v in _shown(driver, "coarse_recall@5").items()} == _expected(
            full, "coarse_recall@5"
        )
        assert driver.title == "LookBench leaderboard"
        assert _errors(driver) == []


def test_report_in_chromium(synth_runs: tuple[Path, list[Path]], tmp_path: Path, artifacts: Path) -> None:
    from selenium.webdriver.support.ui import Select

    _, paths = synth_runs
    index = build_report(paths[2], tmp_path / "report", per_subset=6)
    with chromium() as driver:
        driver.get(index.as_uri())
        cards = driver.find_elements("css selector", "article.query")
        assert len(cards) == 12
        assert driver.find_element("id", "shown-count").text == "12 of 12 queries shown"
        first = cards[0]
        assert len(first.find_elements("css selector", "li.hit")) == 5
        assert first.find_elements("css selector", "li.hit img")
        natural = driver.execute_script("return arguments[0].naturalWidth;", first.find_element("css selector", "img"))
        assert natural > 0
        Select(driver.find_element("id", "filter-subset")).select_by_value("real_streetlook")
        assert driver.find_element("id", "shown-count").text == "6 of 12 queries shown"
        visible = [c for c in cards if c.is_displayed()]
        assert {c.get_attribute("data-subset") for c in visible} == {"real_streetlook"}
        assert all(c.find_elements("css selector", "img.photo") for c in visible)
        assert NASTY_NAME in driver.find_element("tag name", "h1").text
        driver.save_screenshot(str(artifacts / "report.png"))
        assert _errors(driver) == []
