"""`lookbench submit`, `verify` and `leaderboard RESULTS_REPO`: bundles that verify, and every kind of tampering."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from submission_kit import Run, build_run, reseal, runner

from lookbench._util.hashing import file_sha256
from lookbench._util.outfolder import MARKER_NAME
from lookbench.cli.main import app

REPO_FOLDER = Path("tiny") / "no_revision_available" / "v20260201"


@pytest.fixture(name="run", scope="module")
def run_fixture(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return build_run(tmp_path_factory.mktemp("submission"))


def submit(run: Run, repo: Path, embeddings: bool = True) -> Path:
    args = ["submit", str(run.result), "--out", str(repo)]
    args += ["--embeddings", str(run.embeddings)] if embeddings else []
    outcome = runner.invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    return repo / REPO_FOLDER


def verify(bundle: Path, snapshot: Path) -> tuple[int, str]:
    outcome = runner.invoke(app, ["verify", str(bundle), "--snapshot", str(snapshot)])
    return outcome.exit_code, " ".join(outcome.output.split())


def test_bundle_layout_lists_every_file_with_its_sha256(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo")
    manifest = json.loads((bundle / "manifest.json").read_text())
    expected = {
        "tiny.json",
        "tiny.per_query.parquet",
        "card.json",
        "environment.json",
        "embeddings/real_studio_flat/query.npy",
        "embeddings/real_studio_flat/gallery.npy",
        "embeddings/noise/gallery.npy",
    }
    assert set(manifest["files"]) == expected
    assert manifest["files"]["tiny.json"] == file_sha256(run.result)
    assert manifest["release"] == "v20260201" and manifest["embeddings"] == "embeddings"
    assert json.loads((bundle / "card.json").read_text())["card"]["training_cutoff"] == "2025-05-01"
    noise = "noise/gallery.npy"
    assert np.array_equal(np.load(bundle / "embeddings" / noise), np.load(run.embeddings / noise))


def test_verify_rescoring_embeddings_and_rankings(run: Run, tmp_path: Path) -> None:
    with_vectors = submit(run, tmp_path / "a")
    code, text = verify(with_vectors, run.snapshot)
    assert code == 0, text
    assert "verified" in text and "numbers match" in text
    rankings_only = submit(run, tmp_path / "b", embeddings=False)
    code, text = verify(rankings_only, run.snapshot)
    assert code == 0, text
    assert "unverified" in text and "re-scored from its own rankings (no embeddings)" in text


def test_submitting_twice_refuses_and_keeps_the_bundle(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo")
    before = (bundle / "manifest.json").read_bytes()
    outcome = runner.invoke(app, ["submit", str(run.result), "--out", str(tmp_path / "repo")])
    assert outcome.exit_code == 2
    assert "already there" in outcome.output
    assert (bundle / "manifest.json").read_bytes() == before


def test_submit_refuses_embeddings_of_the_wrong_shape(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "emb"
    for path in run.embeddings.rglob("*.npy"):
        target = bad / path.relative_to(run.embeddings)
        target.parent.mkdir(parents=True, exist_ok=True)
        np.save(target, np.load(path)[:-1] if path.parent.name == "noise" else np.load(path))
    outcome = runner.invoke(app, ["submit", str(run.result), "--out", str(tmp_path / "repo"), "--embeddings", str(bad)])
    assert outcome.exit_code == 2
    text = " ".join(outcome.output.split())
    assert "noise/gallery.npy" in text and "snapshot.noise_rows" in text and "(4, 16)" in text
    assert not (tmp_path / "repo").exists()


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda b: (b / "card.json").unlink(), "card.json: listed in manifest.json (field files) but missing"),
        (lambda b: (b / "notes.txt").write_text("hi"), "notes.txt: in the bundle but not listed in manifest.json"),
        (
            lambda b: (b / "environment.json").write_text((b / "environment.json").read_text() + " "),
            "environment.json: sha256 differs from manifest.json (field files.environment.json): edited",
        ),
    ],
)
def test_verify_names_a_missing_extra_or_edited_file(run: Run, tmp_path: Path, tamper: object, message: str) -> None:
    bundle = submit(run, tmp_path / "repo")
    tamper(bundle)  # type: ignore[operator]
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert message in text


def _change_one_digit(bundle: Path, name: str = "tiny.json") -> tuple[str, str]:
    """Change one digit of the first overall metric value that has a non-zero decimal; return (metric, new text)."""
    path = bundle / name
    result = json.loads(path.read_text())
    for metric, entry in result["metrics"]["overall"].items():
        text = repr(entry["value"])
        digits = [i for i, ch in enumerate(text) if ch.isdigit() and ch != "0" and i > 1]
        if digits:
            changed = text[: digits[0]] + str(int(text[digits[0]]) % 9 + 1) + text[digits[0] + 1 :]
            entry["value"] = float(changed)
            path.write_text(json.dumps(result))
            return metric, changed
    raise AssertionError("no metric value to change")


@pytest.mark.parametrize("embeddings", [True, False])
def test_verify_catches_a_number_changed_by_one_digit(run: Run, tmp_path: Path, embeddings: bool) -> None:
    bundle = submit(run, tmp_path / "repo", embeddings)
    metric, changed = _change_one_digit(bundle)
    code, text = verify(bundle, run.snapshot)
    assert code == 2 and "sha256 differs" in text and "tiny.json" in text
    reseal(bundle)  # the forger also rewrote the manifest
    code, text = verify(bundle, run.snapshot)
    assert code == 2, text
    assert f"field metrics.overall.{metric}.value is {changed}" in text


def test_verify_catches_resealed_embeddings_of_the_wrong_shape(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo")
    query = bundle / "embeddings/real_studio_flat/query.npy"
    np.save(query, np.load(query)[:, :8])
    reseal(bundle)
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "embeddings/real_studio_flat/query.npy: shape (12, 8)" in text and "field model.meta.embed_dim" in text
    np.save(query, np.load(query)[:-2, :])  # now two rows short, of the right dimension
    reseal(bundle)
    code, text = verify(bundle, run.snapshot)
    assert code == 2
    assert "query.npy: shape (10, 8)" in text and "field snapshot.subsets.real_studio_flat.queries" in text


def test_verify_refuses_another_snapshot(run: Run, tmp_path: Path) -> None:
    bundle = submit(run, tmp_path / "repo")
    other = build_run(tmp_path / "other", seed=1, queries=10)
    code, text = verify(bundle, other.snapshot)
    assert code == 2
    assert "field snapshot.content_hash" in text and "a different snapshot" in text


def test_verify_reports_a_training_cutoff_after_the_release_dates(tmp_path: Path) -> None:
    late = {"name": "late", "release_date": "2026-02-01", "training_cutoff": "2026-01-10", "training_data": []}
    run = build_run(tmp_path / "late", card=late)
    outcome = runner.invoke(app, ["submit", str(run.result), "--out", str(tmp_path / "repo")])
    assert outcome.exit_code == 0, outcome.output
    code, text = verify(tmp_path / "repo" / "late" / "no_revision_available" / "v20260201", run.snapshot)
    assert code == 0, text
    assert "training cutoff 2026-01-10 is on or after the window start 2025-12-01" in text


def test_leaderboard_marks_rows_and_leaves_out_a_forged_bundle(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    submit(run, repo)
    other = build_run(tmp_path / "other", seed=1, queries=10, card={**dict(name="other")})
    outcome = runner.invoke(app, ["submit", str(other.result), "--out", str(repo)])
    assert outcome.exit_code == 0, outcome.output
    forged_run = build_run(tmp_path / "forged", seed=2, card={"name": "forged"})
    outcome = runner.invoke(app, ["submit", str(forged_run.result), "--out", str(repo)])
    forged = repo / "forged" / "no_revision_available" / "v20260201"
    assert outcome.exit_code == 0, outcome.output
    _change_one_digit(forged, "tiny.json")
    reseal(forged)
    (other.snapshot.parent / "gone").mkdir()
    other.snapshot.rename(other.snapshot.parent / "gone" / other.snapshot.name)  # its snapshot is not at hand
    site = tmp_path / "site"
    outcome = runner.invoke(app, ["leaderboard", str(repo), "--out", str(site), "--no-published"])
    assert outcome.exit_code == 0, outcome.output
    assert "left out:" in outcome.output and "forged" in outcome.output
    data = json.loads((site / "data.json").read_text())
    status = {r["label"]: r["verification"]["status"] for r in data["runs"]}
    assert status == {"tiny": "verified", "other": "unverified"}
    # the verification note names the snapshot by id and content hash, never by where it lies on this disk
    notes = {r["label"]: r["verification"]["note"] for r in data["runs"]}
    assert re.fullmatch(
        r"300 numbers match, recomputed from its embeddings on v20260201 \([0-9a-f]{12}\)", notes["tiny"]
    )
    assert str(run.snapshot) not in (site / "index.html").read_text()


THUMBS = """
import numpy as np

class Thumbs:
    model_id, revision = "thumbs-4x4", "1"
    def embed(self, images):
        return np.stack([np.asarray(im.resize((4, 4)), np.float32).ravel() for im in images])

def make():
    return Thumbs()
"""


def test_submit_embed_bundles_a_model_runs_vectors(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "thumbs_model.py").write_text(THUMBS)
    monkeypatch.chdir(tmp_path)
    result = tmp_path / "thumbs.json"
    args = ["eval", "-s", str(run.snapshot), "-m", "python:thumbs_model:make", "-o", str(result)]
    outcome = runner.invoke(app, [*args, "--resamples", "30", "--cache-dir", str(tmp_path / "cache")])
    assert outcome.exit_code == 0, outcome.output
    outcome = runner.invoke(app, ["submit", str(result), "--embed", "--out", str(tmp_path / "repo")])
    assert outcome.exit_code == 2
    assert "--embed would import and run that code; pass --trust-code" in " ".join(outcome.output.split())
    assert not (tmp_path / "repo").exists()  # the refused run takes back the folder it claimed
    outcome = runner.invoke(app, ["submit", str(result), "--embed", "--trust-code", "--out", str(tmp_path / "repo")])
    assert outcome.exit_code == 0, outcome.output
    bundle = tmp_path / "repo" / "thumbs-4x4" / "1" / "v20260201"
    assert np.load(bundle / "embeddings/noise/gallery.npy").shape == (5, 48)
    scratch = [p for p in (tmp_path / "repo").iterdir() if p.name.startswith(".") and p.name != MARKER_NAME]
    assert not scratch  # no scratch folder left, only the marker claiming the repository
    code, text = verify(bundle, run.snapshot)
    assert code == 0, text
    assert "verified" in text


def test_submit_embed_refuses_a_run_of_precomputed_vectors(run: Run, tmp_path: Path) -> None:
    outcome = runner.invoke(app, ["submit", str(run.result), "--embed", "--out", str(tmp_path / "repo")])
    assert outcome.exit_code == 2
    assert "field model.spec is 'embeddings:" in " ".join(outcome.output.split())
    assert not (tmp_path / "repo").exists()  # the refused run leaves neither a scratch folder nor its claim


def test_a_declared_window_is_read_as_dates_and_a_bad_one_names_its_field(run: Run) -> None:
    from lookbench.errors import LookBenchError
    from lookbench.publish.submissions.verify import settings_of
    from lookbench.results.io import load_result
    from lookbench.results.schema import DateWindow

    result = load_result(run.result)
    window = DateWindow(since="2026-01-01", until="2026-03-31", kept_queries=1, total_queries=2)
    dated = settings_of(result.model_copy(update={"config": result.config.model_copy(update={"window": window})}))
    assert (dated.since, dated.until) == (np.datetime64("2026-01-01", "us"), np.datetime64("2026-03-31", "us"))
    bad = window.model_copy(update={"until": "soon"})
    with pytest.raises(LookBenchError, match="^config.window.until: 'soon' is not an ISO date"):
        settings_of(result.model_copy(update={"config": result.config.model_copy(update={"window": bad})}))
