"""Synth's training purpose: several views per product, `train` splits only, dated before the release, and a product
space disjoint from the evaluation releases it is told about (ids, designs, strict matches, near-duplicate pixels)."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench._util.outfolder import MARKER_NAME, claim_output_folder
from lookbench.cli.main import app
from lookbench.datasets.synth import generate as generate_module
from lookbench.datasets.synth.catalogue import GALLERY_CATEGORIES, SPECS
from lookbench.datasets.synth.disjoint import excluded_designs
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.datasets.synth.plan import plan_release
from lookbench.datasets.synth.products import Product, label_space, sample_product, strict_labels
from lookbench.datasets.synth.release import release_window
from lookbench.datasets.synth.training import TRAIN_ID_PREFIX, TrainingPlan, plan_training
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import SUBSETS, TRAIN
from lookbench.snapshot.synth_manifest import MANIFEST
from lookbench.taxonomy import load_taxonomy
from lookbench.taxonomy.designs import QueryDesigns, label_overlap, overlap_classes
from lookbench.train.config import Guard
from lookbench.train.data import resolve_parts
from lookbench.train.fingerprints import EvaluationIndex, training_fingerprint

RELEASE = date(2026, 3, 1)
GUARD = Guard()
"""The guard's default tiers: the builder's dedup thresholds."""


@pytest.fixture(scope="module")
def tiny_train(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny training release."""
    return generate_snapshot(tmp_path_factory.mktemp("train"), RELEASE, "tiny", seed=0, purpose="train")


def _print(data: bytes):  # noqa: ANN202
    return training_fingerprint(data)[0]


def _rows(snap: Path) -> list[dict]:
    return [row for subset in SUBSETS for row in pq.read_table(snap / subset / f"{TRAIN}.parquet").to_pylist()]


def test_train_splits_hold_several_views_of_each_product(tiny_train: Path) -> None:
    snap = open_snapshot(tiny_train)
    assert resolve_parts(snap, ["*"]) == [(s, TRAIN) for s in SUBSETS]
    assert not any(snap.has_split(s, sp) for s in SUBSETS for sp in ("query", "gallery")) and not snap.has_noise
    assert any("item_ID(s) on more than one row" in line for line in snap.validate(check_images=True))
    rows = _rows(tiny_train)
    plan = plan_training(0, RELEASE, "tiny", excluded_designs(["default"]))  # the default exclusion
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
    assert manifest["excluded_designs"] == ["default"] and manifest["redrawn_products"] == plan.redrawn


def _design(product: Product) -> tuple[str, frozenset[str]]:
    """Category and every attribute outside the taxonomy's colour group, written out here, not the planner's code."""
    colours = set(load_taxonomy().groups["colour"].attributes)
    return product.category, frozenset(a for a in product.all_attributes() if a not in colours)


def _shared(training: list[Product], queries: list[Product]) -> tuple[int, int]:
    """(training products sharing a query's design, training products a query would strictly fine-match)."""
    designs = {_design(q) for q in queries}
    design = sum(_design(p) in designs for p in training)
    strict = sum(
        any(q.category == p.category and set(q.all_attributes()) <= set(p.all_attributes()) for q in queries)
        for p in training
    )
    return design, strict


def test_training_designs_are_disjoint_from_the_evaluation_plan_it_excludes() -> None:
    """Against the default snapshot's own plan (seed 0, 2026-06-01, small): without the exclusion the sampler draws
    query designs again; with it, no training product shares a query's design or strictly matches a query."""
    day = date(2026, 6, 1)
    queries = [p for sub in plan_release(0, day, "small").subsets for p in sub.query_products()]
    free = plan_training(0, day, "mini").products
    excluded = plan_training(0, day, "mini", excluded_designs(["default"]))
    assert _shared(free, queries)[0] > 0 and _shared(free, queries)[1] > 0
    assert _shared(excluded.products, queries) == (0, 0) and excluded.redrawn > 0
    assert len(excluded.scenes["real"]) == len(plan_training(0, day, "mini").scenes["real"])  # as many outfits
    assert all(p.product_id.startswith(TRAIN_ID_PREFIX) for p in excluded.products)
    assert {p.product_id for p in excluded.products}.isdisjoint(p.product_id for p in queries)


def test_label_overlap_counts_each_kind_against_hand_made_queries() -> None:
    blue = ("t-shirt", frozenset({"blue", "solid", "crew neck", "short sleeve", "hip length"}))
    red = ("t-shirt", frozenset({"red", "solid", "crew neck", "short sleeve", "hip length"}))
    pocket = ("t-shirt", blue[1] | {"chest pocket"})
    other = ("jeans", frozenset({"blue", "denim"}))
    queries = [blue, other, ("skirt", frozenset({"red"}))]
    found = label_overlap(queries, [red, pocket, other])
    # blue: another colour (red) and a strict match (pocket ⊇ blue); jeans: identical, hence also strict
    assert (found.queries, found.identical, found.same_design_other_colour, found.strict_fine_match) == (3, 1, 1, 2)
    assert label_overlap(queries, [blue]).same_design_other_colour == 0  # the same colour is not "another"
    per_query = overlap_classes(queries, [red, pocket, other])
    assert per_query == [
        {"same_design_other_colour", "strict_fine_match"},
        {"identical", "strict_fine_match"},
        set(),
    ]


def test_no_training_image_is_a_near_duplicate_of_the_evaluation_release(tmp_path: Path) -> None:
    """Beyond exact bytes: the builder's perceptual tier (mirror-robust pHash with a colour check) finds no training
    image near any image of the evaluation release whose designs the training release excluded."""
    evaluated = generate_snapshot(tmp_path / "eval", RELEASE, "tiny", seed=0)
    training = generate_snapshot(
        tmp_path / "train", RELEASE, "tiny", seed=0, purpose="train", exclude_designs=["synth:0:2026-03-01:tiny"]
    )
    index = EvaluationIndex(tmp_path / "cache")
    assert index.add_snapshot(open_snapshot(evaluated)) > 0
    rows = _rows(training)
    hits = [index.lookup(_print(r["image"]["bytes"]), GUARD.phash_threshold, GUARD.colour_threshold) for r in rows]
    assert [h for h in hits if h is not None] == []
    # the tier does fire on a re-encoded, mirrored evaluation image (so "no hit" is not a tier that never fires)
    first = pq.read_table(evaluated / "real_studio_flat" / "gallery.parquet").to_pylist()[0]["image"]["bytes"]
    mirrored = Image.open(io.BytesIO(first)).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    buffer = io.BytesIO()
    mirrored.convert("RGB").save(buffer, format="JPEG", quality=80)
    assert index.lookup(_print(buffer.getvalue()), GUARD.phash_threshold, GUARD.colour_threshold) is not None


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
    assert bad.exit_code != 0 and "--purpose must be one of eval, validation, train" in bad.output
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


def test_validation_releases_and_exclusion_names(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="would be the default snapshot itself"):
        generate_snapshot(tmp_path / "v", date(2026, 6, 1), "tiny", seed=0, purpose="validation")
    made = generate_snapshot(tmp_path / "v", date(2026, 5, 1), "tiny", seed=1, purpose="validation")
    manifest = json.loads((made / MANIFEST).read_text())
    assert manifest["purpose"] == "validation" and manifest["name"].endswith("-validation")
    assert "excluded_designs" not in manifest and open_snapshot(made).has_noise
    for names, message in (
        (["none", "default"], "cannot be combined"),
        (["synth:x:2026-01-01:tiny"], "expected synth:SEED:YYYY-MM-DD:SIZE"),
        (["synth:0:2026-13-01:tiny"], "synth:0:2026-13-01:tiny"),
        ([str(tmp_path / "missing")], "missing"),
    ):
        with pytest.raises(SnapshotError, match=message):
            excluded_designs(names)
    assert excluded_designs(["none"]) is None
    runner = CliRunner()
    bad = runner.invoke(
        app, ["synth", "--out", str(tmp_path / "t"), "--purpose", "train", "--exclude-designs", "synth:1"]
    )
    assert bad.exit_code == 2 and "expected synth:SEED:YYYY-MM-DD:SIZE" in bad.output


DEFAULT_TINY_PLAN_SHA256 = "6ca034e4f04643eb9516a7dc3ab7ddf39d497d13a014aaa80f145baf79211847"
"""`_plan_digest` of `plan_training(0, 2026-03-01, "tiny", default exclusion)` on main before `--exhausted-categories`
existed (5fb9812), re-taken when `synth-4` drew shades from shade families (the digest holds each product's RGB) and
when `synth-5` measured a street garment's visibility before the perspective warp and behind arms, hair and straps
(it decides which garments get queries); `synth-6`'s padded, tilted scenes left it as it was. The option must leave
a plan that exhausts nothing as it was."""
VALIDATION = "synth:1:2026-05-01:small"


def _plan_digest(plan: TrainingPlan) -> str:
    """sha256 of every product's labels, look seed and date, and every scene's outfit, queries and seed."""
    rows = [
        [p.product_id, p.category, sorted(p.all_attributes()), p.main_attribute, list(p.rgb), p.variation]
        + [p.first_seen_at.isoformat()]
        for p in plan.products
    ]
    scenes = {
        style: [[s.outfit_id, [p.product_id for p in s.products], list(s.queried), list(s.seed)] for s in found]
        for style, found in plan.scenes.items()
    }
    return hashlib.sha256(json.dumps([rows, scenes, plan.redrawn], sort_keys=True, default=str).encode()).hexdigest()


@pytest.fixture(scope="module")
def three_releases() -> tuple[QueryDesigns, list[Product]]:
    """The exclusion of the default snapshot, the validation release and seed 2's release of the validation date,
    and their query products (from the plans)."""
    releases = ((0, date(2026, 6, 1)), (1, date(2026, 5, 1)), (2, date(2026, 5, 1)))
    queries = [
        p for seed, day in releases for sub in plan_release(seed, day, "small").subsets for p in sub.query_products()
    ]
    exclusion = excluded_designs(["default", VALIDATION, "synth:2:2026-05-01:small"])
    assert exclusion is not None
    return exclusion, queries


def test_default_exclusion_plans_exactly_as_before_the_option() -> None:
    plan = plan_training(0, RELEASE, "tiny", excluded_designs(["default"]))
    assert plan.dropped == () and _plan_digest(plan) == DEFAULT_TINY_PLAN_SHA256
    assert _plan_digest(plan_training(0, RELEASE, "tiny", excluded_designs(["default"]), "drop")) == (
        DEFAULT_TINY_PLAN_SHA256
    )


def test_label_space_holds_every_label_set_the_sampler_draws() -> None:
    rng = np.random.default_rng(7)
    for category in SPECS:
        space = set(label_space(category))
        drawn = {strict_labels(sample_product(rng, category, "", datetime(2026, 1, 1)))[1] for _ in range(300)}
        assert drawn <= space, category
    assert len(set(label_space("bag"))) == 10 * 2 * 5 * 3  # colours x pattern x bag style x material


def test_excluding_three_releases_exhausts_bags_fails_by_default_and_drops_them_on_request(
    three_releases: tuple[QueryDesigns, list[Product]],
) -> None:
    exclusion, queries = three_releases
    bag_designs = {_design(q) for q in queries if q.category == "bag"}
    assert len(bag_designs) == 2 * 5 * 3  # every pattern x bag style x material: no bag design is left
    with pytest.raises(SnapshotError, match=r"every design of bag .*--exhausted-categories drop"):
        plan_training(0, RELEASE, "tiny", exclusion)
    for size in ("tiny", "mini"):
        plan = plan_training(0, RELEASE, size, exclusion, "drop")
        assert plan.dropped == ("bag",) and len(plan.products) > 0
        assert not any(p.category == "bag" for p in plan.products)
        assert not any(p.category == "bag" for s in plan.scenes["real"] + plan.scenes["aigen"] for p in s.products)
        assert _shared(plan.products, queries) == (0, 0)
        assert {p.category for p in plan.products} & {"dress", "jumpsuit"}  # the rest is still drawn


def _exhausting(root: Path, categories: tuple[str, ...]) -> Path:
    """A snapshot whose query rows carry no attribute: every product of those categories strictly matches one."""
    rows = [make_row(f"q{n}", category, "", seed=n) for n, category in enumerate(categories)]
    return write_snapshot(root, {"real_studio_flat": {"query": rows, "gallery": rows}})


def test_cli_drops_an_exhausted_category_and_records_it(tmp_path: Path) -> None:
    folder = _exhausting(tmp_path / "eval", ("bag",))
    out = tmp_path / "train"
    args = ["synth", "--out", str(out), "--release", "2026-03-01", "--size", "tiny", "--purpose", "train"]
    args += ["--workers", "1", "--exclude-designs", str(folder)]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "--exhausted-categories drop" in refused.output and "bag" in refused.output
    assert not out.exists() or not any(out.iterdir())
    made = CliRunner().invoke(app, [*args, "--exhausted-categories", "drop"])
    assert made.exit_code == 0, made.output
    assert "left out, every design excluded: bag" in made.output
    manifest = json.loads((out / "v20260301" / MANIFEST).read_text())
    assert manifest["exhausted_categories"] == "drop" and manifest["dropped_categories"] == ["bag"]
    assert "bag" not in manifest["gallery_categories"] and "dress" in manifest["gallery_categories"]
    rows = _rows(out / "v20260301")
    assert rows and not any(r["category"] == "bag" for r in rows)


def _interrupt_on_call(monkeypatch: pytest.MonkeyPatch, number: int) -> None:
    """Rendering raises KeyboardInterrupt (Ctrl-C) at its `number`-th task."""
    original, calls = generate_module.run_task, {"n": 0}

    def interrupted(task):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == number:
            raise KeyboardInterrupt
        return original(task)

    monkeypatch.setattr(generate_module, "run_task", interrupted)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _entries(folder: Path) -> list[Path]:
    """What a synth output folder holds besides the marker claiming it."""
    return [p for p in folder.iterdir() if p.name != MARKER_NAME]


def test_an_interrupted_drop_run_resumes_to_the_same_bytes_and_another_policy_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _exhausting(tmp_path / "eval", ("bag",))
    out = tmp_path / "train"
    args = ["synth", "--out", str(out), "--release", "2026-03-01", "--size", "tiny", "--purpose", "train"]
    args += ["--workers", "1", "--exclude-designs", str(folder)]
    claim_output_folder(out, "synth")  # the folder of an interrupted `lookbench synth`
    _interrupt_on_call(monkeypatch, 4)  # 5 tasks: 2 + 1 studio, then the street files
    with pytest.raises(KeyboardInterrupt):
        generate_snapshot(
            out, RELEASE, "tiny", workers=1, purpose="train", exclude_designs=[str(folder)], exhausted="drop"
        )
    monkeypatch.undo()
    (partial,) = _entries(out)
    left = _files(partial)
    assert sorted(left) == ["aigen_studio/train.parquet", "real_studio_flat/train.parquet"]
    other = CliRunner().invoke(app, [*args, "--exhausted-categories", "fail"])
    (error,) = [line for line in other.output.splitlines() if line.startswith("error:")]
    assert other.exit_code == 2 and "Traceback" not in other.output, other.output
    assert error.endswith(
        ".partial holds an interrupted run of this release with --exhausted-categories drop; rerun with drop to "
        "resume it, or delete that folder to start over with fail"
    )
    assert _entries(out) == [partial] and _files(partial) == left  # nothing written, nothing lost
    resumed = CliRunner().invoke(app, [*args, "--exhausted-categories", "drop"])
    assert resumed.exit_code == 0 and "resuming: 2 of 4 files already written" in resumed.output, resumed.output
    fresh = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "fresh"), "--exhausted-categories", "drop"])
    assert fresh.exit_code == 0, fresh.output
    assert _entries(out) == [out / "v20260301"]
    whole, again = _files(tmp_path / "fresh" / "v20260301"), _files(out / "v20260301")
    assert sorted(whole) == sorted(again) and all(whole[name] == again[name] for name in whole)
    assert json.loads(again[MANIFEST])["dropped_categories"] == ["bag"]


def test_an_interrupted_fail_run_refuses_a_drop_rerun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "train"
    claim_output_folder(out, "synth")  # the folder of an interrupted `lookbench synth`
    _interrupt_on_call(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        generate_snapshot(out, RELEASE, "tiny", workers=1, purpose="train", exclude_designs=["none"])
    monkeypatch.undo()
    args = ["synth", "--out", str(out), "--release", "2026-03-01", "--size", "tiny", "--purpose", "train"]
    run = CliRunner().invoke(app, [*args, "--exclude-designs", "none", "--exhausted-categories", "drop"])
    assert run.exit_code == 2 and "with --exhausted-categories fail; rerun with fail to resume it" in run.output
    (partial,) = _entries(out)  # the interrupted run's folder, and nothing else
    assert partial.name.endswith(".partial") and _files(partial) == {}


def test_cli_refuses_an_unknown_policy_and_an_exclusion_of_everything(tmp_path: Path) -> None:
    out = tmp_path / "train"
    base = ["synth", "--out", str(out), "--release", "2026-03-01", "--size", "tiny", "--purpose", "train"]
    bad = CliRunner().invoke(app, [*base, "--exhausted-categories", "skip"])
    assert bad.exit_code == 2 and "--exhausted-categories must be one of fail, drop, got 'skip'" in bad.output
    assert "Traceback" not in bad.output and not out.exists()
    everything = _exhausting(tmp_path / "eval", GALLERY_CATEGORIES)
    for policy in ("fail", "drop"):
        run = CliRunner().invoke(app, [*base, "--exclude-designs", str(everything), "--exhausted-categories", policy])
        assert run.exit_code == 2 and "nothing is left to train on" in run.output
        assert not out.exists() or not any(out.iterdir())
    garments = _exhausting(tmp_path / "eval2", ("dress", "jumpsuit"))
    run = CliRunner().invoke(app, [*base, "--exclude-designs", str(garments), "--exhausted-categories", "drop"])
    assert run.exit_code == 2 and "every one-piece category (dress, jumpsuit)" in run.output
