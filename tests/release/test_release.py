"""Release mechanics without a shop: synth source, config errors, stage hooks, resume, push, contamination."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from buildkit import encode, near_copy, photo
from PIL import Image, ImageOps
from typer.testing import CliRunner

from conftest import make_row
from lookbench.cli.main import app
from lookbench.errors import BuildError, SnapshotError
from lookbench.models.registry import SPEC_KINDS
from lookbench.release.config import load_config
from lookbench.release.push import push_release
from lookbench.release.runner import run_stages
from lookbench.release.stages import CollectStage, DedupStage, PublishStage, SplitStage, StageResult
from lookbench.release.stages.base import BuildContext, read_samples, write_samples
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.writer import image_value


def _synth_rows(prefix: str, seeds: list[int], offset: int = 0) -> list[dict]:
    return [
        make_row(f"{prefix}{s}", "dress", "red", ["silk"], image=image_value(encode(photo(s + offset)), f"{s}.png"))
        for s in seeds
    ]


def _config(tmp_path: Path, synth: Path, release: str = "2026-06-01", **extra: object) -> Path:
    noise = tmp_path / "noise"
    noise.mkdir(exist_ok=True)
    lines = ["image,product_id,category,color"]
    for seed in (30, 31, 32):
        (noise / f"{seed}.png").write_bytes(encode(photo(seed)))
        lines.append(f"{seed}.png,N{seed},bag,Brown")
    (noise / "manifest.csv").write_text("\n".join(lines) + "\n")
    data = {
        "release_date": release,
        "output": "out",
        "sources": [
            {"kind": "synth", "name": "synth", "path": str(synth)},
            {"kind": "catalog", "name": "distractors", "path": "noise", "subsets": ["noise"]},
        ],
        **extra,
    }
    path = tmp_path / f"{release}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def synth(make_snapshot) -> Path:
    """A Synth snapshot: 3 items, each with a query and a gallery image."""
    return make_snapshot(
        {"aigen_studio": {"query": _synth_rows("i", [1, 2, 3]), "gallery": _synth_rows("i", [1, 2, 3], offset=10)}},
        version="v20260501",
    )


class CountingStage:
    """A part-2 style stage inserted between dedup and split: passes rows through, counts them."""

    name = "count"

    def run(self, ctx: BuildContext, previous: Path | None) -> StageResult:
        table = read_samples(previous)
        return StageResult(write_samples(ctx, self.name, table), {"rows": table.num_rows})


def test_synth_source_stage_hook_resume_and_push(tmp_path, synth):
    config = load_config(_config(tmp_path, synth))
    assert config.output == tmp_path / "out"
    stages = [CollectStage(), DedupStage(), CountingStage(), SplitStage(), PublishStage()]
    ctx = run_stages(config, stages)
    assert [e["stage"] for e in ctx.log] == ["collect", "dedup", "count", "split", "publish"]
    assert ctx.stats_of("count") == {"rows": 9}
    version = config.output / "v20260601"
    snap = open_snapshot(version)
    assert snap.subsets == ["aigen_studio"] and snap.num_rows("aigen_studio", "query") == 3
    assert snap.has_noise and snap.num_rows("noise", "gallery") == 3
    assert len(snap.corpus_labels("aigen_studio")) == 6
    query = pq.read_table(version / "aigen_studio" / "query.parquet").to_pylist()
    assert all(r["generated"] and r["source"] == "synth" for r in query)
    assert query[0]["published_at_origin"] == "synth snapshot version"
    again = run_stages(config, stages)
    assert all(e["status"].startswith("skipped") for e in again.log)
    mirror = tmp_path / "mirror"
    push_release(config.output, "v20260601", str(mirror))
    open_snapshot(mirror / "v20260601")
    assert "config_name: aigen_studio" in (mirror / "README.md").read_text()
    with pytest.raises(BuildError, match="never overwritten"):
        push_release(config.output, "v20260601", str(mirror))


def test_changed_config_cannot_overwrite_a_published_version(tmp_path, synth):
    run_stages(load_config(_config(tmp_path, synth)), [CollectStage(), DedupStage(), SplitStage(), PublishStage()])
    changed = load_config(_config(tmp_path, synth, dedup={"phash_threshold": 10}))
    with pytest.raises(BuildError, match="never modified"):
        run_stages(changed, [CollectStage(), DedupStage(), SplitStage(), PublishStage()])


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
    with pytest.raises(BuildError, match="unknown subset"):
        load_config(bad)
    bad.write_text("- not a mapping\n")
    with pytest.raises(BuildError, match="mapping"):
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
    with pytest.raises(BuildError, match="without scheme"):
        load_config(bad)


def test_contamination_command(tmp_path, make_snapshot):
    rows = _synth_rows("i", [1, 2, 3, 4])
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


class TinyEmbedder:
    """A real (if weak) embedding: the 8x8 grey thumbnail of each image, mirror-symmetrised."""

    spec = "tiny:8"

    def embed_split(self, snapshot, subset: str, split: str) -> np.ndarray:
        vectors = []
        for _, images in snapshot.iter_images(subset, split):
            for data in images:
                with Image.open(io.BytesIO(data)) as im:
                    grey = np.asarray(im.convert("L").resize((8, 8)), dtype=np.float64)
                vectors.append((grey + grey[:, ::-1]).ravel() - 255)
        return np.asarray(vectors)

    def describe(self) -> dict:
        return {"spec": self.spec}


def test_embedding_tier_catches_what_exact_matching_misses(tmp_path, synth, monkeypatch):
    monkeypatch.setitem(SPEC_KINDS, "tiny", lambda argument, options: TinyEmbedder())
    stages = [CollectStage(), DedupStage(), SplitStage(), PublishStage()]
    exact_only = {"phash_threshold": 0, "embedding_model": "tiny:8", "embedding_threshold": 0.995}
    run_stages(load_config(_config(tmp_path, synth, dedup=exact_only)), stages)
    again = make_snapshot_copy(tmp_path, synth)
    ctx = run_stages(load_config(_config(tmp_path, again, release="2026-12-01", dedup=exact_only)), [*stages[:2]])
    stats = ctx.stats_of("dedup")
    excluded = stats["excluded_as_duplicates_of_earlier_versions"]
    assert excluded["exact"] == 3 and excluded.get("perceptual", 0) + excluded["embedding"] == 6
    assert excluded["embedding"] >= 1 and stats["kept"] == 0
    dropped = pq.read_table(tmp_path / "out" / "_work" / "v20261201" / "dedup" / "dropped.parquet").to_pylist()
    assert all(d["duplicate_of"].startswith("v20260601/") for d in dropped if d["tier"] == "embedding")


def make_snapshot_copy(tmp_path: Path, synth: Path) -> Path:
    """The Synth snapshot again, every image resized and re-encoded as JPEG (no byte-identical copy)."""
    from conftest import write_snapshot

    spec = {}
    for split in ("query", "gallery"):
        table = pq.read_table(synth / "aigen_studio" / f"{split}.parquet").to_pylist()
        for row in table:
            with Image.open(io.BytesIO(row["image"]["bytes"])) as im:
                row["image"] = image_value(encode(im.resize((100, 100)), "JPEG", 80), "x.jpg")
        spec.setdefault("aigen_studio", {})[split] = table
    return write_snapshot(tmp_path / "synth2", spec, version="v20261115")


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
    failed = CliRunner().invoke(app, ["build", str(config_path)])
    assert failed.exit_code == 2 and "not-yet" in failed.output
    work = tmp_path / "out" / "_work" / "v20260601" / "collect"
    assert (work / "synth.done.json").is_file() and not (work / "later.done.json").exists()
    first = (work / "synth.parquet").read_bytes()
    folder = tmp_path / "not-yet"
    folder.mkdir()
    (folder / "a.png").write_bytes(encode(photo(60)))
    (folder / "b.png").write_bytes(encode(photo(61)))
    (folder / "manifest.csv").write_text("image,product_id,category,color\na.png,K1,coat,Camel\nb.png,K1,coat,Camel\n")
    ok = CliRunner().invoke(app, ["build", str(config_path)])
    assert ok.exit_code == 0, ok.output
    info = yaml.safe_load((work / "DONE.json").read_text())
    assert info["log"]["stats"]["sources"]["synth"]["resumed"] is True
    assert (work / "synth.parquet").read_bytes() == first
    assert open_snapshot(tmp_path / "out" / "v20260601").num_rows("real_studio_flat", "query") == 1


def test_contamination_default_matches_dedup_default():
    from lookbench.cli.contamination_cmd import DEFAULT_THRESHOLD
    from lookbench.release.config import DedupConfig

    assert DedupConfig.model_validate({}).phash_threshold == DEFAULT_THRESHOLD
