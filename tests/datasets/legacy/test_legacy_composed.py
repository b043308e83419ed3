"""Fashion200K's TIRG protocol and FashionIQ, imported from their official layouts and scored end to end by the
composed-retrieval task, against hand computation (images and texts placed on a circle by `Dial`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from legacykit import (
    FIQ_ANGLES,
    FIQ_QUERIES,
    TIRG_CAPTIONS,
    Dial,
    fashion200k_dial,
    fashioniq_dial,
    tirg_path,
)
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.datasets.legacy.context import ImportOptions
from lookbench.datasets.legacy.registry import import_dataset
from lookbench.errors import LookBenchError
from lookbench.evaluation.runner import EvalOutput, EvalSettings, evaluate
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.snapshot import open_snapshot


def run(target: Path, tmp_path: Path, compose: str, factory: str = "make_dial", **settings: Any) -> EvalOutput:
    snap = open_snapshot(target)
    provider = resolve_model(f"python:legacykit:{factory}", EmbedOptions(cache_dir=tmp_path / "cache"))
    protocol = snap.card.protocol if snap.card else None
    ks = {"fashioniq": (10, 50), "fashion200k": (1, 10, 50)}[protocol or ""]
    return evaluate(snap, provider, EvalSettings(ks=ks, resamples=200, compose=compose, **settings))


def value(out: EvalOutput, scope: str, metric: str) -> float:
    return out.result.metrics[scope][metric].value


@pytest.fixture
def fiq(tmp_path: Path) -> Path:
    return import_dataset("fashioniq", fashioniq_dial(tmp_path / "src"), tmp_path / "out", ImportOptions())


@pytest.fixture
def tirg(tmp_path: Path) -> Path:
    return import_dataset("fashion200k", fashion200k_dial(tmp_path / "src"), tmp_path / "out", ImportOptions())


def test_fashioniq_image_only_by_hand(fiq: Path, tmp_path: Path) -> None:
    out = run(fiq, tmp_path, "image")
    # Ranks by angular distance from the candidate, which stays in the gallery:
    # dress: 1deg -> 128deg is 12th of 12 (miss at 10); 41 -> 53 is 3rd (41, 30, 53); R@10 = 1/2, R@50 = 1
    # shirt: 20 -> 30 is 3rd (20, 12, 30); R@10 = 1
    # toptee: 1 -> 111 11th, 5 -> 128 12th, 12 -> 111 11th, 20 -> 12 2nd; R@10 = 1/4
    assert value(out, "composed_dress", "recall@10") == 0.5
    assert value(out, "composed_shirt", "recall@10") == 1.0
    assert value(out, "composed_toptee", "recall@10") == 0.25
    for scope in ("composed_dress", "composed_shirt", "composed_toptee", "average"):
        assert value(out, scope, "recall@50") == 1.0
    # the official average is the plain mean of the three categories, not the query-weighted composed_overall
    assert value(out, "average", "recall@10") == pytest.approx((0.5 + 1.0 + 0.25) / 3)
    assert value(out, "composed_overall", "recall@10") == pytest.approx(3 / 7)
    assert out.result.metrics["average"]["recall@10"].n == 7
    assert out.result.config.protocol == "fashioniq" and out.result.model.composition.method == "image"
    first = out.per_query.to_pylist()[0]
    assert first["topk_item_ids"][0] == "D00"  # the candidate is not removed from its own ranking
    assert first["item"][11] and not any(first["item"][:11])  # the target, 12th


def test_fashioniq_text_and_sum_against_the_official_rule(fiq: Path, tmp_path: Path) -> None:
    text = run(fiq, tmp_path, "text")
    # each first caption's number lies nearest its target: every target is first
    for scope in ("composed_dress", "composed_shirt", "composed_toptee", "average"):
        assert value(text, scope, "recall@10") == 1.0
    assert [row["item"][0] for row in text.per_query.to_pylist()] == [True] * 7
    summed = run(fiq, tmp_path, "sum")
    dial = Dial()
    for category, queries in FIQ_QUERIES.items():
        # CLIP4Cir's validate.py: rank the split's images by cosine distance to the normalised composed query,
        # recall@K = the target among the first K
        gallery = np.stack([dial._point(a) for a in FIQ_ANGLES])
        hits = {10: [], 50: []}
        for candidate, target, captions in queries:
            from lookbench.datasets.legacy.fashioniq import join_captions

            query = 0.5 * dial._point(FIQ_ANGLES[candidate]) + 0.5 * dial._point(dial.angle_of(join_captions(captions)))
            order = list(np.argsort(1 - gallery @ (query / np.linalg.norm(query)), kind="stable"))
            for k in hits:
                hits[k].append(order.index(target) < k)
        for k, flags in hits.items():
            assert value(summed, f"composed_{category}", f"recall@{k}") == pytest.approx(np.mean(flags))
    assert summed.result.model.composition.subsets["composed_dress"]["chosen_on"].startswith("default")


def test_tirg_image_only_by_hand(tirg: Path, tmp_path: Path) -> None:
    out = run(tirg, tmp_path, "image", subsets=["composed_fashion200k"])
    # query 1 (image 0 at 1deg, target caption "blue floral dress"): image 0's earlier listing stays (Δ0), then
    # images 1..5 at 4..16deg; image 5 has the target's caption: a hit at rank 6. Query 2 (image 40 at 121deg,
    # target image 2 at 7deg): 56 images lie nearer, rank 57. R@1 = 0, R@10 = R@50 = 1/2
    assert value(out, "composed_fashion200k", "recall@1") == 0.0
    assert value(out, "composed_fashion200k", "recall@10") == 0.5
    assert value(out, "composed_fashion200k", "recall@50") == 0.5
    first = out.per_query.to_pylist()[0]
    assert first["query_item_id"] == tirg_path(0) and first["modification_text"] == "replace red with blue"
    assert first["topk_item_ids"][0] == tirg_path(0) + "#1"  # the earlier listing of the source, as in TIRG
    assert tirg_path(0) not in first["topk_item_ids"]  # the source's own listing is removed
    assert first["topk_item_ids"][5] == tirg_path(5) and first["item"].index(True) == 5
    assert first["num_relevant"] == 2  # images 5 and 20 carry the target caption
    queries = pq.read_table(tirg / "composed_fashion200k" / "query.parquet").to_pylist()
    assert queries[0]["target_ids"] == [tirg_path(5), tirg_path(20)]
    assert queries[1]["modification_text"] == "replace striped with plain"
    assert TIRG_CAPTIONS[20] == "blue floral dress"


def test_tirg_text_tower_and_both_protocols_in_one_run(tirg: Path, tmp_path: Path) -> None:
    out = run(tirg, tmp_path, "text")
    # "blue" and "plain" point at the target images themselves (61 and 7 degrees)
    assert value(out, "composed_fashion200k", "recall@1") == 1.0
    # the product protocol in the same run: each product's first image finds its second within two ranks
    assert value(out, "fashion200k", "recall@10") == 1.0
    assert value(out, "fashion200k", "recall@1") == value(out, "fashion200k", "item_recall@1")
    assert "overall" in out.result.metrics and "composed_overall" not in out.result.metrics
    assert out.result.model.name == "dial+text"
    from lookbench.results.io import save_run
    from lookbench.results.tables import build_tables, to_markdown

    saved, _ = save_run(out.result, out.per_query, tmp_path / "r" / "dial__fashion200k__main.json")
    table = build_tables([saved], ("recall@10",))[0]
    assert table.scopes == ["fashion200k", "overall", "composed_fashion200k"]
    (label, cells), *_ = table.references
    assert "ComposeAE" in label and cells["composed_fashion200k"] == pytest.approx(0.553)
    assert "| *reference: ComposeAE" in to_markdown(table)


def test_arithmetic_is_refused_and_auto_means_image_without_changes(fiq: Path, tmp_path: Path) -> None:
    with pytest.raises(LookBenchError, match="no composed query of this run has any"):
        run(fiq, tmp_path, "arithmetic")
    out = run(fiq, tmp_path, "auto", factory="make_dial_images")
    assert out.result.model.composition.method == "image" and out.result.model.name == "dial+image"
    assert run(fiq, tmp_path, "auto").result.model.composition.method == "sum"  # a two-tower model


def test_cli_eval_tables_and_skip_missing_target(tmp_path: Path) -> None:
    src = fashioniq_dial(tmp_path / "src")
    runner = CliRunner()
    done = runner.invoke(app, ["legacy", "import", "fashioniq", str(src), "--out", str(tmp_path / "legacy")])
    assert done.exit_code == 0, done.output
    result = tmp_path / "r" / "fiq.json"
    args = ["eval", "-s", str(tmp_path / "legacy" / "fashioniq"), "-m", "python:legacykit:make_dial_images",
            "--cache-dir", str(tmp_path / "cache"), "--resamples", "50", "-o", str(result)]  # fmt: skip
    ran = runner.invoke(app, args)
    assert ran.exit_code == 0, ran.output
    assert "Average" in ran.output and "composed_dress" in ran.output
    data = json.loads(result.read_text())
    assert data["metrics"]["average"]["recall@10"]["value"] == pytest.approx(1.75 / 3)
    assert data["config"]["ks"] == [10, 50] and data["model"]["name"] == "dial+image"
    tables = runner.invoke(app, ["tables", str(result), "--metrics", "recall@10"])
    assert tables.exit_code == 0 and "Average" in tables.output and "58.33" in tables.output
    refused = runner.invoke(app, [*args[:-2], "-o", str(tmp_path / "x.json"), "--compose", "arithmetic"])
    assert refused.exit_code == 2 and "--compose image" in refused.output

    # a target whose image is missing, imported with --skip-missing: the query stays and fails at every K
    (src / "resized_images" / "dress" / "D11.jpg").unlink()
    kept = import_dataset(
        "fashioniq", src, tmp_path / "o2", ImportOptions(skip_missing=True, train=False), snapshot_name="fiq"
    )
    out = run(kept, tmp_path, "text")
    assert value(out, "composed_dress", "recall@50") == 0.5
    assert any("none of which is in the gallery" in w for w in out.result.warnings)
    assert any("split.dress.val.json" in note for note in open_snapshot(kept).card.notes)


def test_a_fashioniq_record_with_an_empty_first_caption_keeps_the_joined_text(tmp_path: Path) -> None:
    from lookbench.datasets.legacy.fashioniq import join_captions
    from lookbench.snapshot.composed import read_composed_queries

    src = fashioniq_dial(tmp_path / "src")
    captions = src / "captions" / "cap.dress.val.json"
    records = json.loads(captions.read_text(encoding="utf-8"))
    records[1]["captions"] = ["", "is shorter"]  # as three records of the real validation files
    captions.write_text(json.dumps(records, indent=4), encoding="utf-8")
    out = import_dataset("fashioniq", src, tmp_path / "out", ImportOptions())
    texts = read_composed_queries(open_snapshot(out), "composed_dress").texts
    assert join_captions(["", "is shorter"]) == " and is shorter"  # CLIP4Cir: f"{c1.capitalize()} and {c2}"
    assert " and is shorter" in texts and "and is shorter" not in texts


def test_a_composed_run_is_filed_under_the_name_its_result_carries(fiq: Path, tmp_path: Path) -> None:
    out = tmp_path / "r" / "{model}.json"
    args = ["eval", "-s", str(fiq), "-m", "python:legacykit:make_dial_images", "-o", str(out)]
    args += ["--cache-dir", str(tmp_path / "cache"), "--resamples", "20"]
    ran = CliRunner().invoke(app, args)
    assert ran.exit_code == 0, ran.output
    written = tmp_path / "r" / "dial_image.json"  # the slug of dial+image, the method auto chose
    assert json.loads(written.read_text())["model"]["name"] == "dial+image"
    assert "dial+image on" in " ".join(ran.output.split())
    again = CliRunner().invoke(app, [*args, "--skip-existing"])
    assert again.exit_code == 0 and "dial_image.json exists" in " ".join(again.output.split())
