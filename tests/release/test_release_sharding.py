"""Builder stages as shards: crop detection, annotation and judging give the same work tables on every executor."""

from __future__ import annotations

import io
import json
import shutil
from collections import defaultdict
from dataclasses import replace
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from chatkit import ChatServer, Truth, serve
from PIL import Image

from conftest import RayCluster, make_row, write_snapshot
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.release.config import ReleaseConfig, load_config
from lookbench.release.pipeline import Sharding, release_context, run_stages, stages_for
from lookbench.release.records import read_samples, write_samples
from lookbench.release.stages.annotate import AnnotateStats
from lookbench.release.stages.crop import CropStats
from lookbench.release.stages.dedup import DedupStage
from lookbench.shards.executor import Executor
from lookbench.shards.local import LocalExecutor
from lookbench.snapshot.schema import STREETLOOK_SUBSETS
from lookbench.snapshot.writer import image_value

TABLES = ("crop/samples.parquet", "annotate/samples.parquet", "annotate/flagged.parquet", "audit/judgements.parquet")
# On the Ray test's worker: the reference build and hashes below are made once for every executor compared with them.
pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_snapshot(tmp_path_factory.mktemp("synth"), date(2026, 5, 1), "tiny", seed=3)


@pytest.fixture(scope="module")
def server(synth: Path):
    """The chat server, taught every street photo's boxes and every crop's labels (crops are the Synth boxes)."""
    chat = ChatServer()
    photos: dict[bytes, list[tuple[str, list[float]]]] = defaultdict(list)
    for subset in STREETLOOK_SUBSETS:
        for row in pq.read_table(synth / subset / "query.parquet").to_pylist():
            photos[row["raw_image"]["bytes"]].append((row["category"], row["bbox"]))
    for data, boxes in photos.items():
        with Image.open(io.BytesIO(data)) as im:
            chat.learn(data, Truth(boxes[0][0], "", [], boxes=boxes, size=im.size))
    with serve(chat):
        yield chat


def config(root: Path, synth: Path, server: ChatServer) -> ReleaseConfig:
    """Synth source; VLM crops, openai annotation and an openai judge, all at the chat server."""
    api = {"base_url": server.base_url, "timeout_s": 10, "retries": 1, "concurrency": 3}
    data = {
        "release_date": "2026-06-01",
        "output": str(root / "out"),
        "sources": [{"kind": "synth", "name": "synth", "path": str(synth)}],
        "crop": {"detector": "vlm", "api": {**api, "model": "detector"}},
        "annotate": {"backend": "openai", "api": {**api, "model": "annotator"}},
        "audit": {"api": {**api, "model": "judge"}, "margin": 0.2, "canary_fraction": 0.2},
    }
    path = root / "release.yaml"
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return load_config(path)


@pytest.fixture(scope="module")
def collected(synth: Path, server: ChatServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder whose collect and dedup stages are done (collecting stamps the time: done once for all)."""
    root = tmp_path_factory.mktemp("collected")
    release = config(root, synth, server)
    run_stages(release, stages_for(release)[:2])
    return release.output


def build(root: Path, synth: Path, server: ChatServer, executor: Executor, collected: Path, shards: int | None = 3):
    """Crop, annotate and audit a copy of the collected release on `executor`."""
    if not root.exists():
        shutil.copytree(collected, root / "out")
    release = config(root, synth, server)
    server.scripts[next(iter(server.truths))] = ["reject"]  # one photo is refused, by whichever worker asks
    stages = [s for s in stages_for(release) if s.name not in ("split", "publish")]
    sharding = Sharding(executor, shards)
    run_stages(release, stages[:3], sharding=sharding)  # crops first: the server learns their labels
    for row in pq.read_table(release.work / "crop" / "samples.parquet").to_pylist():
        server.learn(row["image"], Truth(row["category"], row["main_attribute"], list(row["other_attributes"])))
    run = run_stages(release, stages, sharding=sharding)
    return release, run


def dedup(root: Path, synth: Path, server: ChatServer, collected: Path, executor: Executor) -> dict[str, bytes]:
    """The dedup stage on `executor` (hashes in 3 shards) over the collected samples plus one that does not decode."""
    release = config(root, synth, server)
    samples = read_samples(collected / "_work" / release.version / "collect" / "samples.parquet")
    broken = replace(samples[0], sample_id="broken", image=b"\x89PNG not an image")
    previous = write_samples([*samples, broken], root / "collected.parquet")
    ctx = release_context(release, Sharding(executor, 3))
    DedupStage(release.dedup).run(ctx, previous)
    (problem,) = [p for p in ctx.problems if "dedup: left out" in p.error]
    assert problem.url == broken.source_url
    markers = sorted((release.work / "dedup" / "shards" / "hash").glob("*.done.json"))
    assert len(markers) == 3
    assert [reason for m in markers for reason in json.loads(m.read_text())["bad"].values()] == [problem.error[17:]]
    return {name: (release.work / "dedup" / name).read_bytes() for name in ("samples.parquet", "dropped.parquet")}


@pytest.fixture(scope="module")
def hashed_here(
    synth: Path, server: ChatServer, collected: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, bytes]:
    """The dedup stage's tables hashed in this process: what every other executor must give."""
    return dedup(tmp_path_factory.mktemp("dedup-here"), synth, server, collected, LocalExecutor())


@pytest.fixture(scope="module")
def unsharded(synth: Path, server: ChatServer, collected: Path, tmp_path_factory: pytest.TempPathFactory):
    """The release built in this process in one piece: what every sharded executor must give."""
    return build(tmp_path_factory.mktemp("unsharded") / "b", synth, server, LocalExecutor(), collected, shards=None)


def test_dedup_hashes_the_same_on_worker_processes_and_leaves_out_an_undecodable_image(
    synth: Path, server: ChatServer, collected: Path, hashed_here: dict[str, bytes], tmp_path: Path
) -> None:
    assert dedup(tmp_path / "there", synth, server, collected, LocalExecutor(processes=2)) == hashed_here


def test_candidates_and_decisions_against_earlier_versions_run_as_shards_and_agree_on_worker_processes(
    synth: Path, server: ChatServer, collected: Path, tmp_path: Path
) -> None:
    outputs = []
    for name, executor in (("here", LocalExecutor()), ("there", LocalExecutor(processes=2))):
        release = config(tmp_path / name, synth, server)
        samples = read_samples(collected / "_work" / release.version / "collect" / "samples.parquet")
        published = samples[::3]
        rows = [
            make_row(f"p{i}", "dress", "red", image=image_value(s.image, f"p{i}.png")) for i, s in enumerate(published)
        ]
        write_snapshot(release.output, {"real_studio_flat": {"query": rows[:1], "gallery": rows[1:]}}, "v20200101")
        ctx = release_context(release, Sharding(executor, 3))
        DedupStage(release.dedup).run(ctx, write_samples(samples, tmp_path / name / "collected.parquet"))
        for job in ("candidates", "decisions"):
            assert len(list((release.work / "dedup" / "shards" / job).glob("*.done.json"))) == 3
        dropped = pq.read_table(release.work / "dedup" / "dropped.parquet").to_pylist()
        earlier = {row["sample_id"]: row for row in dropped if row["against"] == "earlier"}
        assert {s.sample_id for s in published} <= set(earlier)
        assert all(earlier[s.sample_id]["tier"] == "exact" for s in published)
        outputs.append({n: (release.work / "dedup" / n).read_bytes() for n in ("samples.parquet", "dropped.parquet")})
    assert outputs[0] == outputs[1]


def tables(release: ReleaseConfig) -> dict[str, bytes]:
    return {name: (release.work / name).read_bytes() for name in TABLES}


def test_worker_processes_build_the_same_tables_as_this_process(
    synth: Path, server: ChatServer, collected: Path, unsharded, tmp_path: Path
) -> None:
    here, run = unsharded
    crop = run.stats(CropStats)
    assert crop is not None and crop.photos_rejected == 1
    there, _ = build(tmp_path / "there", synth, server, LocalExecutor(processes=2), collected)
    assert tables(there) == tables(here)
    shards = list((there.work / "annotate" / "shards" / "annotate").glob("*.done.json"))
    assert len(shards) == 3
    annotate = run.stats(AnnotateStats)
    assert annotate is not None and annotate.annotator["requests"] > 0


def test_a_rerun_after_a_lost_shard_asks_only_that_shard_again(
    synth: Path, server: ChatServer, collected: Path, tmp_path: Path
) -> None:
    release, _ = build(tmp_path / "b", synth, server, LocalExecutor(), collected)
    before = tables(release)
    markers = sorted((release.work / "annotate" / "shards" / "annotate").glob("*.done.json"))
    markers[1].unlink()  # as if the worker running it had been killed
    (release.work / "annotate" / "DONE.json").unlink()
    asked = server.requests["garment_attributes"]
    _, run = build(tmp_path / "b", synth, server, LocalExecutor(), collected)
    assert server.requests["garment_attributes"] == asked  # its answers were cached as they came
    assert tables(release) == before
    annotate = run.stats(AnnotateStats)
    assert annotate is not None and annotate.annotator["cache_hits"] > 0


@pytest.mark.ray
@pytest.mark.timeout(300)
def test_ray_builds_the_same_tables_as_the_local_executor(
    ray_cluster: RayCluster,
    synth: Path,
    server: ChatServer,
    collected: Path,
    unsharded,
    hashed_here: dict[str, bytes],
    tmp_path: Path,
) -> None:
    from lookbench.shards.ray_executor import RayExecutor

    on_ray, _ = build(tmp_path / "ray", synth, server, RayExecutor(), collected)
    assert tables(on_ray) == tables(unsharded[0])
    assert server.max_in_flight <= 3  # the endpoint's limit holds across all of Ray's workers
    assert dedup(tmp_path / "dedup-ray", synth, server, collected, RayExecutor()) == hashed_here  # CPU tasks
