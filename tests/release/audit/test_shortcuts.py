"""The audit's query side: fashion-blind baselines scored by the evaluator, as a ratio to a named model, flagged at
half of it; and its hostile inputs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from auditkit import row
from PIL import Image
from typer.testing import CliRunner

from conftest import write_snapshot
from lookbench.cli.main import app
from lookbench.models.features import FASHION_BLIND
from lookbench.results.audit_io import read_audit
from lookbench.results.audit_schema import AuditReport

runner = CliRunner()
PALETTE = [
    (r, g, b)
    for r in (40, 104, 168, 232)
    for g in (40, 104, 168, 232)
    for b in (40, 104, 168, 232)
    if np.linalg.norm(np.subtract((r, g, b), 220)) > 120
][::2][:16]
"""16 garment colours, each at the centre of its colour cell for 4 and 16 levels a channel, far from the backdrop."""
GALLERY_PER_CLASS = 3


def _garment(colour: tuple[int, int, int], seed: int) -> bytes:
    """A PNG of one flat-coloured rectangle at a random place and size on a light backdrop."""
    rng = np.random.default_rng(seed)
    pixels = np.full((64, 64, 3), 220, dtype=np.uint8)
    x, y = (int(v) for v in rng.integers(8, 28, 2))
    w, h = (int(v) for v in rng.integers(16, 28, 2))
    pixels[y : y + h, x : x + w] = colour
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    return buf.getvalue()


def _snapshot(root: Path, colour_by_label: bool) -> tuple[Path, np.ndarray, np.ndarray]:
    """16 label classes (row seed % 16), one query and 3 gallery images each, 20 grey distractors. With
    `colour_by_label` each class has its own garment colour, else colours are drawn regardless of the label.
    Returns the snapshot and the class of each query and gallery row."""
    rng = np.random.default_rng(5)

    def colour(label: int) -> tuple[int, int, int]:
        return PALETTE[label] if colour_by_label else PALETTE[int(rng.integers(16))]

    queries = list(range(16))
    gallery = [label for label in range(16) for _ in range(GALLERY_PER_CLASS)]
    spec = {
        "real_studio_flat": {
            "query": [row(f"q{i}", c, _garment(colour(c), 100 + i)) for i, c in enumerate(queries)],
            "gallery": [row(f"g{i}", c, _garment(colour(c), 200 + i)) for i, c in enumerate(gallery)],
        },
        "noise": {"gallery": [row(f"n{i}", i, _garment((128, 128, 128), 300 + i)) for i in range(20)]},
    }
    return write_snapshot(root, spec, "v20260301"), np.array(queries), np.array(gallery)


def _vectors(root: Path, queries: np.ndarray, gallery: np.ndarray, oracle: bool) -> Path:
    """`embeddings:` vectors: one-hot label classes (a perfect model) or random ones."""
    rng = np.random.default_rng(0)
    for subset, split, labels in (
        ("real_studio_flat", "query", queries),
        ("real_studio_flat", "gallery", gallery),
        ("noise", "gallery", np.full(20, -1)),
    ):
        array = rng.normal(size=(len(labels), 17))
        if oracle:
            array = np.eye(17)[np.where(labels < 0, 16, labels)] + 0.01 * array
        path = root / subset / f"{split}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array.astype(np.float32))
    return root


def _audit(snapshot: Path, tmp_path: Path, *extra: str) -> AuditReport:
    out = tmp_path / "audit.json"
    options = ["--resamples", "50", "--cache-dir", str(tmp_path / "cache"), "-o", str(out)]
    result = runner.invoke(app, ["audit", str(snapshot), *options, *extra])
    assert result.exit_code == 0, result.output
    return read_audit(out)


def _evaluated(tmp_path: Path, name: str, colour_by_label: bool, oracle: bool) -> tuple[Path, Path, Path]:
    """A snapshot, `embeddings:` vectors of it and their `lookbench eval` result file (with its per-query table)."""
    snap, queries, gallery = _snapshot(tmp_path / name, colour_by_label=colour_by_label)
    emb = _vectors(tmp_path / f"emb-{name}", queries, gallery, oracle=oracle)
    result = tmp_path / f"res-{name}" / "run.json"
    ran = runner.invoke(app, ["eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(result)])
    assert ran.exit_code == 0, ran.output
    return snap, emb, result


def test_a_colour_signature_shared_by_query_and_match_is_flagged(tmp_path: Path) -> None:
    snap, queries, gallery = _snapshot(tmp_path / "snap", colour_by_label=True)
    emb = _vectors(tmp_path / "emb", queries, gallery, oracle=False)
    report = _audit(snap, tmp_path, "--model", f"embeddings:{emb}")
    shortcuts = report.shortcuts
    assert shortcuts is not None and shortcuts.metric == "fine_recall@1" and shortcuts.share_flagged == 0.5
    assert [b.model for b in shortcuts.baselines] == list(FASHION_BLIND)
    histogram = shortcuts.baselines[2].scores["overall"]  # features:foreground-histogram?bins=16
    assert histogram.value.value == 1.0  # each class has its own colour: the nearest image is of the same class
    assert shortcuts.reference_scores is not None
    model = shortcuts.reference_scores["overall"].value
    assert histogram.ratio == pytest.approx(1.0 / model) and histogram.flagged
    assert "features:foreground-histogram?bins=16 on overall" in " ".join(shortcuts.flagged)
    # the reference is the model's own score with the noise pool, as the noise effect measured it
    assert report.noise_effect is not None
    assert model == report.noise_effect["overall"].fine_recall_at_1.with_noise.value


def test_colour_that_says_nothing_of_the_label_is_not_flagged_against_a_perfect_model(tmp_path: Path) -> None:
    snap, queries, gallery = _snapshot(tmp_path / "snap", colour_by_label=False)
    emb = _vectors(tmp_path / "emb", queries, gallery, oracle=True)
    report = _audit(snap, tmp_path, "--model", f"embeddings:{emb}")
    shortcuts = report.shortcuts
    assert shortcuts is not None and shortcuts.reference_scores is not None
    assert shortcuts.reference_scores["overall"].value == 1.0
    assert shortcuts.flagged == []
    assert all(s.ratio is not None and s.ratio < 0.5 for b in shortcuts.baselines for s in b.scores.values())


def test_reference_results_file_names_the_model_and_its_scores(tmp_path: Path) -> None:
    snap, _, result = _evaluated(tmp_path, "snap", colour_by_label=True, oracle=False)
    report = _audit(snap, tmp_path, "--reference-results", str(result), "--baselines", "features:thumbnail")
    shortcuts = report.shortcuts
    assert shortcuts is not None and shortcuts.reference_scores is not None
    written = json.loads(result.read_text())["metrics"]
    for scope in ("real_studio_flat", "overall"):
        assert shortcuts.reference_scores[scope].value == written[scope]["fine_recall@1"]["value"]
    assert shortcuts.reference_source == "results file run.json"
    assert [b.model for b in shortcuts.baselines] == ["features:thumbnail"]


def test_a_baseline_that_is_the_model_has_ratio_one_at_every_paired_resample(tmp_path: Path) -> None:
    snap, _, _ = _snapshot(tmp_path / "snap", colour_by_label=False)
    report = _audit(snap, tmp_path, "--model", "features:thumbnail", "--baselines", "features:thumbnail")
    assert report.shortcuts is not None
    for scope, score in report.shortcuts.baselines[0].scores.items():
        assert score.value.value > 0, scope
        assert (score.ratio, score.ratio_ci_low, score.ratio_ci_high) == (1.0, 1.0, 1.0), scope
    assert "(1.00 of the model, 95% 1.00-1.00)" in report.shortcuts.flagged[0]


def test_ratio_intervals_from_a_results_file_equal_the_evaluated_ones(tmp_path: Path) -> None:
    snap, emb, result = _evaluated(tmp_path, "snap", colour_by_label=True, oracle=False)
    baseline = ("--baselines", "features:thumbnail")
    evaluated = _audit(snap, tmp_path / "a", "--model", f"embeddings:{emb}", *baseline).shortcuts
    from_file = _audit(snap, tmp_path / "b", "--reference-results", str(result), *baseline).shortcuts
    assert evaluated is not None and from_file is not None
    a, b = evaluated.baselines[0].scores["overall"], from_file.baselines[0].scores["overall"]
    assert a.ratio is not None and a.ratio_ci_low is not None and a.ratio_ci_high is not None
    assert a.ratio_ci_low < a.ratio < a.ratio_ci_high
    assert (b.ratio, b.ratio_ci_low, b.ratio_ci_high) == (a.ratio, a.ratio_ci_low, a.ratio_ci_high)
    # the same file without its per-query table beside it: the ratio, no interval
    (result.parent / json.loads(result.read_text())["per_query_file"]).unlink()
    alone = _audit(snap, tmp_path / "c", "--reference-results", str(result), *baseline).shortcuts
    assert alone is not None
    score = alone.baselines[0].scores["overall"]
    assert (score.ratio, score.ratio_ci_low, score.ratio_ci_high) == (a.ratio, None, None)


def test_without_a_model_the_baselines_are_scored_without_ratios(tmp_path: Path) -> None:
    snap, _, _ = _snapshot(tmp_path / "snap", colour_by_label=True)
    report = _audit(snap, tmp_path, "--baselines", "features:foreground-histogram?bins=4")
    shortcuts = report.shortcuts
    assert shortcuts is not None and shortcuts.reference is None and shortcuts.flagged == []
    assert shortcuts.baselines[0].scores["overall"].value.value == 1.0
    assert shortcuts.baselines[0].scores["overall"].ratio is None
    none = _audit(snap, tmp_path / "none", "--baselines", "none")
    assert none.shortcuts is None


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", "result file not found"),
        ("not json", "not valid JSON"),
        ("not a result", "field"),
        ("another snapshot", "evaluates snapshot"),
        ("replaced per-query file", "the per-query file is not the one"),
        ("unknown feature", "unknown feature 'nope'"),
        ("empty spec", "an empty spec in the list"),
        ("bad bins", "bins='1' must be a whole number from 2 to 16"),
    ],
)
def test_hostile_query_side_inputs_are_one_line_and_write_nothing(tmp_path: Path, case: str, message: str) -> None:
    snap, _, _ = _snapshot(tmp_path / "snap", colour_by_label=True)
    bad = tmp_path / "bad.json"
    options = {
        "missing": ["--reference-results", str(tmp_path / "absent.json")],
        "not json": ["--reference-results", str(bad)],
        "not a result": ["--reference-results", str(bad)],
        "unknown feature": ["--baselines", "features:thumbnail,features:nope"],
        "empty spec": ["--baselines", "features:thumbnail,,features:size"],
        "bad bins": ["--baselines", "features:foreground-histogram?bins=1"],
    }.get(case, [])
    bad.write_text("{not json" if case == "not json" else json.dumps({"schema_version": "2.0", "metrics": 3}))
    if case == "another snapshot":
        options = ["--reference-results", str(_evaluated(tmp_path, "other", colour_by_label=False, oracle=True)[2])]
    if case == "replaced per-query file":
        # a result file of this snapshot whose per-query table another run overwrote
        reference = _evaluated(tmp_path, "snap", colour_by_label=True, oracle=False)[2]
        other = _evaluated(tmp_path, "other", colour_by_label=False, oracle=True)[2]
        per_query = json.loads(reference.read_text())["per_query_file"]
        (reference.parent / per_query).write_bytes(
            (other.parent / json.loads(other.read_text())["per_query_file"]).read_bytes()
        )
        options = ["--reference-results", str(reference)]
    out = tmp_path / "audit.json"
    result = runner.invoke(app, ["audit", str(snap), "-o", str(out), "--cache-dir", str(tmp_path / "c"), *options])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error:") and message in errors[0], result.output
    assert not out.exists()
