"""The Ray executor on a local 2-CPU cluster: the same bytes as the local executor, and Ray's retry of a dead worker."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pyarrow as pa
import pytest
from test_row_stream import EXPECTED, SquareMapper, stream
from test_work_units import LengthMapper
from typer.testing import CliRunner

from conftest import RayCluster
from lookbench.cli.main import app
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.sharded import ShardedEmbeddings
from lookbench.errors import EmbeddingError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.shards.executor import Executor, Needs, ShardError
from lookbench.shards.local import LocalExecutor
from lookbench.shards.ray_executor import RayExecutor
from lookbench.shards.table import TableJob
from lookbench.snapshot.reader import Snapshot, open_snapshot

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    return open_snapshot(generate_snapshot(tmp_path_factory.mktemp("synth"), date(2026, 6, 1), "tiny", seed=7))


def splits_of(snap: Snapshot) -> list[tuple[str, str]]:
    return [(s, sp) for s in snap.subsets for sp in ("query", "gallery")] + [("noise", "gallery")]


def embedded(snap: Snapshot, cache: Path, spec: str, executor: Executor) -> tuple[dict, ShardedEmbeddings]:
    plain = resolve_model(spec, EmbedOptions(cache_dir=cache, batch_size=2, progress=False))
    assert isinstance(plain, ModelEmbeddings)
    sharded = ShardedEmbeddings(plain, executor, 2)
    sharded.prepare(snap, splits_of(snap))
    return {key: sharded.embed_split(snap, *key).tobytes() for key in splits_of(snap)}, sharded


def test_ray_embeds_a_synth_snapshot_byte_for_byte_as_the_local_executor(
    ray_cluster: RayCluster, synth: Snapshot, tmp_path: Path
) -> None:
    local, _ = embedded(synth, tmp_path / "local", "efficientnet-lite0", LocalExecutor())
    executor = RayExecutor()
    on_ray, sharded = embedded(synth, tmp_path / "ray", "efficientnet-lite0", executor)
    assert on_ray == local
    assert executor.workers(sharded.job()) == 1  # 2 CPU slots, one left for reading and hashing tasks
    assert sharded.describe().sharding["executor"] == "ray"
    again, rerun = embedded(synth, tmp_path / "ray", "efficientnet-lite0", executor)
    assert again == local and rerun.runs[0].ran == []


def test_a_worker_killed_mid_shard_is_restarted_by_ray_and_the_result_is_unchanged(
    ray_cluster: RayCluster, synth: Snapshot, tmp_path: Path
) -> None:
    clean, _ = embedded(synth, tmp_path / "clean", "python:thumbs:make", LocalExecutor())
    ray_cluster.die_at.write_text("4")  # the actor kills itself on its 4th model call, mid-shard
    on_ray, sharded = embedded(synth, tmp_path / "faulty", "python:thumbs:make", RayExecutor())
    assert not ray_cluster.die_at.exists()  # it did die
    assert on_ray == clean
    (run,) = sharded.runs
    assert run.skipped == [] and len(run.ran) == len(run.markers)


def test_an_error_in_a_ray_worker_reaches_the_driver_as_itself(
    ray_cluster: RayCluster, synth: Snapshot, tmp_path: Path
) -> None:
    with pytest.raises(EmbeddingError, match=r"^thumbs-flat: encoder returned float32 \(2,\), expected \(2, dim\)"):
        embedded(synth, tmp_path, "python:thumbs:make_flat", RayExecutor())


def test_a_gpu_job_on_a_cluster_without_gpus_is_refused_before_anything_runs(ray_cluster: RayCluster) -> None:
    gpu_job = TableJob("embed", Needs("gpu", stateful=True), pa.schema([]), LengthMapper())
    with pytest.raises(ShardError, match="embed: the model runs on CUDA but the Ray cluster has no GPU"):
        RayExecutor().workers(gpu_job)
    assert RayExecutor(processes=1).workers(TableJob("hash", Needs("cpu"), pa.schema([]), LengthMapper())) == 1


def test_eval_on_ray_scores_as_eval_without_shards(ray_cluster: RayCluster, synth: Snapshot, tmp_path: Path) -> None:
    runner = CliRunner()
    common = ["eval", "-s", str(synth.root), "-m", "python:thumbs:make", "--resamples", "20", "--batch-size", "2"]
    plain = runner.invoke(app, [*common, "--cache-dir", str(tmp_path / "a"), "-o", str(tmp_path / "a.json")])
    assert plain.exit_code == 0, plain.output
    options = ["--cache-dir", str(tmp_path / "b"), "-o", str(tmp_path / "b.json"), "--executor", "ray"]
    on_ray = runner.invoke(app, [*common, *options, "--shards", "2"])
    assert on_ray.exit_code == 0, on_ray.output
    assert ray_cluster.ray.is_initialized()  # the session's cluster was used, and left running
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    assert a["metrics"] == b["metrics"]
    assert (tmp_path / "a.per_query.parquet").read_bytes() == (tmp_path / "b.per_query.parquet").read_bytes()
    assert b["model"]["sharding"]["executor"] == "ray" and b["model"]["sharding"]["cpus"] == 2


def test_a_real_ray_head_passes_the_address_check(ray_cluster: RayCluster) -> None:
    from lookbench.shards.ray_executor import check_reachable

    check_reachable(ray_cluster.ray.get_runtime_context().gcs_address)  # the head's gRPC server answers the probe


def test_a_ray_worker_that_dies_on_every_retry_is_a_shard_error_to_the_reader_and_a_rerun_redoes_only_the_rest(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    rows = []
    dying = stream(tmp_path / "shards", RayExecutor(), SquareMapper(die_always="9"))
    with (
        pytest.raises(
            ShardError, match=r"the Ray worker running squares rows 8\.\.11 died, and again on each of its 2 retries"
        ),
        dying as rows_of,
    ):
        rows.extend(rows_of)
    assert rows == EXPECTED[:8]  # the two shards before the dead one, then the error
    markers = [p.name for p in (tmp_path / "shards").glob("*.done.json")]
    # the other slot runs on while Ray retries the dead shard: any shard but the dead one may have finished
    assert not any(name.startswith("000000008-") for name in markers) and 2 <= len(markers) <= 5
    done = len(markers)
    with stream(tmp_path / "shards", RayExecutor()) as again:
        assert list(again) == EXPECTED
    assert again.run is not None and (len(again.run.skipped), len(again.run.ran)) == (done, 6 - done)
