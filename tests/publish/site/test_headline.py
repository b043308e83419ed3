"""The headline table on a two-release board with a page window: marks within a release, ranking, widths, axe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import NEEDS_CHROMIUM, chromium
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401
from synth_runs import copy_run, older_release

from lookbench.evaluation.contamination.tables import windowed_runs
from lookbench.publish.reports.site import build_site
from lookbench.results.schema import MetricValue

pytestmark = NEEDS_CHROMIUM

SINCE = "2026-01-01"
COLUMNS = (("overall", "fine_recall@1"), ("real_studio_flat", "fine_recall@1"), ("real_streetlook", "ndcg@5"))


def _reseeded(result: dict[str, Any]) -> None:
    result["config"]["bootstrap"]["seed"] = 7


@pytest.fixture(scope="module", name="board")
def board_fixture(synth_runs: tuple[Path, list[Path]], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three runs on v20260201 (one of them twice, differing only by seed) and two on v20251215."""
    _, paths = synth_runs
    folder = tmp_path_factory.mktemp("board")
    old = [copy_run(paths[i], folder / f"{paths[i].stem}-old.json", older_release) for i in (1, 2)]
    return [*paths, copy_run(paths[0], folder / "sharp-seed7.json", _reseeded), *old]


def _cell(row: Any, scope: str, metric: str) -> Any:
    return row.find_element("css selector", f'td[data-scope="{scope}"][data-metric="{metric}"]')


def _rows(driver: Any) -> list[Any]:
    return driver.find_elements("css selector", "table.headline tbody tr")


def _expected_best(values: dict[str, MetricValue]) -> str:
    return max(values, key=lambda stem: values[stem].value)


@pytest.mark.parametrize("width", [1366, 390])
def test_marks_ranking_and_widths_on_a_two_release_board_with_a_window(
    board: list[Path], tmp_path: Path, width: int
) -> None:
    index = build_site(board, tmp_path / "site")
    cut = {w.path.stem: w.result for w in windowed_runs(board, np.datetime64(SINCE, "us"), None)}
    with chromium(width=width, height=900) as driver:
        driver.get(index.as_uri() + f"#since={SINCE}")
        releases = [o.text for o in driver.find_elements("css selector", "#release option")]
        assert [r.split(",")[0] for r in releases] == ["v20260201", "v20251215"]  # newest first
        for block, stems in enumerate((["sharp", "twin", "blurry", "sharp-seed7"], ["twin-old", "blurry-old"])):
            driver.get(index.as_uri() + f"#since={SINCE}&rel={block}")
            rows = _rows(driver)
            ids = {
                json.loads(driver.execute_script("return document.getElementById('lookbench-data').textContent"))[
                    "runs"
                ][int(r.get_attribute("data-run"))]["id"]: r
                for r in rows
            }
            assert sorted(ids) == sorted(stems)  # only this release's runs
            overall = {s: cut[s].metrics["overall"]["fine_recall@1"].value for s in stems}
            assert list(ids) == sorted(stems, key=lambda s: -overall[s])  # ranked by Overall Fine R@1, by hand
            for scope, metric in COLUMNS:
                best = _expected_best({s: cut[s].metrics[scope][metric] for s in stems})
                marks = {s: _cell(r, scope, metric).get_attribute("data-mark") for s, r in ids.items()}
                assert marks[best] == "best" and list(marks.values()).count("best") == 1, (scope, metric, marks)
                for stem, row in ids.items():
                    value = cut[stem].metrics[scope][metric].value
                    assert _cell(row, scope, metric).text.startswith(f"{100 * value:.2f}")
            table = driver.find_element("css selector", "table.headline")
            box = driver.execute_script(
                "var t = arguments[0], b = t.parentNode; return [t.scrollWidth, b.clientWidth, "
                "document.documentElement.scrollWidth, document.documentElement.clientWidth]",
                table,
            )
            assert box[0] <= box[1] and box[2] <= box[3], box  # no sideways scroll, in the box or the page
        # sortable by any column (c0: the first paper column, RealStudioFlat Fine R@1): lowest first on a second click
        key = driver.find_element("css selector", 'table.headline button.sort[data-key="c0"]')
        key.click()
        driver.find_element("css selector", 'table.headline button.sort[data-key="c0"]').click()
        shown = [float(_cell(r, "real_studio_flat", "fine_recall@1").text.split()[0]) for r in _rows(driver)]
        by_hand = sorted(
            100 * cut[s].metrics["real_studio_flat"]["fine_recall@1"].value for s in ("twin-old", "blurry-old")
        )
        assert shown == [float(f"{v:.2f}") for v in by_hand] and "osort=c0.asc" in driver.current_url
        labels = [o.text for o in driver.find_elements("css selector", "#baseline option")]
        assert "sharp (seed 0)" in labels and "sharp (seed 7)" in labels  # runs differing by seed told apart
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.slow
def test_axe_finds_no_serious_or_critical_violation(board: list[Path], tmp_path: Path) -> None:
    axe = pytest.importorskip("axe_core_python", reason="axe-core ships with the dev extra (axe-core-python)")
    script = (Path(axe.__file__).parent / "axe.min.js").read_text("utf-8")
    index = build_site(board, tmp_path / "site")
    for width in (1366, 390):
        with chromium(width=width, height=900) as driver:
            driver.get(index.as_uri() + f"#since={SINCE}")
            driver.execute_script(script)
            found = driver.execute_async_script(
                "var done = arguments[arguments.length - 1];"
                "axe.run(document, {resultTypes: ['violations']}).then(function (r) { done(r.violations.map("
                "function (v) { return [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')]; })); });"
            )
            assert [v for v in found if v[1] in ("serious", "critical")] == [], found
            assert [v for v in found if v[0] in ("heading-order", "page-has-heading-one")] == [], found
