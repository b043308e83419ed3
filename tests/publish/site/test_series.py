"""Runs on several releases: the series view's structure and the before/after-cutoff difference."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401
from synth_runs import NASTY_NAME, copy_run, older_release
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.evaluation.contamination.tables import windowed_runs
from lookbench.publish.reports.paper import build_paper_table
from lookbench.publish.reports.sitedata import build_site_data


@pytest.fixture(name="series_runs")
def series_runs_fixture(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> list[Path]:
    """sharp, twin, blurry on v20260201 and twin again on a v20251215 release."""
    _, paths = synth_runs
    return [*paths, copy_run(paths[1], tmp_path / "twin-v20251215.json", older_release)]


def _overall(paths: list[Path], out: Path, *window: str) -> tuple[float, int]:
    r = CliRunner().invoke(app, ["tables", *map(str, paths), *window, "--metrics", "fine_recall@1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    with (out / "tables.csv").open() as fh:
        row = next(r for r in csv.DictReader(fh) if r["subset"] == "overall")
    return float(row["value"]), int(row["n"])


def test_series_groups_runs_by_release(series_runs: list[Path], tmp_path: Path) -> None:
    data = build_site_data(series_runs)
    series = data["series"]
    assert [r["id"] for r in series["releases"]] == ["v20251215", "v20260201"]  # oldest first
    twin = next(m for m in series["models"] if m["model"] == "twin")
    assert twin["runs"] == {"v20260201": 1, "v20251215": 3}
    assert twin["bound"] == {"day": "2025-12-20", "text": "2025-12-20", "release": False}
    blurry = next(m for m in series["models"] if m["model"].startswith("blurry"))
    assert blurry["split"] is None and "no training cutoff and no release date" in blurry["splitNote"]
    # never ranked together: the older release's run is alone in its group on every board
    for scope, rows in data["ties"]["fine_recall@1"].items():
        groups = {row[3] for row in rows if row[0] == 3}
        assert all(row[3] not in groups for row in rows if row[0] != 3), scope


def test_before_after_cutoff_difference_equals_the_windowed_tables(series_runs: list[Path], tmp_path: Path) -> None:
    split = next(m for m in build_site_data(series_runs)["series"]["models"] if m["model"] == "twin")["split"]
    twin = series_runs[1]
    after, n_after = _overall([twin], tmp_path / "after", "--since", "2025-12-21")
    before, n_before = _overall([twin], tmp_path / "before", "--until", "2025-12-20")
    assert split["diff"] == pytest.approx(after - before)  # the two releases hold the same queries here
    assert (split["before"], split["after"]) == (2 * n_before, 2 * n_after)
    assert split["ci_low"] <= split["diff"] <= split["ci_high"]


def test_a_single_release_has_no_series(synth_runs: tuple[Path, list[Path]]) -> None:
    _, paths = synth_runs
    assert build_site_data(paths)["series"] is None


def test_the_overview_names_the_release_of_each_row_in_a_series(series_runs: list[Path]) -> None:
    table = build_paper_table(windowed_runs(series_runs, None, None), baseline="twin-v20251215")
    assert table.groups is not None and [g.split(",")[0] for g in table.groups] == ["v20260201", "v20251215"]
    assert {r.run for r in table.rows} == {"sharp", "twin (v20260201)", NASTY_NAME, "twin (v20251215)"}
    old = [r for r in table.rows if r.group == 1]
    assert [r.run for r in old] == ["twin (v20251215)"]
    assert all(not c.mark for c in old[0].cells)  # alone on its release: nothing to be best against
    assert next(r for r in table.rows if r.run == "twin (v20260201)").difference is None  # other release
