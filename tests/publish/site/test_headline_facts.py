"""Model facts in the headline table: the columns toggle, filters keep the block's ranks, widths and axe."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import NEEDS_CHROMIUM, chromium, open_page
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401
from synth_runs import copy_run, older_release

from lookbench.models.meta import ModelMeta
from lookbench.publish.reports.site import build_site
from lookbench.results.io import load_result

pytestmark = NEEDS_CHROMIUM

Edit = Callable[[dict[str, Any]], None]
CARDS: dict[str, dict[str, Any]] = {
    "sharp": {"license": "MIT", "open_weights": True, "weights_source": "https://example.org/sharp"},
    "twin": {"license": "proprietary <b>", "open_weights": False, "weights_source": "javascript:alert(1)"},
    "blurry": {"embed_dim": "unknown"},
    "sharp-seed7": {"license": "apache-2.0", "open_weights": True},
}
CHECKED = {"sharp": ("verified", "re-scored"), "twin": ("unverified", "no embeddings"), "sharp-seed7": ("verified", "")}
BLOCK = ["sharp", "twin", "blurry", "sharp-seed7"]


def _carded(card: dict[str, Any], *more: Edit) -> Edit:
    def edit(result: dict[str, Any]) -> None:
        result["model"]["meta"].update(card)
        for other in more:
            other(result)

    return edit


def _reseeded(result: dict[str, Any]) -> None:
    result["config"]["bootstrap"]["seed"] = 7


@pytest.fixture(scope="module", name="board")
def board_fixture(synth_runs: tuple[Path, list[Path]], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """sharp, twin, blurry and sharp (seed 7) on v20260201 with the cards above; twin again on v20251215."""
    _, (sharp, twin, blurry) = synth_runs
    folder = tmp_path_factory.mktemp("facts")
    sources = {"sharp": sharp, "twin": twin, "blurry": blurry, "sharp-seed7": sharp}
    extra = {"sharp-seed7": [_reseeded]}
    paths = [copy_run(sources[s], folder / f"{s}.json", _carded(CARDS[s], *extra.get(s, []))) for s in BLOCK]
    return [*paths, copy_run(twin, folder / "twin-old.json", _carded(CARDS["twin"], older_release))]


@pytest.fixture(scope="module", name="site")
def site_fixture(board: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built page, with verification for three runs."""
    checked = {p: CHECKED[p.stem] for p in board if p.stem in CHECKED}
    return build_site(board, tmp_path_factory.mktemp("site") / "site", verification=checked)


@pytest.fixture(scope="module", name="driver")
def driver_fixture() -> Iterator[Any]:
    """One desktop Chromium for the module's tests (the site keeps its state in the URL only; each test loads anew)."""
    with chromium(width=1366, height=900) as driver:
        yield driver


def _meta(board: list[Path], stem: str) -> ModelMeta:
    return load_result(next(p for p in board if p.stem == stem)).model.meta


def _expected_facts(meta: ModelMeta, stem: str) -> dict[str, str | None]:
    """Each fact's data-value as computed here from the result file's card (None: shown as a dash)."""
    dim = meta.embed_dim if isinstance(meta.embed_dim, int) else None
    open_weights = meta.open_weights if isinstance(meta.open_weights, bool) else None
    return {
        "params": None if meta.parameters is None else str(meta.parameters),
        "dim": None if dim is None else str(dim),
        "open": None if open_weights is None else str(open_weights).lower(),
        "lic": meta.license,
        "cutoff": meta.cutoff_text,
        "ver": CHECKED[stem][0] if stem in CHECKED else None,
    }


def _rows(driver: Any) -> dict[str, Any]:
    data = json.loads(driver.execute_script("return document.getElementById('lookbench-data').textContent"))
    rows = driver.find_elements("css selector", "table.headline tbody tr[data-run]")
    return {data["runs"][int(r.get_attribute("data-run"))]["id"]: r for r in rows}


def _fits(driver: Any) -> list[int]:
    return list(
        driver.execute_script(
            "var t = document.querySelector('table.headline'), b = t.parentNode; return [t.scrollWidth, "
            "b.clientWidth, document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
    )


def test_fact_columns_show_the_cards_facts_and_sort(board: list[Path], site: Path, driver: Any) -> None:
    data = json.loads((site.parent / "data.json").read_text())
    open_page(driver, site.as_uri())
    box = _fits(driver)
    assert box[0] <= box[1] and box[2] <= box[3], box  # facts hidden by default: no sideways scroll
    cells = driver.find_elements("css selector", "table.headline td.fact-col")
    assert cells and not any(c.is_displayed() for c in cells)
    driver.find_element("id", "show-facts").click()
    assert "facts=1" in driver.current_url
    rows = _rows(driver)
    assert sorted(rows) == sorted(BLOCK)
    for stem, row in rows.items():
        run = next(r for r in data["runs"] if r["id"] == stem)
        shown = {c.get_attribute("data-fact"): c for c in row.find_elements("css selector", "td.fact-col")}
        expected = _expected_facts(_meta(board, stem), stem)
        assert list(shown) == list(expected)
        for key, want in expected.items():
            cell = shown[key]
            assert cell.is_displayed()
            if want is None:
                assert cell.text == "\u2013" and "not" in (cell.get_attribute("title") or ""), (stem, key)
            else:
                assert cell.get_attribute("data-value") == want, (stem, key)
        assert shown["lic"].text == (run["license"] or "\u2013")
        assert shown["dim"].text == (run["embedDim"] or "\u2013")
        assert shown["params"].text == {150_000_000: "150M", 400_000_000: "400M", None: "\u2013"}[run["params"]]
    assert _fits(driver)[2] <= _fits(driver)[3]  # the page itself never scrolls sideways
    driver.find_element("css selector", 'button.sort[data-key="f-params"]').click()
    rank = {s: int(r.get_attribute("data-rank")) for s, r in _rows(driver).items()}
    params = {s: _meta(board, s).parameters for s in BLOCK}
    assert list(rank) == sorted(BLOCK, key=lambda s: (params[s] is None, params[s] or 0, rank[s]))  # unknown last
    assert "osort=f-params.asc" in driver.current_url
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def _passes(meta: ModelMeta, stem: str, how: dict[str, Any]) -> bool:
    """Whether a run passes a filter, computed from its result file and the verification given to the site."""
    return (
        (not how.get("open") or meta.open_weights is True)
        and (not how.get("verified") or CHECKED.get(stem, ("",))[0] == "verified")
        and (not how.get("lic") or meta.license == how["lic"])
    )


@pytest.mark.parametrize(
    "how",
    [{"open": True}, {"verified": True}, {"lic": "MIT"}, {"lic": "proprietary <b>"}, {"open": True, "lic": "MIT"}],
    ids=["open", "verified", "mit", "proprietary", "open-mit"],
)
def test_filters_hide_exactly_the_runs_the_cards_rule_out(
    board: list[Path], site: Path, how: dict[str, Any], driver: Any
) -> None:
    from selenium.webdriver.support.ui import Select

    open_page(driver, site.as_uri())
    ranks = {s: r.get_attribute("data-rank") for s, r in _rows(driver).items()}
    assert sorted(ranks) == sorted(BLOCK)
    if how.get("open"):
        driver.find_element("id", "only-open").click()
    if how.get("verified"):
        driver.find_element("id", "only-verified").click()
    if how.get("lic"):
        Select(driver.find_element("id", "licence")).select_by_value(how["lic"])
    shown = {s: r.get_attribute("data-rank") for s, r in _rows(driver).items()}
    expected = [s for s in BLOCK if _passes(_meta(board, s), s, how)]
    assert sorted(shown) == sorted(expected), how
    assert shown == {s: ranks[s] for s in expected}  # filtered rows keep the block's ranks
    note = driver.find_element("id", "filter-note").text
    assert note.startswith(f"{len(expected)} of {len(BLOCK)} runs") and "keep their ranks" in note


def test_weights_links_only_for_http_urls(site: Path, driver: Any) -> None:
    open_page(driver, site.as_uri())
    links = [a.get_attribute("href") for a in driver.find_elements("css selector", "#model-cards a.weights-link")]
    assert links == ["https://example.org/sharp"]
    texts = [s.text for s in driver.find_elements("css selector", "#model-cards .weights-source")]
    assert any("javascript:alert(1)" in t for t in texts)  # shown as text, never a link
    assert not driver.find_elements("css selector", '#model-cards a[href^="javascript"]')


@pytest.mark.slow
def test_axe_in_both_states_and_phone_cards_show_the_facts(site: Path) -> None:
    axe = pytest.importorskip("axe_core_python", reason="axe-core ships with the dev extra (axe-core-python)")
    script = (Path(axe.__file__).parent / "axe.min.js").read_text("utf-8")
    for width in (1366, 390):
        with chromium(width=width, height=900) as driver:
            for state in ("", "#facts=1&open=1"):
                driver.get(site.as_uri() + state)
                driver.refresh()
                if width == 390:
                    cells = driver.find_elements("css selector", "table.headline td.fact-col")
                    assert cells and all(c.is_displayed() for c in cells)  # a card shows every fact
                else:
                    box = _fits(driver)
                    assert box[2] <= box[3] and (state or box[0] <= box[1]), box
                driver.execute_script(script)
                found = driver.execute_async_script(
                    "var done = arguments[arguments.length - 1];"
                    "axe.run(document, {resultTypes: ['violations']}).then(function (r) { done(r.violations.map("
                    "function (v) { return [v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' ')]; })); });"
                )
                assert [v for v in found if v[1] in ("serious", "critical")] == [], (width, state, found)
