"""Synth snapshots: layout, readability, determinism, release windows, the default cache and the CLI."""

from __future__ import annotations

import io
import json
from datetime import date, datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import NOISE, STREETLOOK_SUBSETS, SUBSETS
from lookbench.synth import default as default_module
from lookbench.synth.generate import MANIFEST, SynthGenerator, generate_snapshot
from lookbench.synth.release import history_window, release_window
from lookbench.taxonomy import load_taxonomy

RELEASE = date(2026, 6, 1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny release shared by the read-only tests."""
    return generate_snapshot(tmp_path_factory.mktemp("synth"), RELEASE, "tiny", seed=7)


def _rows(snap: Path, subset: str, split: str) -> list[dict]:
    return pq.read_table(snap / subset / f"{split}.parquet").to_pylist()


def test_layout_is_readable_by_the_core_reader(tiny: Path) -> None:
    assert tiny.name == "v20260601"
    snap = open_snapshot(tiny.parent)
    assert snap.root == tiny
    assert snap.subsets == list(SUBSETS) and snap.has_noise
    lines = snap.validate(check_images=True)
    assert len(lines) == 9
    manifest = json.loads((tiny / MANIFEST).read_text())
    assert manifest["rows"]["real_studio_flat/query"] == 6 and manifest["seed"] == 7
    for subset in SUBSETS:
        assert snap.labels(subset, "query").first_seen_at is not None
        schema = pq.read_schema(tiny / subset / "gallery.parquet")
        assert b"huggingface" in schema.metadata
        assert schema.field("first_seen_at").type == pa.timestamp("us", tz="UTC")


def test_labels_are_taxonomy_values_and_ids_link_queries_to_products(tiny: Path) -> None:
    tax = load_taxonomy()
    noise_ids = {r["item_ID"] for r in _rows(tiny, NOISE, "gallery")}
    for subset in SUBSETS:
        gallery = _rows(tiny, subset, "gallery")
        by_id = {r["item_ID"]: r for r in gallery}
        assert not noise_ids & set(by_id)
        for query in _rows(tiny, subset, "query"):
            allowed = set(tax.category(query["category"]).attribute_names())
            assert {query["main_attribute"], *query["other_attributes"]} <= allowed
            positive = by_id[query["item_ID"]]
            assert (positive["category"], positive["main_attribute"]) == (query["category"], query["main_attribute"])
            negatives = [r for r in gallery if r["hard_negative_of"] == query["item_ID"]]
            assert len(negatives) == 2
            assert all(n["category"] == query["category"] for n in negatives)
            assert any(n["main_attribute"] != query["main_attribute"] for n in negatives)


def test_street_queries_carry_scene_box_and_outfit(tiny: Path) -> None:
    for subset in STREETLOOK_SUBSETS:
        queries = _rows(tiny, subset, "query")
        assert len({q["outfit_id"] for q in queries}) < len(queries)
        for q in queries:
            raw = Image.open(io.BytesIO(q["raw_image"]["bytes"]))
            crop = Image.open(io.BytesIO(q["image"]["bytes"]))
            x0, y0, x1, y1 = q["bbox"]
            assert 0 <= x0 < x1 <= raw.width and 0 <= y0 < y1 <= raw.height
            assert crop.size == (x1 - x0, y1 - y0)
    for q in _rows(tiny, "real_studio_flat", "query"):
        assert q["raw_image"] is None and q["bbox"] is None


def test_same_seed_and_date_give_identical_bytes(tmp_path: Path, tiny: Path) -> None:
    again = generate_snapshot(tmp_path / "a", RELEASE, "tiny", seed=7)
    files = sorted(p.relative_to(tiny) for p in tiny.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (tiny / rel).read_bytes() == (again / rel).read_bytes(), rel
    other = SynthGenerator(8, RELEASE, "tiny").noise(9)
    assert [r["image"] for r in other] != [r["image"] for r in _rows(tiny, NOISE, "gallery")]


def _dates(snap: Path, subset: str, split: str) -> list[datetime]:
    return pq.read_table(snap / subset / f"{split}.parquet", columns=["first_seen_at"])["first_seen_at"].to_pylist()


def test_release_windows_date_new_products_and_older_noise(tmp_path: Path, tiny: Path) -> None:
    start, end = release_window(RELEASE)
    assert (start, end) == (datetime(2026, 5, 2, tzinfo=timezone.utc), datetime(2026, 6, 1, tzinfo=timezone.utc))
    for subset in SUBSETS:
        for split in ("query", "gallery"):
            assert all(start <= d < end for d in _dates(tiny, subset, split))
    h_start, h_end = history_window(RELEASE)
    assert all(h_start <= d < h_end for d in _dates(tiny, NOISE, "gallery"))
    later = date(2026, 7, 1)
    gen = SynthGenerator(7, later, "tiny")
    rows = gen.studio_subset("real_studio_flat", "real", 1)
    l_start, l_end = release_window(later)
    assert all(l_start <= r["first_seen_at"] < l_end for r in rows.query + rows.gallery)
    old_ids = {r["item_ID"] for r in _rows(tiny, "real_studio_flat", "gallery")}
    assert not old_ids & {r["item_ID"] for r in rows.gallery}


def test_loads_with_datasets_if_installed(tiny: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    files = str(tiny / "real_streetlook" / "query.parquet")
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(tmp_path))
    assert isinstance(ds.features["image"], datasets.Image)
    assert ds[0]["image"].size[0] > 0


def test_existing_release_is_not_overwritten_without_asking(tiny: Path) -> None:
    with pytest.raises(SnapshotError, match="already exists"):
        generate_snapshot(tiny.parent, RELEASE, "tiny", seed=7)
    with pytest.raises(SnapshotError, match="unknown synth size 'huge'"):
        SynthGenerator(0, RELEASE, "huge")


def test_default_snapshot_is_generated_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(default_module, "DEFAULT_SIZE", "tiny")
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    first = default_module.default_snapshot()
    assert first.is_relative_to(tmp_path / "cache" / "synth") and first.name == "v20260601"
    assert open_snapshot(first).subsets == list(SUBSETS)

    def fail(*args: object, **kwargs: object) -> Path:
        raise AssertionError("regenerated")

    monkeypatch.setattr(default_module, "generate_snapshot", fail)
    assert default_module.default_snapshot() == first
    monkeypatch.undo()
    monkeypatch.setattr(default_module, "DEFAULT_SIZE", "tiny")
    monkeypatch.setenv("LOOKBENCH_CACHE", str(tmp_path / "cache"))
    for path in (first / "real_streetlook").iterdir():
        path.unlink()
    assert not default_module.is_complete(first)
    assert default_module.default_snapshot() == first and default_module.is_complete(first)
    assert default_module.cache_root(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    monkeypatch.delenv("LOOKBENCH_CACHE")
    assert default_module.cache_root() == Path.home() / ".cache" / "lookbench" / "synth"


def test_a_crash_leaves_no_half_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = SynthGenerator.subsets

    def crash(self: SynthGenerator):  # type: ignore[no-untyped-def]
        for index, item in enumerate(original(self)):
            if index == 2:
                raise RuntimeError("boom")
            yield item

    monkeypatch.setattr(SynthGenerator, "subsets", crash)
    monkeypatch.setattr(default_module, "DEFAULT_SIZE", "tiny")
    with pytest.raises(RuntimeError, match="boom"):
        default_module.default_snapshot(tmp_path)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    assert not list(tmp_path.rglob("v20260601"))


def test_cli_synth_writes_snapshot_and_contact_sheets(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["synth", "--out", str(tmp_path), "--size", "tiny", "--release", "2026-03-01", "--preview"]
    )
    assert result.exit_code == 0, result.output
    assert open_snapshot(tmp_path / "v20260301").subsets == list(SUBSETS)
    sheets = sorted((tmp_path / "preview" / "v20260301").glob("*.png"))
    assert [p.stem for p in sheets] == sorted(SUBSETS)
    with Image.open(sheets[0]) as sheet:
        assert sheet.width >= 4 * 128 and sheet.height > 128
    again = runner.invoke(app, ["synth", "--out", str(tmp_path), "--size", "tiny", "--release", "2026-03-01"])
    assert again.exit_code == 2 and "already exists" in again.output
    bad = runner.invoke(app, ["synth", "--out", str(tmp_path), "--release", "March"])
    assert bad.exit_code == 2 and "bad release date" in bad.output


def test_cli_taxonomy_prints_categories_and_schemas() -> None:
    runner = CliRunner()
    everything = runner.invoke(app, ["taxonomy"])
    assert everything.exit_code == 0 and "27 categories" in everything.output
    one = runner.invoke(app, ["taxonomy", "Hoodies"])
    assert one.exit_code == 0 and "kangaroo pocket" in one.output
    schema = runner.invoke(app, ["taxonomy", "jeans", "--schema"])
    assert schema.exit_code == 0 and json.loads(schema.output)["properties"]["category"] == {"const": "jeans"}
    unknown = runner.invoke(app, ["taxonomy", "spacesuit"])
    assert unknown.exit_code == 2 and "unknown category" in unknown.output
