"""Synth snapshots: layout, readability, determinism, release windows, the default cache, resume and the CLI."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import date, datetime, timezone
from pathlib import Path

import numpy as np
import PIL
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.datasets.synth import default as default_module
from lookbench.datasets.synth import generate as generate_module
from lookbench.datasets.synth.catalogue import NOISE_ONLY
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.datasets.synth.plan import plan_release
from lookbench.datasets.synth.release import history_window, release_window
from lookbench.datasets.synth.street import MIN_CROP
from lookbench.datasets.synth.tasks import STUDIO_QUERY_SCHEMA
from lookbench.errors import SnapshotError
from lookbench.snapshot.reader import open_snapshot
from lookbench.snapshot.schema import NOISE, STREETLOOK_SUBSETS, SUBSETS
from lookbench.snapshot.synth_manifest import MANIFEST
from lookbench.snapshot.writer import SplitWriter
from lookbench.taxonomy import load_taxonomy

RELEASE = date(2026, 6, 1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny release shared by the read-only tests."""
    return generate_snapshot(tmp_path_factory.mktemp("synth"), RELEASE, "tiny", seed=7)


def _rows(snap: Path, subset: str, split: str) -> list[dict]:
    files = open_snapshot(snap).files(subset, split)
    return [row for path in files for row in pq.read_table(path).to_pylist()]


def test_layout_is_readable_by_the_core_reader(tiny: Path) -> None:
    assert tiny.name == "v20260601"
    snap = open_snapshot(tiny.parent)
    assert snap.root == tiny
    assert snap.subsets == list(SUBSETS) and snap.has_noise
    lines = snap.validate(check_images=True)
    assert len(lines) == 9
    manifest = json.loads((tiny / MANIFEST).read_text())
    assert manifest["rows"]["real_studio_flat/query"] == 6 and manifest["seed"] == 7
    assert all((tiny / name).is_file() for name in manifest["files"])
    for subset in SUBSETS:
        assert snap.labels(subset, "query").first_seen_at is not None
        schema = pq.read_schema(tiny / subset / "gallery.parquet")
        assert b"huggingface" in schema.metadata
        assert schema.field("first_seen_at").type == pa.timestamp("us", tz="UTC")


def test_snapshot_name_tells_sizes_and_seeds_apart(tiny: Path, tmp_path: Path) -> None:
    assert open_snapshot(tiny).name == "v20260601-synth-6-tiny-seed7"
    assert open_snapshot(tiny).snapshot_id == "v20260601"
    other = generate_snapshot(tmp_path, RELEASE, "tiny", seed=8)
    assert open_snapshot(other).name == "v20260601-synth-6-tiny-seed8"
    (other / MANIFEST).write_text(json.dumps({"name": "../../etc/passwd"}))
    assert open_snapshot(other).name == "v20260601"
    (other / MANIFEST).write_text("{not json")
    assert open_snapshot(other).name == "v20260601"


def test_labels_are_taxonomy_values_and_ids_link_queries_to_products(tiny: Path) -> None:
    tax = load_taxonomy()
    noise_ids = {r["item_ID"] for r in _rows(tiny, NOISE, "gallery")}
    for subset in SUBSETS:
        gallery = _rows(tiny, subset, "gallery")
        by_id = {r["item_ID"]: r for r in gallery}
        assert not noise_ids & set(by_id)
        assert not {r["category"] for r in gallery} & set(NOISE_ONLY)
        for query in _rows(tiny, subset, "query"):
            allowed = set(tax.category(query["category"]).attribute_names())
            assert {query["main_attribute"], *query["other_attributes"]} <= allowed
            positive = by_id[query["item_ID"]]
            assert (positive["category"], positive["main_attribute"]) == (query["category"], query["main_attribute"])
            negatives = [r for r in gallery if r["hard_negative_of"] == query["item_ID"]]
            assert len(negatives) == 2
            assert all(n["category"] == query["category"] for n in negatives)
            assert any(n["main_attribute"] != query["main_attribute"] for n in negatives)


def test_no_distractor_carries_a_query_products_full_label_set(tiny: Path) -> None:
    """The strict rule (same category, A_q within A_i) never holds between a query and a noise row."""
    noise = [(r["category"], {r["main_attribute"], *r["other_attributes"]}) for r in _rows(tiny, NOISE, "gallery")]
    for subset in SUBSETS:
        for q in _rows(tiny, subset, "query"):
            labels = {q["main_attribute"], *q["other_attributes"]}
            assert not [n for cat, n in noise if cat == q["category"] and labels <= n], q["item_ID"]


def test_street_queries_carry_scene_box_outfit_and_one_date_per_photo(tiny: Path) -> None:
    for subset in STREETLOOK_SUBSETS:
        queries = _rows(tiny, subset, "query")
        assert len({q["outfit_id"] for q in queries}) < len(queries)
        dates: dict[str, set[datetime]] = {}
        for q in queries:
            raw = Image.open(io.BytesIO(q["raw_image"]["bytes"]))
            crop = Image.open(io.BytesIO(q["image"]["bytes"]))
            x0, y0, x1, y1 = q["bbox"]
            assert 0 <= x0 < x1 <= raw.width and 0 <= y0 < y1 <= raw.height
            assert crop.size == (x1 - x0, y1 - y0)
            assert min(crop.size) >= MIN_CROP
            dates.setdefault(q["outfit_id"], set()).add(q["first_seen_at"])
        assert all(len(d) == 1 for d in dates.values()), "every crop of one street photo carries the photo's date"
    for q in _rows(tiny, "real_studio_flat", "query"):
        assert q["raw_image"] is None and q["bbox"] is None


def test_a_date_window_keeps_or_drops_whole_outfits(tiny: Path) -> None:
    snap = open_snapshot(tiny)
    for subset in STREETLOOK_SUBSETS:
        labels = snap.labels(subset, "query")
        assert labels.first_seen_at is not None
        cut = sorted(labels.first_seen_at)[len(labels) // 2]
        kept = {labels.outfit_key[i] for i in range(len(labels)) if labels.first_seen_at[i] >= cut}
        dropped = {labels.outfit_key[i] for i in range(len(labels)) if labels.first_seen_at[i] < cut}
        assert not kept & dropped


def test_same_seed_and_date_give_identical_bytes_with_any_number_of_processes(tmp_path: Path, tiny: Path) -> None:
    again = generate_snapshot(tmp_path / "a", RELEASE, "tiny", seed=7, workers=2)
    files = sorted(p.relative_to(tiny) for p in tiny.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (tiny / rel).read_bytes() == (again / rel).read_bytes(), rel
    other = generate_snapshot(tmp_path / "b", RELEASE, "tiny", seed=8, workers=1)
    assert [r["image"] for r in _rows(other, NOISE, "gallery")] != [r["image"] for r in _rows(tiny, NOISE, "gallery")]


def _dates(snap: Path, subset: str, split: str) -> list[datetime]:
    return [r["first_seen_at"] for r in _rows(snap, subset, split)]


def test_release_windows_date_new_products_and_older_noise(tiny: Path) -> None:
    start, end = release_window(RELEASE)
    assert (start, end) == (datetime(2026, 5, 2, tzinfo=timezone.utc), datetime(2026, 6, 1, tzinfo=timezone.utc))
    for subset in SUBSETS:
        for split in ("query", "gallery"):
            assert all(start <= d < end for d in _dates(tiny, subset, split))
    h_start, h_end = history_window(RELEASE)
    assert all(h_start <= d < h_end for d in _dates(tiny, NOISE, "gallery"))
    later = date(2026, 7, 1)
    plan = plan_release(7, later, "tiny")
    l_start, l_end = release_window(later)
    products = [item.product for sub in plan.subsets for item in sub.gallery]
    assert all(l_start <= p.first_seen_at < l_end for p in products)
    old_ids = {r["item_ID"] for r in _rows(tiny, "real_studio_flat", "gallery")}
    assert not old_ids & {p.product_id for p in products}


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
        generate_snapshot(tiny.parent, date(2026, 7, 1), "huge", seed=7)


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


def test_a_crash_leaves_no_half_snapshot_and_a_rerun_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = generate_module.run_task
    calls = {"n": 0}

    def crash_on_the_fifth(task):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("boom")
        return original(task)

    monkeypatch.setattr(generate_module, "run_task", crash_on_the_fifth)
    with pytest.raises(RuntimeError, match="boom"):
        generate_snapshot(tmp_path, RELEASE, "tiny", seed=3, workers=1)
    assert not (tmp_path / "v20260601").exists()
    partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert len(partial) == 1
    done = sorted(p.relative_to(partial[0]).as_posix() for p in partial[0].rglob("*.parquet"))
    assert done == [
        f"{s}/{split}.parquet" for s in ("aigen_studio", "real_studio_flat") for split in ("gallery", "query")
    ]
    assert not [p for p in partial[0].rglob("*") if p.name.endswith(".tmp")]
    monkeypatch.setattr(generate_module, "run_task", original)
    messages: list[str] = []
    resumed = generate_snapshot(tmp_path, RELEASE, "tiny", seed=3, workers=1, progress=messages.append)
    assert messages[0] == "resuming: 4 of 9 files already written" and len(messages) == 6
    fresh = generate_snapshot(tmp_path / "fresh", RELEASE, "tiny", seed=3, workers=1)
    for path in fresh.rglob("*.parquet"):
        assert path.read_bytes() == (resumed / path.relative_to(fresh)).read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_resumed_run_redoes_a_damaged_file(tmp_path: Path) -> None:
    """A file in the partial folder that is not a parquet file of the planned row count is rendered again."""
    fresh = generate_snapshot(tmp_path / "fresh", RELEASE, "tiny", seed=4, workers=1)
    partial = tmp_path / "out" / ".v20260601.synth-6-tiny-seed4.partial"
    (partial / "real_studio_flat").mkdir(parents=True)
    (partial / "real_studio_flat" / "query.parquet").write_bytes(b"PAR1 not really")
    (partial / "aigen_studio").mkdir()
    (partial / "aigen_studio" / "query.parquet").write_bytes(
        (fresh / "real_studio_flat" / "query.parquet").read_bytes()
    )
    resumed = generate_snapshot(tmp_path / "out", RELEASE, "tiny", seed=4, workers=1)
    for path in fresh.rglob("*.parquet"):
        assert path.read_bytes() == (resumed / path.relative_to(fresh)).read_bytes(), path


def test_split_writer_streams_row_groups_and_refuses_empty_or_partial_files(tmp_path: Path) -> None:
    target = tmp_path / "s" / "query.parquet"
    writer = SplitWriter(target, STUDIO_QUERY_SCHEMA)
    with pytest.raises(SnapshotError, match="refusing to write an empty split"):
        writer.close()
    assert not target.exists() and not list(target.parent.iterdir())
    rows = _rows(generate_snapshot(tmp_path / "g", RELEASE, "tiny", seed=5, workers=1), "real_studio_flat", "query")
    writer = SplitWriter(target, STUDIO_QUERY_SCHEMA)
    writer.write(pa.Table.from_pylist(rows[:2], schema=STUDIO_QUERY_SCHEMA))
    writer.write(pa.Table.from_pylist(rows[2:], schema=STUDIO_QUERY_SCHEMA))
    assert not target.exists()
    writer.close()
    assert pq.ParquetFile(target).metadata.num_row_groups == 2 and pq.read_table(target).num_rows == len(rows)
    writer = SplitWriter(tmp_path / "s" / "other.parquet", STUDIO_QUERY_SCHEMA)
    writer.write(pa.Table.from_pylist(rows[:1], schema=STUDIO_QUERY_SCHEMA))
    writer.abort()
    assert sorted(p.name for p in target.parent.iterdir()) == ["query.parquet"]
    with pytest.raises(SnapshotError, match="lacks required column"):
        SplitWriter(tmp_path / "x.parquet", pa.schema([pa.field("image", pa.string())]))


def test_generation_errors_name_the_place(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(SnapshotError, match="cannot generate the Synth release .*file/v20260601"):
        generate_snapshot(blocker, RELEASE, "tiny", seed=1)
    result = CliRunner().invoke(app, ["synth", "--out", str(blocker), "--size", "tiny"])
    assert result.exit_code == 2 and f"{blocker}: exists and is not a folder" in " ".join(result.output.split())
    assert blocker.read_text() == "not a folder"


def test_cli_synth_writes_snapshot_and_contact_sheets(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["synth", "--out", str(tmp_path), "--size", "tiny", "--release", "2026-03-01", "--preview"]
    )
    assert result.exit_code == 0, result.output
    assert open_snapshot(tmp_path / "v20260301").subsets == list(SUBSETS)
    sheets = sorted((tmp_path / "preview" / "v20260301").glob("*.png"))
    assert [p.stem for p in sheets] == sorted([*SUBSETS, NOISE])
    with Image.open(sheets[0]) as sheet:
        assert sheet.width >= 4 * 128 and sheet.height > 128
    again = runner.invoke(app, ["synth", "--out", str(tmp_path), "--size", "tiny", "--release", "2026-03-01"])
    assert again.exit_code == 2 and "already exists" in again.output
    bad = runner.invoke(app, ["synth", "--out", str(tmp_path), "--release", "March"])
    assert bad.exit_code == 2 and "--release: 'March' is not an ISO date (YYYY-MM-DD)" in bad.output
    unknown = runner.invoke(app, ["synth", "--out", str(tmp_path), "--size", "enormous"])
    assert unknown.exit_code == 2 and "unknown synth size 'enormous'" in unknown.output
    negative = runner.invoke(app, ["synth", "--out", str(tmp_path), "--workers", "-1"])
    assert negative.exit_code == 2


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


PINNED_VERSIONS = {"numpy": "2.4.6", "Pillow": "13.0.0", "pyarrow": "26.0.1"}
"""The libraries the pins below were taken with: numpy draws the random streams, Pillow (libjpeg-turbo) encodes the
JPEGs and pyarrow writes the parquet files, so another version may change bytes the renderer did not."""
TINY_SEED7_DIGESTS = {
    "aigen_streetlook/gallery.parquet": (
        "c18a77fbfcbe59e76cbe12912c28d159b955565dd1397de3a46cb8c3171c2343",
        "8b0f92e24eb042ae4b22f24c981365f95672ec74742425e70c0e035a1e8d3a34",
    ),
    "aigen_streetlook/query.parquet": (
        "41d9b82b213e81ecad1b25baf2c329e97f60f82e7ec28900d4d399b56c0ed2ec",
        "bd1fc084419c19ff7e7b853b36255fafde0403bab92d54602ef06a0d0f0aaa12",
    ),
    "aigen_studio/gallery.parquet": (
        "7f0839046bd41d8d737e51ee2526bc42e766b6608be8cdfe8f2a1331313a900d",
        "40d212ddb5720e7f6e6c0c0b4572f2a5901ab77c511dd15638c2786eafa57b6a",
    ),
    "aigen_studio/query.parquet": (
        "d86ad6e3afc08077666b142419e905277517dffbbf40d7de7154f2e3e5d078d9",
        "7447f3fff3d5970cea8e8f7379c4d1c1cedf65c9ada333fd02a36cd0bb22852e",
    ),
    "noise/gallery-00000-of-00001.parquet": (
        "f58249bacf2779ac120d556527646785f3af9acd69b95a8bc3498861c7980dce",
        "01df0e4fd85ef31c5757b887cee66ce7a055c314418b7712f0cccc01e375b6a8",
    ),
    "real_streetlook/gallery.parquet": (
        "72c70c0cd78d4813c85bd65c4d84a97942ff3c0f7c35986cfb7a22b1c9d0d97f",
        "047a9c17712d8db5340be5ea698c00e6962588880c180497a021efa331ee00a9",
    ),
    "real_streetlook/query.parquet": (
        "78f4056758ffe3622bca18d492fe60e5f49b357ad589d4fcc125acfd9ea620d5",
        "c0663109bcaf90be5de31550cbff224558c2a3ddd00eb2ccd6d2508c4aa2508a",
    ),
    "real_studio_flat/gallery.parquet": (
        "faaf899d4d88ce3823e2b8b11b787aa05d9805a8c48e35914117117259738452",
        "c237e03f401bac2dff33b5ded5c9edc3015fd99c743b2232fefc46dff310f5a8",
    ),
    "real_studio_flat/query.parquet": (
        "5034f91124bb26db609aa2ab32f5a2b8417c3416853a05da667dbbfc7da7168a",
        "7be5546cc907876573041314d8d20e8247e90e2ae9430210ef809115ba68966f",
    ),
    "synth_manifest.json": (
        "061310d88bf7bbc4847782a072d3c9717a96325e704ae128c0ad7b1330408df7",
        "061310d88bf7bbc4847782a072d3c9717a96325e704ae128c0ad7b1330408df7",
    ),
}
"""Per file of `tiny` seed 7: sha256 of its rows (column names and each value's repr, images' JPEG bytes included)
and of the file itself, taken from the `synth-6` renderer (street photos tilted, real-look ones with sun and shade;
arms, hair and straps across street garments, detector boxes, a garment layout per photo)."""


def _content_digest(path: Path) -> str:
    table = pq.read_table(path)
    digest = hashlib.sha256()
    for name in table.column_names:
        digest.update(name.encode())
        for value in table.column(name).to_pylist():
            digest.update(repr(value).encode())
    return digest.hexdigest()


def test_the_renderer_still_writes_the_pinned_bytes(tiny: Path) -> None:
    versions = {"numpy": np.__version__, "Pillow": PIL.__version__, "pyarrow": pa.__version__}
    if versions != PINNED_VERSIONS:
        pytest.skip(f"pins taken with {PINNED_VERSIONS}, running {versions}: re-pin from a known-good renderer")
    files = sorted(str(p.relative_to(tiny)) for p in tiny.rglob("*") if p.is_file())
    assert files == sorted(TINY_SEED7_DIGESTS)
    for rel, (content, whole) in TINY_SEED7_DIGESTS.items():
        path = tiny / rel
        if path.suffix == ".parquet":
            assert _content_digest(path) == content, f"{rel}: rows differ"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == whole, f"{rel}: bytes differ"
