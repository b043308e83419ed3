"""Offline end-to-end: a Synth street-look release through crop, annotate, audit and distractor mining, then eval."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import date
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest
import yaml
from chatkit import ChatServer, Truth, serve
from PIL import Image
from releasekit import closed_port, encode, photo
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.errors import ReleaseError
from lookbench.release.config import load_config
from lookbench.release.pipeline import run_stages, stages_for
from lookbench.release.stages.annotate import AnnotateStats
from lookbench.release.stages.audit import AuditStats
from lookbench.release.stages.compose import ComposeStats
from lookbench.release.stages.crop import CropStats
from lookbench.release.stages.distractors import DistractorStats
from lookbench.release.vlm.client import ApiUnavailable
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import STREETLOOK_SUBSETS


@pytest.fixture(scope="module")
def synth_releases(tmp_path_factory) -> tuple[Path, Path]:
    """A mini Synth release to build from, and another (other seed) to fit the probe on."""
    root = tmp_path_factory.mktemp("synth")
    build_from = generate_snapshot(root / "a", date(2026, 5, 1), "mini", seed=0)
    train = generate_snapshot(root / "b", date(2026, 4, 1), "mini", seed=1)
    return build_from, train


def _teach_photos(server: ChatServer, snapshot: Path) -> None:
    """The detector's truth: every street photo's garment boxes, from the Synth rows."""
    photos: dict[bytes, list[tuple[str, list[float]]]] = defaultdict(list)
    for subset in STREETLOOK_SUBSETS:
        for row in pq.read_table(snapshot / subset / "query.parquet").to_pylist():
            photos[row["raw_image"]["bytes"]].append((row["category"], row["bbox"]))
    for data, boxes in photos.items():
        with Image.open(io.BytesIO(data)) as im:
            size = im.size
        server.learn(data, Truth(boxes[0][0], "", [], boxes=boxes, size=size))


def _teach_rows(server: ChatServer, work_table: Path) -> list[dict]:
    """The annotator's and judge's truth: each row's Synth labels, keyed by the crop the client will send."""
    rows = pq.read_table(work_table).to_pylist()
    for row in rows:
        server.learn(row["image"], Truth(row["category"], row["main_attribute"], list(row["other_attributes"])))
    return rows


def _api(server: ChatServer, model: str) -> dict:
    return {"base_url": server.base_url, "model": model, "timeout_s": 5, "retries": 1}


def _config(tmp_path: Path, synth: Path, sections: dict) -> Path:
    odd = tmp_path / "odd"
    odd.mkdir(exist_ok=True)
    (odd / "cape.png").write_bytes(encode(photo(77)))
    (odd / "manifest.csv").write_text("image,product_id,category,color\ncape.png,C1,cape,Red\n")
    data = {
        "release_date": "2026-06-01",
        "output": "out",
        "sources": [
            {"kind": "synth", "name": "synth", "path": str(synth)},
            {"kind": "catalog", "name": "odd", "path": "odd"},
        ],
        **sections,
    }
    path = tmp_path / "release.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_openai_pipeline_with_outage_resume_and_eval(tmp_path, synth_releases):
    synth, _ = synth_releases
    server = ChatServer(annotate_errs_every=5, judge_errs_every=9)
    _teach_photos(server, synth)
    with serve(server):
        sections = {
            "crop": {"detector": "vlm", "api": _api(server, "qwen-detect")},
            "annotate": {"backend": "openai", "api": _api(server, "qwen-annotate")},
            "audit": {
                "api": _api(server, "judge-model"),
                "margin": 0.1,
                "canary_fraction": 0.3,
                "floor": 0.9,
                "exclude_below_floor": True,
                "human_labels": "human.csv",
            },
            # Synth noise is shot in its own conventions: its nearest-item cosines span about 0.62-0.86 here
            "distractors": {"model": "features:colour-gradient", "band": [0.5, 0.8]},
            # composed queries from the annotated gallery items, worded by an LLM and audited by a judge
            "compose": {
                "model": "features:colour-gradient",
                "band": [0.0, 1.0],
                "paraphrase": _api(server, "para-llm"),
                "judge": _api(server, "judge-composed"),
                "audit_per_stratum": 2,
            },
        }
        config = load_config(_config(tmp_path, synth, sections))
        stages = stages_for(config)
        assert [s.name for s in stages] == [
            "collect", "dedup", "crop", "annotate", "audit", "distractors", "split", "compose", "publish"
        ]  # fmt: skip
        refused = next(iter(server.truths))  # the server refuses one street photo: its crops are dropped
        server.scripts[refused] = ["reject"]
        first = run_stages(config, stages[:3])
        crop = first.stats(CropStats)
        assert crop is not None and crop.mean_iou_with_known_boxes is not None
        assert crop.photos_rejected == 1 and crop.rows_without_box == len(server.truths[refused].boxes)
        assert crop.boxes_tiny == crop.boxes_degenerate == crop.photos - 1
        assert any("detector: HTTP 400" in p.error for p in first.problems)
        assert crop.mean_iou_with_known_boxes > 0.98
        rows = _teach_rows(server, config.work / "crop" / "samples.parquet")
        crops = [r for r in rows if r["raw_image"]]
        assert all(r["outfit_id"] and len(r["bbox"]) == 4 for r in crops)
        rejected = next(r for r in rows if r["source"] == "synth" and not r["raw_image"])
        truth = Truth(rejected["category"], rejected["main_attribute"], rejected["other_attributes"])
        server.scripts[server.learn(rejected["image"], truth)] = ["reject"] * 5  # rejections are asked again
        with (tmp_path / "human.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["sample_id", "attribute", "verdict"])
            writer.writerows([r["sample_id"], r["main_attribute"], "correct"] for r in rows)
        server.down_after = sum(server.requests.values()) + 40
        with pytest.raises(ApiUnavailable):
            run_stages(config, stages)
        server.down_after = None
        ctx = run_stages(config, stages)
    assert [e.status for e in ctx.log][:3] == ["skipped (already done)"] * 3
    annotate = ctx.stats(AnnotateStats)
    assert annotate is not None
    usage = annotate.annotator
    # nothing answered before the outage is asked again, nothing is lost; noise rows are not asked
    noise = sum(r["subsets"] == ["noise"] for r in rows)
    assert annotate.noise_rows_unlabelled == noise > 0
    assert usage["cache_hits"] >= 30 and usage["cache_hits"] + usage["requests"] == len(rows) - noise - 2
    assert annotate.flagged == 2 and set(annotate.flag_reasons) == {
        "rejected by the server",
        "category 'cape' is not in the taxonomy",
    }
    audit = ctx.stats(AuditStats)
    assert audit is not None and audit.true_accuracy_all is not None
    assert audit.canaries.n > 0 and (audit.canaries.accuracy or 0) > 0.7
    # the server's annotator errs on every 5th image's colour: the judge (errs on every 9th check) sees errors
    assert (audit.overall.accuracy or 0) < 1.0 and audit.below_floor
    assert (audit.true_accuracy_all.accuracy or 0) < 1.0
    human = audit.model_dump()["human_agreement"]
    assert human["pairs"] > 0 and "gwet_ac1" in human
    mined = ctx.stats(DistractorStats)
    assert mined is not None
    assert mined.candidates >= 20 and 0 < mined.kept < mined.candidates == mined.kept + mined.near_duplicates
    version = config.output / "v20260601"
    card = (version / "README.md").read_text()
    for text in (
        "## Garment crops",
        "## Label audit",
        "| attribute | judged accuracy",
        "judge sensitivity",
        "## Distractor mining",
    ):
        assert text in card
    assert "true accuracy of the annotator" in card
    composed = ctx.stats(ComposeStats)
    assert (
        composed is not None
        and composed.queries > 0
        and composed.paraphrased == composed.queries + composed.validation_queries
    )
    assert composed.audit is not None and composed.audit["overall"]["judged"] > 0
    assert "## Composed queries" in card and "Paraphrased by `para-llm`" in card
    snap = open_snapshot(version)
    snap.check_task("composed", "composed")
    assert snap.num_rows("noise", "gallery") == mined.kept
    street = pq.read_table(version / "real_streetlook" / "query.parquet").to_pylist()
    assert all(r["raw_image"] and r["outfit_id"] and r["label_source"] == "openai" for r in street)
    excluded = set(audit.excluded)
    assert not any(excluded & set(r["other_attributes"]) for r in street)
    result = CliRunner().invoke(
        app,
        ["eval", "--snapshot", str(version), "--model", "features:colour-gradient", "--output", str(tmp_path / "r")],
    )
    assert result.exit_code == 0, result.output


def test_probe_pipeline_reports_true_accuracy(tmp_path, synth_releases):
    synth, train = synth_releases
    server = ChatServer(judge_errs_every=0)
    with serve(server):
        sections = {
            "crop": {"detector": "truth"},
            "annotate": {"backend": "probe", "probe": {"train": str(train), "model": "features:colour-gradient"}},
            "audit": {"api": _api(server, "judge-model"), "margin": 0.1, "canary_fraction": 0.2},
        }
        config = load_config(_config(tmp_path, synth, sections))
        run_stages(config, stages_for(config)[:3])
        _teach_rows(server, config.work / "crop" / "samples.parquet")
        ctx = run_stages(config, stages_for(config))
    audit = ctx.stats(AuditStats)
    annotate = ctx.stats(AnnotateStats)
    assert audit is not None and audit.true_accuracy_all is not None and annotate is not None
    report = audit.model_dump()
    truth = audit.true_accuracy_all.accuracy
    assert truth is not None and 0.3 < truth < 1.0
    # a judge that knows the truth estimates the sampled true accuracy exactly and catches every canary
    assert audit.overall.accuracy == report["true_accuracy_sampled"]["accuracy"]
    assert audit.canaries.accuracy == 1.0
    better = report["better_values"]
    assert 0 < better["offered"] <= better["incorrect"] and better["offered_and_true"]["accuracy"] == 1.0
    assert annotate.annotator["train_rows"] > 100
    report = json.loads((config.work / "audit" / "report.json").read_text())
    assert report["groups"] and report["true_accuracy_groups"]


def test_batch_export_run_import_then_build_from_the_cache(tmp_path, synth_releases):
    synth, _ = synth_releases
    server = ChatServer()
    with serve(server):
        sections = {"crop": {"detector": "truth"}, "annotate": {"backend": "openai", "api": _api(server, "qwen-batch")}}
        config_path = _config(tmp_path, synth, sections)
        requests = tmp_path / "batch.jsonl"
        exported = CliRunner().invoke(app, ["annotate", "batch-export", str(config_path), str(requests)])
        assert exported.exit_code == 0, exported.output
        config = load_config(config_path)
        rows = _teach_rows(server, config.work / "crop" / "samples.parquet")
        lines = [json.loads(line) for line in requests.read_text().splitlines()]
        asked = [r for r in rows if r["category"] != "cape" and r["subsets"] != ["noise"]]
        assert len(lines) == len({r["image_sha256"] for r in asked})
        # what `vllm run-batch` does: post each body, write {custom_id, response: {status_code, body}}
        results = tmp_path / "results.jsonl"
        with httpx.Client(base_url=server.base_url) as client, results.open("w") as out:
            for line in lines:
                reply = client.post("/chat/completions", json=line["body"])
                response = {"status_code": reply.status_code, "body": reply.json()}
                out.write(json.dumps({"custom_id": line["custom_id"], "response": response}) + "\n")
        imported = CliRunner().invoke(app, ["annotate", "batch-import", str(config_path), str(results)])
        assert imported.exit_code == 0 and f"imported {len(lines)}" in imported.output, imported.output
        before = sum(server.requests.values())
        ctx = run_stages(config, stages_for(config))
    annotate = ctx.stats(AnnotateStats)
    assert annotate is not None
    usage = annotate.annotator
    assert usage["requests"] == 0 and sum(server.requests.values()) == before
    assert usage["cache_hits"] == len(asked)


def test_build_cli_offline_probe_and_unreachable_api(tmp_path, synth_releases):
    synth, train = synth_releases
    sections = {
        "crop": {"detector": "truth"},
        "annotate": {"backend": "probe", "probe": {"train": str(train), "model": "features:colour-gradient"}},
        "distractors": {"model": "features:colour-gradient", "band": [0.5, 0.93]},
    }
    result = CliRunner().invoke(app, ["release", str(_config(tmp_path, synth, sections)), "--shards", "2"])
    assert result.exit_code == 0, result.output
    assert "dedup: hash 2 of 2 shards run, 0 already done" in result.output
    assert "annotate: category 'cape' is not in the" in result.output  # rich wraps at 80 columns
    card = (tmp_path / "out" / "v20260601" / "README.md").read_text()
    assert "Labelled by `probe` (features:colour-gradient)" in card and "band [0.5, 0.93]" in card
    down = {"base_url": f"http://127.0.0.1:{closed_port()}/v1", "model": "m", "retries": 1}
    other = tmp_path / "other"
    other.mkdir()
    sections = {"annotate": {"backend": "openai", "api": down}}
    failed = CliRunner().invoke(app, ["release", str(_config(other, synth, sections))])
    assert failed.exit_code == 2 and "no answer after 2 tries" in failed.output


def test_config_sections_are_checked(tmp_path, synth_releases):
    synth, _ = synth_releases
    api = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    cases = [
        ({"audit": {"api": api}}, "needs an annotate section"),
        ({"annotate": {"backend": "openai"}}, "needs an api section"),
        ({"annotate": {"backend": "probe"}}, "needs a probe section"),
        ({"crop": {"detector": "vlm"}}, "needs an api section"),
        ({"crop": {"detector": "owl"}}, "needs an owl section"),
        ({"crop": {"detector": "owl", "owl": {"model": "m", "template": "a photo"}}}, "must contain {category}"),
        ({"distractors": {"model": "x:y", "band": [0.45, 0.25]}}, "low < high"),
        ({"compose": {"model": "x:y", "band": [0.9, 0.1]}}, "compose.band must be"),
        ({"compose": {"model": "x:y", "max_changes": 3}}, "less than or equal to 2"),
        ({"compose": {"model": "x:y", "judge": {"model": "m"}}}, "base_url"),
    ]
    for sections, message in cases:
        with pytest.raises(ReleaseError, match=message):
            load_config(_config(tmp_path, synth, sections))
    # a model that cannot be loaded stops the build before anything is collected, naming the setting
    config = load_config(_config(tmp_path, synth, {"compose": {"model": "nosuch:model"}}))
    with pytest.raises(ReleaseError, match="compose.model"):
        run_stages(config, stages_for(config))
    assert not (config.work / "collect").exists()
