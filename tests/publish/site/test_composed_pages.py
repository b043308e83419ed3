"""Composed subsets on the leaderboard and in the visual report: scopes, per-query values, marks, browser numbers."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from browser import available, chromium, open_page
from typer.testing import CliRunner

from evaluation.composed.composedkit import composed_snapshot
from lookbench.cli.main import app
from lookbench.errors import ResultError
from lookbench.evaluation.composed.relevance import target_attributes
from lookbench.publish.reports.encode import NDCG_SCALE, Vocab, encode_queries
from lookbench.publish.reports.images import ImageTable
from lookbench.publish.reports.retrieval import confusions, query_cards
from lookbench.publish.reports.site import build_site
from lookbench.publish.reports.sitedata import build_site_data, load_runs
from lookbench.results.io import load_result, load_with_per_query
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.composed import read_composed_queries

DATES = {
    "composed": ["2026-02-01", "2026-01-02", "2026-02-03", "2026-02-04"],
    "real_studio_flat": ["2026-01-01", "2026-02-01"],
}
"""Query dates; a window keeps or drops a reference's queries together (the first three share reference r1)."""


def _date(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def _run(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module", name="runs")
def runs_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A dated composed snapshot and three runs: image only and arithmetic (both subsets), composed only."""
    root = tmp_path_factory.mktemp("composed-site")
    snap, vectors = composed_snapshot(root)
    for subset, dates in DATES.items():
        path = snap / subset / "query.parquet"
        table = pq.read_table(path)
        stamps = pa.array([_date(d) for d in dates], pa.timestamp("us", tz="UTC"))
        pq.write_table(table.append_column("first_seen_at", stamps), path)
    paths = []
    for name, extra in (("image", ()), ("arithmetic", ()), ("composed-only", ("--subsets", "composed"))):
        method = "image" if name != "arithmetic" else "arithmetic"
        out = root / f"{name}.json"
        model = f"embeddings:{vectors}"
        _run("eval", "-s", str(snap), "-m", model, "-o", str(out), "--resamples", "50", "--compose", method, *extra)
        paths.append(out)
    return snap, paths


def _tables(paths: list[Path], metrics: str, out: Path, *window: str) -> dict[tuple[str, int, str], str]:
    """What `lookbench tables` reports: {(metric, run, scope): percent text}, runs numbered in the order given."""
    _run("tables", *map(str, paths), *window, "--metrics", metrics, "--out", str(out))
    labels: dict[str, list[str]] = {}
    out_values = {}
    with (out / "tables.csv").open() as fh:
        for r in csv.DictReader(fh):
            runs = labels.setdefault(r["metric"], [])
            if r["model"] not in runs:
                runs.append(r["model"])
            out_values[(r["metric"], runs.index(r["model"]), r["subset"])] = f"{100 * float(r['value']):.2f}"
    return out_values


def test_site_data_ranks_composed_scopes_apart_from_overall(runs: tuple[Path, list[Path]]) -> None:
    _, paths = runs
    data = build_site_data(paths)
    assert data["scopes"] == ["real_studio_flat", "overall", "composed"] and data["composed"] == ["composed"]
    assert {"recall", "map"} <= set(data["families"]) and "hard_negative" not in data["families"]
    image, arithmetic = data["runs"][0], data["runs"][1]
    _, per_query = load_with_per_query(paths[0])
    assert per_query is not None
    composed = np.array([s == "composed" for s in per_query["subset"].to_pylist()])
    relevant = per_query["relevant"].to_pylist()
    expected = [
        next((k + 1 for k, f in enumerate(flags) if f), 0) if c else None
        for c, flags in zip(composed, relevant, strict=True)
    ]
    assert image["q"]["recall"] == expected  # first relevant rank; image queries have no Recall (no legacy protocol)
    assert [v is None for v in image["q"]["item"]] == composed.tolist()  # composed queries have no Item Recall
    assert [v is None for v in image["q"]["ndcg"]["5"]] == composed.tolist()
    maps = per_query["map@5"].to_pylist()
    assert image["q"]["map"]["5"] == [None if v is None else round(v * NDCG_SCALE) for v in maps]
    # arithmetic answers every composed query at rank 1, image only none: ranked apart on the composed scope
    ranks = {row[0]: row[1] for row in data["ties"]["recall@1"]["composed"]}
    assert ranks[1] == "1" and ranks[0] != "1"
    assert "composed" not in data["ties"]["ndcg@5"] and "overall" not in data["ties"]["map@5"]
    overall = data["ties"]["fine_recall@1"]["overall"]
    assert len(overall) == 2 and all(row[3] == 0 for row in overall)  # the composed-only run has no overall
    assert image["metrics"]["overall"]["fine_recall@1"]["n"] == 2  # overall holds only the image queries
    assert arithmetic["metrics"]["composed"]["recall@1"]["v"] == 1.0
    only = build_site_data(paths[2:])  # a composed-only run is on the page now
    assert only["scopes"] == ["composed"]


def test_a_per_query_file_whose_recall_disagrees_with_its_flags_is_refused(runs: tuple[Path, list[Path]]) -> None:
    _, paths = runs
    (run,) = load_runs(paths[:1])
    table = run.per_query
    index = table.column_names.index("recall@1")
    flipped = [None if v is None else 1.0 - v for v in table["recall@1"].to_pylist()]
    broken = table.set_column(index, "recall@1", pa.array(flipped, pa.float64()))
    with pytest.raises(ResultError, match="recall@1 disagrees with the stored relevant flags"):
        encode_queries(broken, run.result.snapshot.id, Vocab(), Vocab(), Vocab(), None)


def test_report_cards_show_text_changes_and_marked_target_attributes(
    runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    snap, paths = runs
    snapshot = open_snapshot(snap)
    _, per_query = load_with_per_query(paths[0])
    assert per_query is not None
    subsets = per_query["subset"].to_pylist()
    rows = [i for i, s in enumerate(subsets) if s == "composed"]
    cards = query_cards(snapshot, per_query, rows, ImageTable())
    queries = read_composed_queries(snapshot, "composed")
    for card, index in zip(cards, rows, strict=True):
        row = per_query["query_row"][index].as_py()
        reference = queries.labels.attribute_set(row)
        wanted = target_attributes(reference, queries.changes[row])
        assert card.text == queries.texts[row] and card.attributes == sorted(wanted)
        assert card.changed == sorted(c.target for c in queries.changes[row] if c.target)
        assert len(card.changes) == len(queries.changes[row])
        flags = per_query.slice(index, 1).to_pylist()[0]
        assert [h.relevant for h in card.hits] == flags["relevant"][: len(card.hits)]
        assert [h.hard_negative for h in card.hits] == flags["hard_negative"][: len(card.hits)]
        assert card.fine_at_1 == flags["relevant"][0]
        for hit in card.hits:
            if hit.compared:  # an old value the result still has is shown; the target's are matched or missing
                assert set(hit.matched) | set(hit.missing) == wanted
                assert set(hit.unchanged) <= reference - wanted
    first = cards[0]
    assert first.changes == ["sleeve length: long sleeve \u2192 short sleeve"]
    assert any("long sleeve" in h.unchanged for h in first.hits if h.hard_negative)
    assert "composed" not in confusions(snapshot, per_query)  # a composed reference's main is not what is asked
    _run("report", str(paths[0]), "--out", str(tmp_path / "report"), "--per-category", "8")
    page = (tmp_path / "report" / "index.html").read_text()
    assert 'data-kind="composed"' in page and 'data-kind="image"' in page
    for header in ("Recall@10 %", "mAP@10 %", "Fine Recall@10 %", "Hard negative@10 % (lower is better)"):
        assert header in page
    assert "&ldquo;change sleeve length&rdquo;" in page and '<b class="changed">short sleeve</b>' in page
    assert page.count('class="mark relevant"') >= 1 and page.count('class="mark hardneg"') >= 1


@pytest.fixture(scope="module", name="driver")
def driver_fixture() -> Iterator[Any]:
    if not available():
        pytest.skip("needs Debian chromium + chromium-driver (scripts/ensure-chromium.sh)")
    with chromium(width=1400) as driver:
        yield driver


def _shown(driver: Any, metric: str) -> dict[tuple[int, str], str]:
    out = {}
    for cell in driver.find_elements("css selector", f'table.board[data-metric="{metric}"] td.value'):
        text = cell.get_attribute("textContent").split("[")[0].strip()
        out[(int(cell.get_attribute("data-run")), cell.get_attribute("data-scope"))] = text
    return out


def test_browser_numbers_for_composed_scopes_equal_python(
    driver: Any, runs: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    _, paths = runs
    index = build_site(paths, tmp_path / "site")
    results = [load_result(p) for p in paths]
    open_page(driver, index.as_uri())
    for family, k in (("recall", 1), ("map", 5), ("fine_recall", 1)):
        Select(driver.find_element("id", "family")).select_by_value(family)
        Select(driver.find_element("id", "k")).select_by_value(str(k))
        metric = f"{family}@{k}"
        expected = {
            (i, scope): f"{100 * values[metric].value:.2f}"
            for i, result in enumerate(results)
            for scope, values in result.metrics.items()
            if metric in values
        }
        assert _shown(driver, metric) == expected
    # the composed scope's breakdowns per changed group and per number of changes equal the result files'
    Select(driver.find_element("id", "family")).select_by_value("recall")
    Select(driver.find_element("id", "k")).select_by_value("1")
    Select(driver.find_element("id", "subset")).select_by_value("composed")
    assert driver.find_element("id", "composed-breakdowns").is_displayed()
    for table, name in (("change-groups", "change_group"), ("change-counts", "num_changes")):
        shown = {
            (int(cell.get_attribute("data-run")), row.get_attribute("data-group")): cell.text
            for row in driver.find_elements("css selector", f"#{table} tbody tr")
            for cell in row.find_elements("css selector", "td[data-run]")
        }
        expected = {
            (i, key): f"{100 * values['recall@1'].value:.2f} ({values['recall@1'].n})"
            for i, result in enumerate(results)
            for key, values in result.breakdowns["composed"][name].items()
        }
        assert shown == expected
    Select(driver.find_element("id", "subset")).select_by_value("real_studio_flat")
    assert not driver.find_element("id", "composed-breakdowns").is_displayed()
    Select(driver.find_element("id", "subset")).select_by_value("all")
    # a window: the page recomputes from the per-query arrays what `lookbench tables --since` computes
    window = _tables(paths[:2], "recall@1,map@5,fine_recall@1", tmp_path / "tables", "--since", "2026-02-01")
    assert {(m, scope) for m, _, scope in window} >= {("recall@1", "composed"), ("map@5", "composed")}
    driver.execute_script("document.getElementById('since').value = '2026-02-01';")
    driver.find_element("id", "apply").click()
    for metric in ("recall@1", "map@5", "fine_recall@1"):
        family, k = metric.split("@")
        Select(driver.find_element("id", "family")).select_by_value(family)
        Select(driver.find_element("id", "k")).select_by_value(k)
        shown = _shown(driver, metric)
        expected = {
            (run, scope): value
            for (m, run, scope), value in window.items()
            if m == metric and scope in ("composed", "overall")
        }
        assert {key: v for key, v in shown.items() if key[0] < 2 and key[1] in ("composed", "overall")} == expected
    kept = [li.get_attribute("data-kept") for li in driver.find_elements("css selector", "#window-counts li")]
    assert kept == ["4", "4", "3"]  # every query of the window, image and composed
    assert not [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
