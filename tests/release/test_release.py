"""Release mechanics without a shop: synth source, config errors, stage hooks, resume, push, contamination."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image, ImageEnhance, ImageOps
from releasekit import (
    encode,
    near_copy,
    photo,
    published_rows,
    run_build,
    synth_release_config,
    synth_rows,
    write_catalog,
    write_yaml,
)
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.errors import ReleaseError, SnapshotError
from lookbench.models.encoder import EncoderBase
from lookbench.models.registry import KINDS, ModelKind
from lookbench.release.config import ReleaseConfig, load_config
from lookbench.release.pipeline import run_stages
from lookbench.release.push import push_release
from lookbench.release.stages.base import StageContext, StageResult, StageStats, samples_of, save_samples
from lookbench.release.stages.collect import CollectStage
from lookbench.release.stages.dedup import DedupStage, DedupStats
from lookbench.release.stages.publish import PublishStage
from lookbench.release.stages.split import SplitStage
from lookbench.search.duplicates.crops import GREY_BYTES
from lookbench.search.duplicates.store import StoredCodes, write_store
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.writer import image_value


@pytest.fixture
def synth(make_snapshot) -> Path:
    """A Synth snapshot: 3 items, each with a query and a gallery image."""
    return make_snapshot(
        {"aigen_studio": {"query": synth_rows("i", [1, 2, 3]), "gallery": synth_rows("i", [1, 2, 3], offset=10)}},
        version="v20260501",
    )


class CountStats(StageStats):
    rows: int


class CountingStage:
    """A stage of one's own inserted between dedup and split: passes rows through, counts them."""

    name = "count"
    stats_type = CountStats

    def check(self) -> None:
        pass

    def fingerprint(self, ctx: StageContext) -> str:
        return "count-v1"

    def run(self, ctx: StageContext, previous: Path | None) -> StageResult:
        samples = samples_of(previous)
        return StageResult(save_samples(ctx, self.name, samples), CountStats(rows=len(samples)))


def basic_stages(config: ReleaseConfig) -> list:
    """collect, dedup, split, publish."""
    return [
        CollectStage(config.sources),
        DedupStage(config.dedup),
        SplitStage(config.split),
        PublishStage(config.publish_section()),
    ]


def test_synth_source_stage_hook_resume_and_push(tmp_path, synth):
    config = load_config(synth_release_config(tmp_path, synth))
    assert config.output == tmp_path / "out"
    stages = basic_stages(config)
    stages.insert(2, CountingStage())
    run = run_stages(config, stages)
    assert [e.stage for e in run.log] == ["collect", "dedup", "count", "split", "publish"]
    assert run.stats(CountStats) == CountStats(rows=9)
    version = config.output / "v20260601"
    snap = open_snapshot(version)
    assert snap.subsets == ["aigen_studio"] and snap.num_rows("aigen_studio", "query") == 3
    assert snap.has_noise and snap.num_rows("noise", "gallery") == 3
    assert len(snap.corpus_labels("aigen_studio")) == 6
    query = pq.read_table(version / "aigen_studio" / "query.parquet").to_pylist()
    assert all(r["generated"] and r["source"] == "synth" for r in query)
    assert query[0]["published_at_origin"] == "synth snapshot version"
    again = run_stages(config, stages)
    assert all(e.status.startswith("skipped") for e in again.log)
    mirror = tmp_path / "mirror"
    push_release(config.output, "v20260601", str(mirror))
    open_snapshot(mirror / "v20260601")
    assert "config_name: aigen_studio" in (mirror / "README.md").read_text()
    with pytest.raises(ReleaseError, match="never overwritten"):
        push_release(config.output, "v20260601", str(mirror))


def test_changed_config_cannot_overwrite_a_published_version(tmp_path, synth):
    config = load_config(synth_release_config(tmp_path, synth))
    run_stages(config, basic_stages(config))
    changed = load_config(synth_release_config(tmp_path, synth, dedup={"phash_threshold": 10}))
    with pytest.raises(ReleaseError, match="never modified"):
        run_stages(changed, basic_stages(changed))


def test_config_errors(tmp_path, synth):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "release_date": "2026-01-01",
                "output": "o",
                "sources": [{"kind": "catalog", "name": "c", "path": "x", "subsets": ["nope"]}],
            }
        )
    )
    with pytest.raises(ReleaseError, match="unknown subset"):
        load_config(bad)
    bad.write_text("- not a mapping\n")
    with pytest.raises(ReleaseError, match="mapping"):
        load_config(bad)
    bad.write_text(
        yaml.safe_dump(
            {
                "release_date": "2026-01-01",
                "output": "o",
                "sources": [{"kind": "shop", "name": "s", "hosts": ["https://shop.example"]}],
            }
        )
    )
    with pytest.raises(ReleaseError, match="without scheme"):
        load_config(bad)


def test_contamination_command(tmp_path, make_snapshot):
    rows = synth_rows("i", [1, 2, 3, 4])
    snap = make_snapshot({"real_studio_flat": {"query": rows[:2], "gallery": rows[2:]}})
    folder = tmp_path / "train"
    folder.mkdir()
    (folder / "copy.png").write_bytes(encode(photo(1)))
    (folder / "flipped.jpg").write_bytes(encode(ImageOps.mirror(photo(3)), "JPEG", 75))
    (folder / "resized.jpg").write_bytes(near_copy(photo(4)))
    (folder / "other.png").write_bytes(encode(photo(50)))
    (folder / "broken.png").write_bytes(b"not an image")
    report = tmp_path / "matches.csv"
    result = CliRunner().invoke(
        app, ["contamination", "--snapshot", str(snap), "--against", str(folder), "--output", str(report)]
    )
    assert result.exit_code == 0, result.output
    assert "3 of 4 snapshot rows occur among 4 folder images" in result.output
    assert "broken.png" in result.output
    lines = report.read_text().splitlines()
    assert lines[0].startswith("subset,split,row,item_ID,tier")
    assert {line.split(",")[3] for line in lines[1:]} == {"i1", "i3", "i4"}
    assert any(",exact," in line and "copy.png" in line for line in lines)
    failing = CliRunner().invoke(
        app, ["contamination", "--snapshot", str(snap), "--against", str(folder), "--fail-on-match"]
    )
    assert failing.exit_code == 1


def test_missing_snapshot_is_an_error(tmp_path):
    with pytest.raises(SnapshotError):
        open_snapshot(tmp_path / "none")


class TinyEncoder(EncoderBase):
    """A real (if weak) embedding: the 8x8 grey thumbnail of each image, mirror-symmetrised."""

    model_id, revision, input_kind, preprocess = "tiny:8", "1", "image", None

    def encode(self, images: list[Image.Image]) -> np.ndarray:
        vectors = []
        for im in images:
            grey = np.asarray(im.convert("L").resize((8, 8)), dtype=np.float64)
            vectors.append((grey + grey[:, ::-1]).ravel() - 255)
        return np.asarray(vectors)

    def describe(self) -> dict:
        return {}


def test_embedding_tier_catches_what_exact_matching_misses(tmp_path, synth, monkeypatch):
    from lookbench.embeddings.model_provider import ModelEmbeddings

    tiny = ModelKind("tiny", lambda spec, options: ModelEmbeddings(str(spec), TinyEncoder(), options))
    monkeypatch.setitem(KINDS, "tiny", tiny)
    exact_only = {"phash_threshold": 0, "crops": False, "embedding_model": "tiny:8", "embedding_threshold": 0.995}
    first = load_config(synth_release_config(tmp_path, synth, dedup=exact_only))
    run_stages(first, basic_stages(first))
    again = make_snapshot_copy(tmp_path, synth)
    second = load_config(synth_release_config(tmp_path, again, release="2026-12-01", dedup=exact_only))
    old_store = second.state_dir / "fingerprints" / "history-0123456789abcdef-rgb-on-white-p256"  # an earlier build's
    one = np.ones((1, 4), np.uint64)
    grey = np.zeros((1, GREY_BYTES), np.uint8)
    codes = StoredCodes(pa.array(["k"]), one, one, np.ones((1, 12), np.uint64), one[:, :1], grey, np.ones((1, 1)))
    write_store(old_store, iter([codes]), 1, 12)
    stats = run_stages(second, basic_stages(second)[:2]).stats(DedupStats)
    assert stats is not None
    assert stats.pruned_history_stores == [old_store.name] and not old_store.exists()
    assert len(list(old_store.parent.glob("history-*"))) == 1
    excluded = stats.excluded_as_duplicates_of_earlier_versions
    assert excluded["exact"] == 3 and excluded.get("perceptual", 0) + excluded["embedding"] == 6
    assert excluded["embedding"] >= 1 and stats.kept == 0
    dropped = pq.read_table(tmp_path / "out" / "_work" / "v20261201" / "dedup" / "dropped.parquet").to_pylist()
    assert all(d["duplicate_of"].startswith("v20260601/") for d in dropped if d["tier"] == "embedding")


def make_snapshot_copy(tmp_path: Path, synth: Path, crop: float = 0.0) -> Path:
    """The Synth snapshot again, every image (less `crop` of its width and height on each side) resized and
    re-encoded as JPEG (no byte-identical copy)."""
    from conftest import write_snapshot

    spec = {}
    for split in ("query", "gallery"):
        table = pq.read_table(synth / "aigen_studio" / f"{split}.parquet").to_pylist()
        for row in table:
            with Image.open(io.BytesIO(row["image"]["bytes"])) as im:
                w, h = im.size
                cut = im.crop((round(crop * w), round(crop * h), w - round(crop * w), h - round(crop * h)))
                row["image"] = image_value(encode(cut.resize((100, 100)), "JPEG", 80), "x.jpg")
        spec.setdefault("aigen_studio", {})[split] = table
    return write_snapshot(tmp_path / "synth2", spec, version="v20261115")


def test_full_frame_crop_pairs_still_find_crops_of_an_earlier_version(tmp_path, synth):
    settings = {"crop_pairs": "full-frame"}
    first = load_config(synth_release_config(tmp_path, synth, dedup=settings))
    run_stages(first, basic_stages(first))
    cropped = make_snapshot_copy(tmp_path, synth, crop=0.05)
    second = load_config(synth_release_config(tmp_path, cropped, release="2026-12-01", dedup=settings))
    stats = run_stages(second, basic_stages(second)[:2]).stats(DedupStats)
    assert stats is not None and stats.crop_pairs == "full-frame"
    # the 6 aigen_studio images come back cropped 5% per side; the 3 left as they were are exact copies
    assert stats.excluded_as_duplicates_of_earlier_versions == {"crop": 6, "exact": 3} and stats.kept == 0


def test_collect_resumes_finished_sources_and_cli_reports_errors(tmp_path, synth):
    config_path = tmp_path / "r.yaml"
    data = {
        "release_date": "2026-06-01",
        "output": "out",
        "sources": [
            {"kind": "synth", "name": "synth", "path": str(synth)},
            {"kind": "catalog", "name": "later", "path": "not-yet"},
        ],
    }
    config_path.write_text(yaml.safe_dump(data))
    failed = CliRunner().invoke(app, ["release", str(config_path)])
    assert failed.exit_code == 2 and "not-yet" in failed.output
    work = tmp_path / "out" / "_work" / "v20260601" / "collect"
    assert (work / "synth.done.json").is_file() and not (work / "later.done.json").exists()
    first = (work / "synth.parquet").read_bytes()
    folder = tmp_path / "not-yet"
    folder.mkdir()
    (folder / "a.png").write_bytes(encode(photo(60)))
    (folder / "b.png").write_bytes(encode(photo(61)))
    (folder / "manifest.csv").write_text("image,product_id,category,color\na.png,K1,coat,Camel\nb.png,K1,coat,Camel\n")
    ok = CliRunner().invoke(app, ["release", str(config_path)])
    assert ok.exit_code == 0, ok.output
    info = yaml.safe_load((work / "DONE.json").read_text())
    assert info["log"]["stats"]["sources"]["synth"]["resumed"] is True
    assert (work / "synth.parquet").read_bytes() == first
    assert open_snapshot(tmp_path / "out" / "v20260601").num_rows("real_studio_flat", "query") == 1


def test_contamination_default_matches_dedup_default():
    from lookbench.release.cli.contamination_cmd import DEFAULT_COLOUR_THRESHOLD, DEFAULT_THRESHOLD
    from lookbench.release.config import DedupConfig

    defaults = DedupConfig.model_validate({})
    assert (defaults.phash_threshold, defaults.colour_threshold) == (DEFAULT_THRESHOLD, DEFAULT_COLOUR_THRESHOLD)


@pytest.mark.slow
@pytest.mark.parametrize("crop", [True, False])
def test_every_crop_of_a_street_photo_carries_the_photos_date(tmp_path, crop):
    from datetime import date

    from lookbench.datasets.synth.generate import generate_snapshot

    synth = generate_snapshot(tmp_path / "synth", date(2026, 5, 1), "mini", seed=0)
    extra = {"crop": {"detector": "truth"}} if crop else {}
    result = run_build(write_yaml(tmp_path / "r.yaml", {
        "release_date": "2026-06-01",
        "output": "out",
        "sources": [{"kind": "synth", "name": "synth", "path": str(synth)}],
        **extra,
    }))  # fmt: skip
    assert result.exit_code == 0, result.output
    dates: dict[bytes, set[object]] = {}
    for row in published_rows(tmp_path / "out" / "v20260601"):
        if row["raw_image"]:
            dates.setdefault(row["raw_image"]["bytes"], set()).add(row["first_seen_at"])
    assert dates and any(len(v) for v in dates.values())
    assert all(len(when) == 1 for when in dates.values())


def test_colour_variants_stay_apart_while_edited_copies_merge(tmp_path):
    original = photo(7)
    y, cb, cr = original.convert("YCbCr").split()
    recoloured = Image.merge("YCbCr", (y, cr, cb)).convert("RGB")  # same luminance, other colours
    brighter = ImageEnhance.Brightness(original).enhance(1.04)
    folder = tmp_path / "catalog"
    write_catalog(folder, {"A": [encode(original), encode(photo(8))], "B": [encode(recoloured), encode(photo(9))]})
    (folder / "copy.jpg").write_bytes(encode(brighter, "JPEG", 80))
    with (folder / "manifest.csv").open("a") as fh:
        fh.write("copy.jpg,C,dress,Red,2026-03-15,Brand\n")
    source = {"kind": "catalog", "name": "cat", "path": "catalog"}
    result = run_build(
        write_yaml(tmp_path / "r.yaml", {"release_date": "2026-06-01", "output": "out", "sources": [source]})
    )
    assert result.exit_code == 0, result.output
    rows = published_rows(tmp_path / "out" / "v20260601")
    assert {r["product_id"] for r in rows} == {"A", "B"}
    queries = pq.read_table(tmp_path / "out" / "v20260601" / "real_studio_flat" / "query.parquet").to_pylist()
    assert {r["product_id"] for r in queries} == {"A", "B"}


def test_release_config_yaml_duplicate_keys_are_errors(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("release_date: 2026-01-01\noutput: o\noutput: p\nsources: []\n")
    with pytest.raises(ReleaseError, match="duplicate key 'output'"):
        load_config(path)
