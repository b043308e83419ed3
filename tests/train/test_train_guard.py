"""The contamination guard drops planted duplicates of evaluation images, reports them, and --strict refuses."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageEnhance, ImageOps
from trainkit import eval_snapshot, item_image, row, tiny_config, training_snapshot, write_config
from typer.testing import CliRunner

from lookbench._util.outfolder import MARKER_NAME, read_marker
from lookbench.cli.main import app
from lookbench.errors import TrainError
from lookbench.results.query_sets import OVERLAP_QUERIES_FILE
from lookbench.snapshot.reader import open_snapshot
from lookbench.train.config import Guard, TrainData, Validation
from lookbench.train.data import load_training_set, refuse_reported_validation
from lookbench.train.guard import GUARD_REPORT, apply_guard


def mirrored_copy(data: bytes) -> bytes:
    """The same photo flipped, brightened and re-encoded as a worse JPEG: different pixels, a near duplicate."""
    with Image.open(io.BytesIO(data)) as im:
        buf = io.BytesIO()
        ImageEnhance.Brightness(ImageOps.mirror(im.convert("RGB"))).enhance(1.15).save(buf, format="JPEG", quality=60)
    return buf.getvalue()


def planted(tmp_path: Path) -> tuple[Path, Path]:
    evaluation = eval_snapshot(tmp_path / "eval")
    exact = row("leak-exact", 7, 0, data=item_image(100, 1))  # byte-identical to eval query 0
    near = row("leak-near", 8, 0, data=mirrored_copy(item_image(103, 0)))  # eval gallery 3, mirrored
    train = training_snapshot(tmp_path / "train", items=6, views=2, extra=[exact, near])
    return train, evaluation


def test_guard_drops_planted_duplicates_and_reports_them(tmp_path: Path) -> None:
    train, evaluation = planted(tmp_path)
    training = load_training_set([TrainData(snapshot=str(train))], 0, tmp_path / "cache")
    report_path = tmp_path / "guard.json"
    kept, report = apply_guard(training, [open_snapshot(evaluation)], Guard(), tmp_path / "cache", False, report_path)
    assert len(training) == 14 and len(kept) == 12
    assert "leak-exact" not in kept.class_names and "leak-near" not in kept.class_names
    found = {o.train: o for o in report.overlaps}
    assert found["v20260301/real_studio_flat/gallery#12"].tier == "exact"
    assert found["v20260301/real_studio_flat/gallery#12"].evaluation == "v20260601/real_studio_flat/query#0"
    near = found["v20260301/real_studio_flat/gallery#13"]
    assert near.tier == "perceptual" and near.evaluation == "v20260601/real_studio_flat/gallery#3"
    saved = json.loads(report_path.read_text())
    assert saved["checked"] == 14 and len(saved["overlaps"]) == 2 and saved["against"][0]["images"] == 16
    assert "1 exact, 1 perceptual" in report.summary()
    # the kept set's labels against the 6 queries: the kit gives every item one of 3 label sets by item number, so
    # each query's set is held by training items (identical, hence a strict match); colours never vary by design
    (overlap,) = saved["evaluation_overlap"]
    assert overlap["snapshot"] == "v20260601" and overlap["near_duplicates"] == 2
    assert overlap["near_duplicate_queries"] == 1  # query#0 (exact); the mirrored copy matched a gallery row
    assert overlap["labels"] == {"queries": 6, "identical": 6, "same_design_other_colour": 0, "strict_fine_match": 6}
    # fingerprints are cached: a second check reads them back and finds the same overlaps
    _, again = apply_guard(training, [open_snapshot(evaluation)], Guard(), tmp_path / "cache", False, None)
    assert [o.train for o in again.overlaps] == [o.train for o in report.overlaps]


def test_strict_guard_refuses(tmp_path: Path) -> None:
    train, evaluation = planted(tmp_path)
    training = load_training_set([TrainData(snapshot=str(train))], 0, tmp_path / "cache")
    with pytest.raises(TrainError, match=r"--strict: 2 training image\(s\) overlap .*leak|--strict: 2 training"):
        apply_guard(training, [open_snapshot(evaluation)], Guard(), tmp_path / "cache", True, tmp_path / "g.json")
    assert (tmp_path / "g.json").is_file()


def test_threshold_zero_keeps_only_the_exact_tier(tmp_path: Path) -> None:
    train, evaluation = planted(tmp_path)
    training = load_training_set([TrainData(snapshot=str(train))], 0, tmp_path / "cache")
    kept, report = apply_guard(
        training, [open_snapshot(evaluation)], Guard(phash_threshold=0), tmp_path / "cache", False, None
    )
    assert [o.tier for o in report.overlaps] == ["exact"] and len(kept) == 13


def test_corrupt_fingerprint_cache_lines_are_recomputed(tmp_path: Path) -> None:
    train, evaluation = planted(tmp_path)
    cache = tmp_path / "cache"
    training = load_training_set([TrainData(snapshot=str(train))], 0, cache)
    apply_guard(training, [open_snapshot(evaluation)], Guard(), cache, False, None)
    path = cache / "fingerprints" / "training-phash256.jsonl"
    path.write_text("not json\n[1, 2]\n" + path.read_text()[: len(path.read_text()) // 2])
    _, report = apply_guard(training, [open_snapshot(evaluation)], Guard(), cache, False, None)
    assert len(report.overlaps) == 2


def test_guard_defaults_are_the_release_dedup_defaults() -> None:
    from lookbench.release.config import DedupConfig

    release = DedupConfig()
    assert (Guard().phash_threshold, Guard().colour_threshold) == (release.phash_threshold, release.colour_threshold)


def test_validating_on_a_reported_snapshot_is_refused_by_content(tmp_path: Path) -> None:
    """A copy of the evaluation snapshot in another folder is still the evaluation snapshot."""
    evaluation = eval_snapshot(tmp_path / "eval")
    copy = tmp_path / "copy" / evaluation.name
    shutil.copytree(evaluation, copy)
    other = eval_snapshot(tmp_path / "other", offset=300)
    with pytest.raises(TrainError, match=r"is an evaluation snapshot the run is reported on \(data.guard.against\)"):
        refuse_reported_validation(Validation(snapshot=str(copy)), [str(evaluation)], "data.guard.against")
    refuse_reported_validation(Validation(snapshot=str(other)), [str(evaluation)], "data.guard.against")
    allowed = Validation(snapshot=str(copy), allow_evaluation_snapshot=True)
    refuse_reported_validation(allowed, [str(evaluation)], "data.guard.against")


def test_overlap_queries_name_each_query_of_each_class(tmp_path: Path) -> None:
    """Training: a red t-shirt (the labels of eval items 102 and 105, query rows 2 and 5) and a red dress (the design
    of the blue dress queries, rows 0 and 3, in another colour; not a strict match: red is not blue)."""
    red_dress = [{**row("red-dress", 1, v), "main_attribute": "red"} for v in range(2)]
    train = training_snapshot(tmp_path / "train", items=1, views=2, extra=red_dress)
    evaluation = eval_snapshot(tmp_path / "eval")
    training = load_training_set([TrainData(snapshot=str(train))], 0, tmp_path / "cache")
    apply_guard(training, [open_snapshot(evaluation)], Guard(), tmp_path / "cache", False, tmp_path / "guard.json")
    saved = json.loads((tmp_path / OVERLAP_QUERIES_FILE).read_text())
    (entry,) = saved["snapshots"]
    assert entry["snapshot"] == "v20260601" and entry["content_hash"] == open_snapshot(evaluation).content_hash
    assert entry["queries"] == 6 and entry["labels_compared"] and saved["training"] == [str(train)]

    def named(kind: str) -> list[tuple[str, int, str]]:
        return [(q["subset"], q["row"], q["item_id"]) for q in entry["classes"][kind]]

    studio = "real_studio_flat"
    assert named("identical") == [(studio, 2, "eval-2"), (studio, 5, "eval-5")]
    assert named("strict_fine_match") == [(studio, 2, "eval-2"), (studio, 5, "eval-5")]
    assert named("same_design_other_colour") == [(studio, 0, "eval-0"), (studio, 3, "eval-3")]
    assert named("near_duplicate_pixels") == []
    (counts,) = json.loads((tmp_path / "guard.json").read_text())["evaluation_overlap"]
    assert counts["labels"] == {"queries": 6, "identical": 2, "same_design_other_colour": 2, "strict_fine_match": 2}


def test_planted_query_duplicate_is_named_as_near_duplicate_pixels(tmp_path: Path) -> None:
    train, evaluation = planted(tmp_path)
    training = load_training_set([TrainData(snapshot=str(train))], 0, tmp_path / "cache")
    apply_guard(training, [open_snapshot(evaluation)], Guard(), tmp_path / "cache", False, tmp_path / "guard.json")
    (entry,) = json.loads((tmp_path / OVERLAP_QUERIES_FILE).read_text())["snapshots"]
    # the exact copy of query 0 is named; the mirrored copy matched gallery row 3, not a query
    assert entry["classes"]["near_duplicate_pixels"] == [{"subset": "real_studio_flat", "row": 0, "item_id": "eval-0"}]


def test_guard_only_writes_both_reports_without_training_and_keeps_them(tmp_path: Path) -> None:
    train, evaluation = planted(tmp_path)
    config = write_config(tmp_path / "c.yaml", tiny_config(train, evaluation, data={"validation": None}))
    out = tmp_path / "out"
    args = ["train", str(config), "--out", str(out), "--guard-only", "--no-progress"]
    first = CliRunner().invoke(app, args, env={"LOOKBENCH_CACHE": str(tmp_path / "cache")})
    assert first.exit_code == 0, first.output
    # no checkpoint, no model: the reports and the marker that claims the folder, recording them
    assert sorted(p.name for p in out.iterdir()) == [MARKER_NAME, GUARD_REPORT, OVERLAP_QUERIES_FILE]
    assert read_marker(out).files == (GUARD_REPORT, OVERLAP_QUERIES_FILE)  # type: ignore[union-attr]
    assert "of 6 queries, a training product with identical labels 6" in " ".join(first.output.split())
    kept = (out / OVERLAP_QUERIES_FILE).read_bytes()
    again = CliRunner().invoke(app, args, env={"LOOKBENCH_CACHE": str(tmp_path / "cache")})
    assert again.exit_code == 2 and "exists; use --overwrite" in " ".join(again.output.split())
    assert (out / OVERLAP_QUERIES_FILE).read_bytes() == kept
    forced = CliRunner().invoke(app, [*args, "--overwrite"], env={"LOOKBENCH_CACHE": str(tmp_path / "cache")})
    assert forced.exit_code == 0 and (out / OVERLAP_QUERIES_FILE).read_bytes() == kept
    (tmp_path / "a-file").write_text("mine", encoding="utf-8")
    args[3] = str(tmp_path / "a-file")
    refused = CliRunner().invoke(app, args, env={"LOOKBENCH_CACHE": str(tmp_path / "cache")})
    assert refused.exit_code == 2 and "not a folder" in refused.output
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "mine"
