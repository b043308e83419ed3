"""`lookbench audit`: the planted shortcut, the report's schema and hostile inputs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from auditkit import audit_snapshot_dir, row
from PIL import Image
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.results.audit_io import read_audit
from lookbench.results.audit_schema import AuditReport

runner = CliRunner()
FAST = ["--resamples", "200", "--baselines", "none"]


def _audit(snapshot: Path, out: Path, *extra: str) -> AuditReport:
    result = runner.invoke(app, ["audit", str(snapshot), "-o", str(out), *FAST, *extra])
    assert result.exit_code == 0, result.output
    return read_audit(out)


def test_a_planted_frame_is_found_and_a_fair_pool_is_not(tmp_path: Path) -> None:
    fair = _audit(audit_snapshot_dir(tmp_path / "fair"), tmp_path / "fair.json")
    framed = _audit(audit_snapshot_dir(tmp_path / "framed", frame=True), tmp_path / "framed.json")
    stats, planted = fair.separability.image_statistics, framed.separability.image_statistics
    assert stats.auc is not None and planted.auc is not None and planted.ci is not None
    assert stats.auc < 0.8  # one scene distribution: nothing but chance to separate them by
    assert planted.auc >= 0.95 and planted.ci[0] > stats.auc
    assert planted.top_statistics[0].name in ("border colour", "background colour", "border saturation and spread")
    assert planted.top_statistics[0].auc >= 0.95
    # the queries are unframed gallery-like scenes: the probe keeps them on the gallery side
    assert framed.queries["real_studio_flat"].image_statistics is not None
    assert framed.queries["real_studio_flat"].image_statistics < 0.2


def test_report_schema_round_trips_and_rejects_unknown_fields(tmp_path: Path) -> None:
    report = _audit(audit_snapshot_dir(tmp_path / "snap"), tmp_path / "a.json")
    data = json.loads((tmp_path / "a.json").read_text())
    assert set(data["separability"]) == {"image_statistics", "embedding_probe"}
    assert set(data["separability"]["image_statistics"]) == {"auc", "ci", "top_statistics", "reason", "test"}
    assert data["label_consistency"]["real_studio_flat"]["queries"] == 20
    assert AuditReport.model_validate_json((tmp_path / "a.json").read_text()) == report
    data["separability"]["image_statistics"]["surprise"] = 1
    (tmp_path / "b.json").write_text(json.dumps(data))
    with pytest.raises(Exception, match="not a lookbench audit report"):
        read_audit(tmp_path / "b.json")


def test_an_existing_file_that_is_not_an_audit_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "notes.json"
    out.write_text('{"mine": true}')
    result = runner.invoke(app, ["audit", str(audit_snapshot_dir(tmp_path / "snap")), "-o", str(out), *FAST])
    assert result.exit_code == 2 and "not a lookbench audit report" in result.output
    assert out.read_text() == '{"mine": true}'


def test_no_noise_pool_is_a_documented_result(tmp_path: Path) -> None:
    report = _audit(audit_snapshot_dir(tmp_path / "snap", with_noise=False), tmp_path / "a.json")
    assert report.separability.image_statistics.auc is None
    assert "no noise pool" in (report.separability.image_statistics.reason or "")
    assert report.queries["real_studio_flat"].image_statistics is None
    assert report.label_consistency["real_studio_flat"].noise_carries_main == 0


def test_a_noise_pool_of_one_image_gives_no_auc(tmp_path: Path) -> None:
    report = _audit(audit_snapshot_dir(tmp_path / "snap", noise=1), tmp_path / "a.json")
    stats = report.separability.image_statistics
    assert stats.auc is None and stats.ci is None and "noise 1" in (stats.reason or "")


def test_one_gallery_image_and_bad_images(tmp_path: Path) -> None:
    from conftest import write_snapshot

    buf = io.BytesIO()
    Image.new("RGB", (1, 1), (10, 20, 30)).save(buf, format="PNG")
    noise = [row(f"n{i}", i) for i in range(20)] + [row("tiny", 1, buf.getvalue()), row("junk", 2, b"not an image")]
    spec = {
        "real_studio_flat": {"query": [row("g0", 6)], "gallery": [row("g0", 6)]},
        "aigen_studio": {"query": [row("h0", 7)], "gallery": [row(f"h{i}", 100 + i) for i in range(20)]},
        "noise": {"gallery": noise},
    }
    report = _audit(write_snapshot(tmp_path / "snap", spec, "v20260301"), tmp_path / "a.json")
    assert [(s.split, s.row) for s in report.skipped_images] == [("gallery", 21)]
    assert "does not decode" in report.skipped_images[0].error
    assert report.sampling.noise_sampled == 21  # the 1x1 image is measured, the undecodable one left out
    assert report.sampling.gallery_sampled == 21
    assert report.separability.image_statistics.auc is not None
    assert report.label_consistency["real_studio_flat"].with_gallery_fine_match == 1


def _embeddings(root: Path, snapshot: Path, value: float | None) -> Path:
    """Embeddings for every split: random, or `value` everywhere."""
    rng = np.random.default_rng(0)
    for subset, split, rows in (
        ("real_studio_flat", "query", 20),
        ("real_studio_flat", "gallery", 60),
        ("noise", "gallery", 60),
    ):
        array = rng.normal(size=(rows, 8)) if value is None else np.full((rows, 8), value)
        path = root / subset / f"{split}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, array.astype(np.float32))
    return root


MODEL = """
import numpy as np

class Fixed:
    model_id, revision = "fixed-{name}", "1"
    def embed(self, images):
        return np.full((len(images), 4), {value}, dtype=np.float32)

def make():
    return Fixed()
"""


def _python_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> list[str]:
    """CLI options for a python: model returning `value` in every coordinate, cached under tmp_path."""
    (tmp_path / f"{name}model.py").write_text(MODEL.format(name=name, value=value))
    monkeypatch.syspath_prepend(str(tmp_path))
    return ["--model", f"python:{name}model:make", "--cache-dir", str(tmp_path / "cache")]


def test_a_model_with_constant_vectors_gets_no_auc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = audit_snapshot_dir(tmp_path / "snap")
    report = _audit(snap, tmp_path / "a.json", *_python_model(tmp_path, monkeypatch, "constant", "1.0"))
    probe = report.separability.embedding_probe
    assert probe is not None and probe.auc is None and "same vector" in (probe.reason or "")
    assert report.noise_effect is not None
    # every score ties, and the source-blind tie rule puts noise first about as often as noise fills the
    # corpus (60 of 120 rows): 20 queries land within a wide binomial band around one half, never at 0 or 1
    share = report.noise_effect["overall"].distractor_share_at_1.value
    assert 0.2 <= share <= 0.8


@pytest.mark.parametrize("source", ["embeddings", "cache"])
def test_nan_embeddings_are_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    snap = audit_snapshot_dir(tmp_path / "snap")
    if source == "embeddings":
        options = ["--model", f"embeddings:{_embeddings(tmp_path / 'emb', snap, float('nan'))}"]
    else:
        options = _python_model(tmp_path, monkeypatch, "nan", "np.nan")
    for _ in range(2):  # the second run reads the vectors the first one cached
        result = runner.invoke(app, ["audit", str(snap), *options, *FAST])
        assert result.exit_code == 2, result.output
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "Traceback" not in result.output
        assert "real_studio_flat/gallery: NaN or infinite values in row(s) 0, 1" in errors[0]


def test_random_embeddings_probe_and_noise_effect(tmp_path: Path) -> None:
    snap = audit_snapshot_dir(tmp_path / "snap")
    emb = _embeddings(tmp_path / "emb", snap, None)
    report = _audit(snap, tmp_path / "a.json", "--model", f"embeddings:{emb}")
    probe = report.separability.embedding_probe
    assert probe is not None and probe.auc is not None and probe.ci is not None
    assert probe.ci[0] < 0.5 + 0.2 and probe.auc < 0.8  # random vectors: no signal beyond chance
    effect = report.noise_effect
    assert effect is not None and set(effect) == {"real_studio_flat", "overall"}
    fine = effect["overall"].fine_recall_at_1
    assert fine.without_noise.value >= fine.with_noise.value


def test_report_shows_the_audit_of_its_snapshot(tmp_path: Path) -> None:
    snap = audit_snapshot_dir(tmp_path / "snap")
    emb = _embeddings(tmp_path / "emb", snap, None)
    result = tmp_path / "res" / "run.json"
    r = runner.invoke(
        app, ["eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(result), "--resamples", "200"]
    )
    assert r.exit_code == 0, r.output
    report = _audit(snap, tmp_path / "a.json", "--model", f"embeddings:{emb}")
    plain = runner.invoke(app, ["report", str(result), "-o", str(tmp_path / "plain")])
    assert plain.exit_code == 0, plain.output
    assert "source-audit" not in (tmp_path / "plain" / "index.html").read_text()
    shown = runner.invoke(
        app, ["report", str(result), "-o", str(tmp_path / "shown"), "--audit", str(tmp_path / "a.json")]
    )
    assert shown.exit_code == 0, shown.output
    page = (tmp_path / "shown" / "index.html").read_text()
    stats = report.separability.image_statistics
    assert stats.auc is not None and f"Image statistics: {stats.auc:.3f}" in page
    assert (
        stats.test is not None and f"Calibrated test: not separable at alpha 0.01 (p = {stats.test.p_value:.3g}" in page
    )
    effect = report.noise_effect
    assert effect is not None
    assert f"{100 * effect['overall'].fine_recall_at_1.without_noise.value:.2f}" in page
    (snap / "AUDIT.json").write_text((tmp_path / "a.json").read_text())  # a built release carries its own
    beside = runner.invoke(app, ["report", str(result), "-o", str(tmp_path / "beside")])
    assert beside.exit_code == 0 and "source-audit" in (tmp_path / "beside" / "index.html").read_text()
    site = runner.invoke(app, ["leaderboard", str(result), "-o", str(tmp_path / "site"), "--no-published"])
    assert site.exit_code == 0, site.output
    assert f"Source audit of {report.snapshot.name}" in (tmp_path / "site" / "index.html").read_text()
