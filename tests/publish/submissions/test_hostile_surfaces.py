"""Hostile submissions met by `submit`, `leaderboard`, `tables` and `card`: one line and exit 2 for the bad input,
nothing written outside the output folder, and the valid submissions beside a bad one still listed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError
from submission_kit import Run, build_run, reseal, runner

from lookbench._util.outfolder import claim_output_folder
from lookbench.cli.main import app
from lookbench.results.audit_schema import EmbeddingProbe, ImageStatisticsProbe

FOLDER = Path("no_revision_available") / "v20260201"
NOT_FRACTIONS = {"nan": "NaN", "inf": "Infinity", "negative": "-0.25", "absurd": "7.5"}


@pytest.fixture(name="run", scope="module")
def run_fixture(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return build_run(tmp_path_factory.mktemp("surfaces"))


def invoke(*args: str) -> tuple[int, str]:
    outcome = runner.invoke(app, list(args))
    return outcome.exit_code, " ".join(outcome.output.split())


def copy_pair(run: Run, folder: Path, name: str = "tiny.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run.result, folder / name)
    shutil.copyfile(run.result.with_name("tiny.per_query.parquet"), folder / "tiny.per_query.parquet")
    return folder / name


def set_metric(path: Path, text: str) -> None:
    """Write `text` as the overall Fine R@1 value, as a forger with a text editor would (NaN and Infinity too)."""
    data = json.loads(path.read_text())
    data["metrics"]["overall"]["fine_recall@1"]["value"] = 0.123456
    path.write_text(json.dumps(data).replace("0.123456", text))


def test_submit_refuses_a_model_folder_linked_out_of_the_repository(run: Run, tmp_path: Path) -> None:
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    claim_output_folder(repo, "submit")  # a submissions repository of lookbench's own, where a link was planted
    elsewhere.mkdir()
    os.symlink(elsewhere, repo / "tiny")
    code, text = invoke("submit", str(run.result), "--out", str(repo), "--embeddings", str(run.embeddings))
    assert code == 2
    assert f"{repo / 'tiny'}: a symbolic link; a bundle folder must lie inside {repo}" in text
    assert not list(elsewhere.iterdir())


@pytest.mark.parametrize("name", ["manifest.json", "card.json", "environment.json"])
def test_submit_refuses_a_result_named_like_a_bundle_file(run: Run, tmp_path: Path, name: str) -> None:
    result = copy_pair(run, tmp_path / "in", name)
    code, text = invoke("submit", str(result), "--out", str(tmp_path / "repo"))
    assert code == 2
    assert f"a bundle writes its own {name}; rename the result pair first" in text
    assert not (tmp_path / "repo").exists()


def _bundle(run: Run, repo: Path, embeddings: bool = True, model: str = "tiny") -> Path:
    args = ["submit", str(run.result), "--out", str(repo)] + (
        ["--embeddings", str(run.embeddings)] if embeddings else []
    )
    code, text = invoke(*args)
    assert code == 0, text
    return repo / model / FOLDER


def leaderboard(repo: Path, site: Path) -> tuple[int, str, dict[str, str]]:
    code, text = invoke("leaderboard", str(repo), "--out", str(site), "--no-published")
    if code != 0:
        return code, text, {}
    data = json.loads((site / "data.json").read_text())
    return code, text, {r["label"]: r["verification"]["status"] for r in data["runs"]}


def test_leaderboard_lists_the_valid_bundle_beside_broken_ones(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _bundle(run, repo)
    skipping = _bundle(build_run(tmp_path / "skip", seed=1, card={"name": "skipping"}), repo, False, "skipping")
    data = json.loads((skipping / "tiny.json").read_text())
    data["skipped"] = [{"subset": "real_studio_flat", "split": "gallery", "row": 99, "error": "undecodable"}]
    (skipping / "tiny.json").write_text(json.dumps(data))
    broken = _bundle(build_run(tmp_path / "nan", seed=2, card={"name": "broken"}), repo, True, "broken")
    set_metric(broken / "tiny.json", "NaN")
    for bundle in (skipping, broken):
        reseal(bundle)
    code, text, status = leaderboard(repo, tmp_path / "site")
    assert code == 0, text
    assert status == {"tiny": "verified"}
    assert "field skipped[0].row is 99" in text and "fine_recall@1.value" in text and "Traceback" not in text


def test_leaderboard_lists_a_copied_bundle_once(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    bundle = _bundle(run, repo)
    shutil.copytree(bundle, repo / "tiny" / "copy" / "v20260201")
    code, text, status = leaderboard(repo, tmp_path / "site")
    assert code == 0, text
    assert status == {"tiny": "verified"}
    assert "a moved or copied bundle" in text


def test_leaderboard_refuses_a_snapshot_shipped_inside_the_repository(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    bundle = _bundle(run, repo)
    shipped = repo / "official"
    shutil.copytree(run.snapshot, shipped)  # the same content hash: it would pass for the official one
    (shipped / "AUDIT.json").write_text("{}")
    data = json.loads((bundle / "tiny.json").read_text())
    data["snapshot"]["location"] = str(shipped)
    (bundle / "tiny.json").write_text(json.dumps(data))
    reseal(bundle)
    code, text, status = leaderboard(repo, tmp_path / "site")
    assert code == 2  # its only bundle is left out: nothing to show
    assert "field snapshot.location" in text and "inside the results repository" in text


@pytest.mark.parametrize("value", list(NOT_FRACTIONS.values()), ids=list(NOT_FRACTIONS))
def test_leaderboard_of_a_result_file_refuses_a_metric_that_is_not_a_fraction(
    run: Run, tmp_path: Path, value: str
) -> None:
    result = copy_pair(run, tmp_path / "in")
    set_metric(result, value)
    code, text = invoke("leaderboard", str(result), "--out", str(tmp_path / "site"), "--no-published")
    assert code == 2
    assert "field metrics.overall.fine_recall@1.value" in text and "not a fraction in [0, 1]" in text
    assert "Traceback" not in text


@pytest.mark.parametrize("value", list(NOT_FRACTIONS.values()), ids=list(NOT_FRACTIONS))
def test_tables_refuses_a_metric_that_is_not_a_fraction(run: Run, tmp_path: Path, value: str) -> None:
    result = copy_pair(run, tmp_path / "in")
    set_metric(result, value)
    code, text = invoke("tables", str(result), "--out", str(tmp_path / "out"))
    assert code == 2
    assert "field metrics.overall.fine_recall@1.value" in text and "not a fraction in [0, 1]" in text
    assert not (tmp_path / "out").exists()


def test_tables_refuses_an_inverted_interval(run: Run, tmp_path: Path) -> None:
    result = copy_pair(run, tmp_path / "in")
    data = json.loads(result.read_text())
    entry = data["metrics"]["overall"]["fine_recall@1"]
    entry["ci_low"], entry["ci_high"] = 0.9, 0.1
    result.write_text(json.dumps(data))
    code, text = invoke("tables", str(result))
    assert code == 2
    assert "field metrics.overall.fine_recall@1" in text and "interval [0.9, 0.1] is inverted" in text


@pytest.mark.parametrize("value", list(NOT_FRACTIONS.values()), ids=list(NOT_FRACTIONS))
def test_card_refuses_a_metric_that_is_not_a_fraction(run: Run, tmp_path: Path, value: str) -> None:
    result = copy_pair(run, tmp_path / "in")
    set_metric(result, value)
    readme = tmp_path / "README.md"
    code, text = invoke("card", str(result), "--readme", str(readme), "--dataset", "srpone/look-bench")
    assert code == 2
    assert "field metrics.overall.fine_recall@1.value" in text and ".nan" not in text
    assert not readme.exists()


@pytest.mark.parametrize(
    "probe",
    [
        lambda: ImageStatisticsProbe(auc=1.4, ci=(0.5, 0.6)),
        lambda: ImageStatisticsProbe(auc=float("nan"), ci=None),
        lambda: ImageStatisticsProbe(auc=0.7, ci=(0.8, 0.6)),
        lambda: EmbeddingProbe(model="m", auc=-0.1, ci=None),
        lambda: EmbeddingProbe(model="m", auc=0.5, ci=(0.4, 1.5)),
    ],
    ids=["auc-above-1", "auc-nan", "inverted-ci", "auc-negative", "ci-above-1"],
)
def test_an_audit_auc_outside_0_1_or_an_inverted_interval_is_refused(probe: object) -> None:
    with pytest.raises(ValidationError, match="not a fraction in|is inverted"):
        probe()  # type: ignore[operator]
