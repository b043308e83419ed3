"""Synth's training purpose: several views per product, `train` splits only, dated before the release, and a product
space disjoint from every evaluation release (ids, random streams, looks, image bytes)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import SUBSETS, TRAIN
from lookbench.synth.generate import MANIFEST, generate_snapshot
from lookbench.synth.plan import plan_release
from lookbench.synth.products import Product
from lookbench.synth.release import release_window
from lookbench.synth.training import TRAIN_ID_PREFIX, plan_training
from lookbench.taxonomy import load_taxonomy
from lookbench.train.data import resolve_parts

RELEASE = date(2026, 3, 1)


@pytest.fixture(scope="module")
def tiny_train(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny training release."""
    return generate_snapshot(tmp_path_factory.mktemp("train"), RELEASE, "tiny", seed=0, purpose="train")


def _rows(snap: Path) -> list[dict]:
    return [row for subset in SUBSETS for row in pq.read_table(snap / subset / f"{TRAIN}.parquet").to_pylist()]


def test_train_splits_hold_several_views_of_each_product(tiny_train: Path) -> None:
    snap = open_snapshot(tiny_train)
    assert resolve_parts(snap, ["*"]) == [(s, TRAIN) for s in SUBSETS]
    assert not any(snap.has_split(s, sp) for s in SUBSETS for sp in ("query", "gallery")) and not snap.has_noise
    assert any("item_ID(s) on more than one row" in line for line in snap.validate(check_images=True))
    rows = _rows(tiny_train)
    plan = plan_training(0, RELEASE, "tiny")
    assert len(rows) == plan.total_images()
    views = Counter(r["item_ID"] for r in rows)
    assert set(views) == {p.product_id for p in plan.products}
    assert min(views.values()) >= 3  # catalogue shot and a studio shot per style, street crops when visible
    kinds = Counter(r["view"] for r in rows)
    assert kinds["catalogue"] == len(plan.products) and kinds["studio"] == 2 * len(plan.products)
    assert kinds["street"] > 0
    taxonomy = load_taxonomy()
    assert all(r["category"] in taxonomy.categories for r in rows)
    start, end = release_window(RELEASE)
    assert all(start <= r["first_seen_at"] < end for r in rows)
    street = [r for r in rows if r["view"] == "street"]
    assert all(r["outfit_id"] and r["bbox"] and r["raw_image"] is None for r in street)
    manifest = json.loads((tiny_train / MANIFEST).read_text())
    assert manifest["purpose"] == "train" and manifest["rows"] == plan.counts()


def test_products_are_disjoint_from_the_evaluation_release_of_the_same_seed_and_date() -> None:
    """Against the default snapshot's own plan (seed 0, 2026-06-01, small): no id, look or date stream shared."""
    day = date(2026, 6, 1)
    evaluated = plan_release(0, day, "small")
    eval_products: list[Product] = [p for sub in evaluated.subsets for p in sub.query_products()]
    eval_products += [item.product for sub in evaluated.subsets for item in sub.gallery]
    training = plan_training(0, day, "small").products
    assert len(training) > 1000
    assert all(p.product_id.startswith(TRAIN_ID_PREFIX) for p in training)
    assert {p.product_id for p in training}.isdisjoint(p.product_id for p in eval_products)
    assert {p.variation for p in training}.isdisjoint(p.variation for p in eval_products)  # the non-label shape


def test_no_image_of_a_training_release_is_in_the_evaluation_release(tmp_path: Path, tiny_train: Path) -> None:
    evaluated = generate_snapshot(tmp_path, RELEASE, "tiny", seed=0)
    digest = lambda row: hashlib.sha256(row["image"]["bytes"]).hexdigest()  # noqa: E731
    eval_rows = [
        row
        for path in sorted(evaluated.rglob("*.parquet"))
        for row in pq.read_table(path, columns=["image", "item_ID"]).to_pylist()
    ]
    train_rows = _rows(tiny_train)
    assert {digest(r) for r in train_rows}.isdisjoint(digest(r) for r in eval_rows)
    assert {r["item_ID"] for r in train_rows}.isdisjoint(r["item_ID"] for r in eval_rows)


def test_same_seed_gives_identical_training_bytes_and_unknown_names_are_refused(
    tmp_path: Path, tiny_train: Path
) -> None:
    again = generate_snapshot(tmp_path, RELEASE, "tiny", seed=0, purpose="train", workers=2)
    for subset in SUBSETS:
        name = f"{subset}/{TRAIN}.parquet"
        assert (again / name).read_bytes() == (tiny_train / name).read_bytes()
    with pytest.raises(SnapshotError, match="unknown synth training size 'real'"):
        generate_snapshot(tmp_path / "x", RELEASE, "real", purpose="train")
    with pytest.raises(SnapshotError, match="unknown synth purpose 'pretrain'"):
        generate_snapshot(tmp_path / "x", RELEASE, "tiny", purpose="pretrain")


def test_cli_purpose_train_and_its_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["synth", "--out", str(tmp_path), "--purpose", "pretrain"])
    assert bad.exit_code != 0 and "--purpose must be one of eval, train" in bad.output
    assert "Traceback" not in bad.output
    size = runner.invoke(app, ["synth", "--out", str(tmp_path), "--purpose", "train", "--size", "real"])
    assert size.exit_code != 0 and "unknown synth training size" in size.output
    ok = runner.invoke(
        app,
        [
            "synth",
            "--out",
            str(tmp_path),
            "--release",
            "2026-03-01",
            "--size",
            "tiny",
            "--purpose",
            "train",
            "--workers",
            "1",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert open_snapshot(tmp_path / "v20260301").has_split("aigen_studio", TRAIN)
