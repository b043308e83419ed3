"""Composed queries derived from a Synth snapshot's exact labels: exact pairs, disjoint validation, atomic output."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from lookbench._util.images import decode_image
from lookbench.cli.main import app
from lookbench.datasets.composed import derive_synth_composed
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.errors import SnapshotError
from lookbench.evaluation.composed.relevance import target_attributes
from lookbench.evaluation.composed.texts import modification_text
from lookbench.snapshot.composed import Change, changes_between, read_composed_queries
from lookbench.snapshot.manifest import MANIFEST_NAME, verify_manifest, write_manifest
from lookbench.snapshot.reader import open_snapshot


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_snapshot(tmp_path_factory.mktemp("synth"), date(2026, 6, 1), "tiny", seed=3)


def test_changes_between_uses_taxonomy_groups() -> None:
    reference = frozenset({"red", "long sleeve", "crew neck", "chest pocket"})
    target = frozenset({"blue", "long sleeve", "crew neck", "hood"})
    assert changes_between(reference, target) == (
        Change("colour", "red", "blue"),
        Change("details", "chest pocket", ""),
        Change("details", "", "hood"),
    )
    assert changes_between(reference, reference) == ()
    assert changes_between(reference, reference | {"sparkly"}) is None  # not a taxonomy value


def test_texts_cover_replace_add_remove_and_two_changes() -> None:
    assert "short sleeves" in modification_text((Change("sleeve length", "long sleeve", "short sleeve"),), "a")
    assert "hood" in modification_text((Change("details", "", "hood"),), "b")
    two = modification_text((Change("colour", "red", "blue"), Change("details", "hood", "")), "c")
    assert "blue" in two and "without hood" in two
    texts = {modification_text((Change("colour", "red", "blue"),), str(i)) for i in range(40)}
    assert len(texts) > 1  # several phrasings
    with pytest.raises(ValueError):
        modification_text((), "d")


def test_derived_pairs_are_exact_and_validation_products_are_held_out(synth: Path, tmp_path: Path) -> None:
    out = derive_synth_composed(open_snapshot(synth), tmp_path / "out", validation=0.3, seed=1)
    assert out == tmp_path / "out" / "v20260601"
    derived = open_snapshot(out)
    assert derived.subsets[-1] == "composed"
    gallery = derived.labels("composed", "gallery")
    by_id = {item: gallery.attribute_set(row) for row, item in enumerate(gallery.item_id)}
    products: dict[str, set[str]] = {}
    counts = {1: 0, 2: 0}
    for split in ("query", "validation"):
        queries = read_composed_queries(derived, "composed", split)
        for row in range(len(queries)):
            (target,) = queries.target_ids[row]
            reference = queries.labels.attribute_set(row)
            assert target_attributes(reference, queries.changes[row]) == by_id[target]  # exact by construction
            counts[len(queries.changes[row])] += 1
        rows = pq.read_table(out / "composed" / f"{split}.parquet", columns=["item_ID", "target_ids"]).to_pylist()
        # a product's pairs (its photo or its variants as reference) all fall in one split
        products[split] = {r["item_ID"] for r in rows} | {t for r in rows for t in r["target_ids"]}
    assert counts[1] > 0 and counts[2] > 0
    assert not products["query"] & products["validation"]
    derived.check_task("composed", "composed")
    noise_files = sorted((synth / "noise").glob("*.parquet"))  # Synth shards its noise pool
    assert noise_files
    for source_file in noise_files:
        assert (out / "noise" / source_file.name).stat().st_ino == source_file.stat().st_ino  # hard-linked
    with pytest.raises(SnapshotError, match="already exists"):
        derive_synth_composed(open_snapshot(synth), tmp_path / "out")


def test_a_manifest_is_rewritten_and_a_non_synth_snapshot_is_refused(synth: Path, tmp_path: Path) -> None:
    copy = derive_synth_composed(open_snapshot(synth), tmp_path / "copy", validation=0.0)
    assert not (copy / "composed" / "validation.parquet").exists()
    write_manifest(copy, release="2026-06-01")
    again = derive_synth_composed(open_snapshot(copy), tmp_path / "again")
    manifest = verify_manifest(again)
    assert manifest is not None and manifest["release"] == "2026-06-01" and "composed_from" in manifest
    assert "composed/query.parquet" in json.loads((again / MANIFEST_NAME).read_text())["files"]
    plain = tmp_path / "plain" / "v20260101"
    (plain / "noise").mkdir(parents=True)
    for shard in (synth / "noise").glob("*.parquet"):
        (plain / "noise" / shard.name).write_bytes(shard.read_bytes())
    (plain / "real_studio_flat").mkdir()
    table = pq.read_table(synth / "real_studio_flat" / "gallery.parquet").drop_columns(["hard_negative_of"])
    pq.write_table(table, plain / "real_studio_flat" / "gallery.parquet")
    pq.write_table(table, plain / "real_studio_flat" / "query.parquet")
    with pytest.raises(SnapshotError, match="has no hard_negative_of column"):
        derive_synth_composed(open_snapshot(plain), tmp_path / "x")


def test_cli_derives_and_reports_counts(synth: Path, tmp_path: Path) -> None:
    run = CliRunner().invoke(app, ["composed", "derive", "-s", str(synth), "--out", str(tmp_path / "d")])
    assert run.exit_code == 0, run.output
    assert "composed: query" in run.output
    run = CliRunner().invoke(app, ["composed", "derive", "-s", str(synth), "--out", str(tmp_path / "d")])
    assert run.exit_code == 2 and "already exists" in run.output
    run = CliRunner().invoke(app, ["composed", "derive", "-s", str(synth), "--out", str(tmp_path / "e"),
                                   "--validation", "1.5"])  # fmt: skip
    assert run.exit_code == 2 and "validation fraction must lie in [0, 1)" in run.output


def _ids(path: Path) -> set[str]:
    return {str(v) for v in pq.read_table(path, columns=["item_ID"]).column("item_ID").to_pylist()}


def test_rendered_designs_are_exact_new_items_with_references_in_every_style(synth: Path, tmp_path: Path) -> None:
    out = derive_synth_composed(open_snapshot(synth), tmp_path / "out", validation=0.0)
    source_gallery = set().union(*(_ids(p) for p in synth.glob("*/gallery*.parquet")))
    composed_gallery = pq.read_table(out / "composed" / "gallery.parquet").to_pylist()
    rendered = {r["item_ID"]: r for r in composed_gallery if r["item_ID"] not in source_gallery}
    assert rendered and not set(rendered) & source_gallery  # new ids, after the distractors'
    queries = read_composed_queries(open_snapshot(out), "composed", "query")
    styles = set()
    catalogue = {r["item_ID"]: r for r in composed_gallery if r["item_ID"] in source_gallery}
    for row in range(len(queries)):
        (target,) = queries.target_ids[row]
        if target not in rendered:
            continue
        assert len(queries.changes[row]) == 2
        reference = queries.labels.item_id[row]
        styles |= {p.parent.name for p in synth.glob("*/query.parquet") if reference in _ids(p)}
        # the same design: its own catalogue shot differs from the re-rendered one, but not in every pixel
        # (shop photos come in several frames: compare both at one size)
        own = np.asarray(decode_image(catalogue[reference]["image"]["bytes"]).convert("RGB").resize((64, 64)), "f4")
        redrawn = np.asarray(decode_image(rendered[target]["image"]["bytes"]).convert("RGB").resize((64, 64)), "f4")
        assert np.abs(own - redrawn).mean() > 1.0
    assert styles == {"real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook"}
    again = derive_synth_composed(open_snapshot(synth), tmp_path / "again", validation=0.0, workers=2)
    assert pq.read_table(again / "composed" / "gallery.parquet").equals(
        pq.read_table(out / "composed" / "gallery.parquet")
    )  # seeded by the plan alone: the same in worker processes


def test_rendered_pairs_refuse_a_snapshot_unlike_its_manifest(synth: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy" / synth.name
    shutil.copytree(synth, copy)
    manifest = json.loads((copy / "synth_manifest.json").read_text())
    (copy / "synth_manifest.json").write_text(json.dumps({**manifest, "seed": manifest["seed"] + 1}))
    with pytest.raises(SnapshotError, match="differs from the release its synth_manifest.json describes"):
        derive_synth_composed(open_snapshot(copy), tmp_path / "a")
    (copy / "synth_manifest.json").write_text("{not json")
    with pytest.raises(SnapshotError, match="synth_manifest.json: not a readable Synth manifest"):
        derive_synth_composed(open_snapshot(copy), tmp_path / "b")
    (copy / "synth_manifest.json").unlink()
    run = CliRunner().invoke(app, ["composed", "derive", "-s", str(copy), "--out", str(tmp_path / "c")])
    assert run.exit_code == 2 and "has no synth_manifest.json" in run.output and "Traceback" not in run.output
    assert not (tmp_path / "c" / copy.name).exists()
    run = CliRunner().invoke(app, ["composed", "derive", "-s", str(copy), "--out", str(tmp_path / "c"), "--no-render"])
    assert run.exit_code == 0, run.output


def test_some_groups_have_phrasings_of_their_own() -> None:
    colour = (Change("colour", "red", "blue"),)
    texts = {modification_text(colour, str(i)) for i in range(60)}
    assert "like this, but in blue" in texts and "like this, but blue instead of red" in texts
    length = {modification_text((Change("length", "mini", "maxi"),), str(i)) for i in range(60)}
    assert "like this in a maxi cut" in length and all("maxi" in t for t in length)
