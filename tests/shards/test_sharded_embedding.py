"""Embedding as shards: the same vectors and cache whatever runs them, resume after a killed worker, corrupt chunks."""

from __future__ import annotations

import json
import pickle
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from thumbs import DIE_ENV
from typer.testing import CliRunner

from embedding_helpers import ColourStats, studio_snapshot
from lookbench.cli.main import app
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.sharded import ShardedEmbeddings
from lookbench.errors import EmbeddingError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.models.spec import ModelSpec
from lookbench.shards.executor import ShardError
from lookbench.shards.local import LocalExecutor
from lookbench.snapshot.reader import Snapshot, open_snapshot

THUMBS = "python:thumbs:make"


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    return open_snapshot(generate_snapshot(tmp_path_factory.mktemp("synth"), date(2026, 6, 1), "tiny", seed=7))


def splits_of(snap: Snapshot) -> list[tuple[str, str]]:
    return [(s, sp) for s in snap.subsets for sp in ("query", "gallery")] + [("noise", "gallery")]


def provider(spec: str, cache: Path, **options: object) -> ModelEmbeddings:
    made = resolve_model(spec, EmbedOptions(cache_dir=cache, batch_size=2, progress=False, **options))  # type: ignore[arg-type]
    assert isinstance(made, ModelEmbeddings)
    return made


def embed_all(snap: Snapshot, cache: Path, spec: str = THUMBS, processes: int | None = None, shards: int | None = 2):
    """(vectors per split, the sharded provider) embedded with shards on a local executor (None: without shards)."""
    plain = provider(spec, cache)
    if shards is None:
        return {k: plain.embed_split(snap, *k) for k in splits_of(snap)}, None
    sharded = ShardedEmbeddings(plain, LocalExecutor(processes), shards)
    sharded.prepare(snap, splits_of(snap))
    return {k: sharded.embed_split(snap, *k) for k in splits_of(snap)}, sharded


def cache_vectors(cache: Path) -> dict[bytes, bytes]:
    """Every cached vector by image key, from the chunk files."""
    found: dict[bytes, bytes] = {}
    for path in cache.rglob("chunk-*.npz"):
        with np.load(path) as data:
            for key, vector in zip(data["keys"], data["vectors"], strict=True):
                found[key.tobytes()] = vector.tobytes()
    return found


def test_default_model_on_synth_gives_the_same_bytes_with_and_without_shards(synth: Snapshot, tmp_path: Path) -> None:
    plain, _ = embed_all(synth, tmp_path / "plain", "efficientnet-lite0", shards=None)
    here, run_here = embed_all(synth, tmp_path / "here", "efficientnet-lite0")
    procs, run_procs = embed_all(synth, tmp_path / "procs", "efficientnet-lite0", processes=2)
    for key in splits_of(synth):
        assert plain[key].tobytes() == here[key].tobytes() == procs[key].tobytes(), key
    assert cache_vectors(tmp_path / "plain") == cache_vectors(tmp_path / "here") == cache_vectors(tmp_path / "procs")
    assert run_here is not None and run_procs is not None
    assert run_here.embedded_images == run_procs.embedded_images == len(cache_vectors(tmp_path / "plain"))


def test_a_second_run_skips_every_shard_and_embeds_nothing(synth: Snapshot, tmp_path: Path) -> None:
    first, _ = embed_all(synth, tmp_path)
    again, sharded = embed_all(synth, tmp_path)
    assert sharded is not None
    (run,) = sharded.runs
    assert run.ran == [] and len(run.skipped) == len(run.markers) > len(splits_of(synth))
    assert sharded.embedded_images == 0
    for key in splits_of(synth):
        assert first[key].tobytes() == again[key].tobytes()


def test_a_killed_worker_leaves_its_shard_undone_and_a_rerun_redoes_only_the_missing_ones(
    synth: Snapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean, _ = embed_all(synth, tmp_path / "clean")
    die = tmp_path / "die-at"
    die.write_text("6")  # the first worker to make its 6th model call kills itself, mid-shard
    monkeypatch.setenv(DIE_ENV, str(die))
    with pytest.raises(ShardError, match="a worker process died while running embed"):
        embed_all(synth, tmp_path / "faulty", processes=2)
    assert not die.exists()
    done = len(list((tmp_path / "faulty").rglob("*.done.json")))
    again, sharded = embed_all(synth, tmp_path / "faulty", processes=2)
    assert sharded is not None
    (run,) = sharded.runs
    assert len(run.skipped) == done
    assert len(run.ran) == len(run.markers) - done > 0
    for key in splits_of(synth):
        assert again[key].tobytes() == clean[key].tobytes(), key


def test_a_corrupt_chunk_is_detected_and_its_shard_redone(synth: Snapshot, tmp_path: Path) -> None:
    first, _ = embed_all(synth, tmp_path)
    chunk = sorted((tmp_path / "embeddings").rglob("chunk-*.npz"))[3]
    chunk.write_bytes(chunk.read_bytes()[:100])
    again, sharded = embed_all(synth, tmp_path)
    assert sharded is not None
    (run,) = sharded.runs
    assert len(run.ran) == 1  # one shard wrote that chunk
    assert sharded.embedded_images > 0
    for key in splits_of(synth):
        assert again[key].tobytes() == first[key].tobytes()


def test_bad_images_are_recorded_by_their_shard_and_skipped_or_reported(tmp_path: Path) -> None:
    snap = open_snapshot(studio_snapshot(tmp_path / "snap", gallery=9, bad_rows={2: b"not an image", 7: b"\x89PNG"}))
    plain = provider(THUMBS, tmp_path / "plain", on_bad_image="skip")
    expected = plain.embed_split(snap, "real_studio_flat", "gallery")
    skipped = provider(THUMBS, tmp_path / "sharded", on_bad_image="skip")
    sharded = ShardedEmbeddings(skipped, LocalExecutor(2), 3)
    got = sharded.embed_split(snap, "real_studio_flat", "gallery")
    assert got.tobytes() == expected.tobytes()
    assert sharded.skipped == plain.skipped
    assert set(sharded.skipped[("real_studio_flat", "gallery")]) == {2, 7}
    markers = [json.loads(p.read_text()) for p in (tmp_path / "sharded").rglob("*.done.json")]
    assert sorted(int(row) for m in markers for row in m["bad"]) == [2, 7]
    stop = ShardedEmbeddings(provider(THUMBS, tmp_path / "sharded"), LocalExecutor(), 3)
    with pytest.raises(EmbeddingError, match=r"gallery row 2: .*\(1 more\); rerun with --on-bad-image skip"):
        stop.embed_split(snap, "real_studio_flat", "gallery")
    assert stop.runs[0].ran == []  # the bad rows were not tried again


def test_eval_with_shards_and_processes_scores_the_same(tmp_path: Path, synth: Snapshot) -> None:
    runner = CliRunner()
    common = ["eval", "-s", str(synth.root), "-m", THUMBS, "--resamples", "20", "--batch-size", "2"]
    plain = runner.invoke(app, [*common, "--cache-dir", str(tmp_path / "a"), "-o", str(tmp_path / "a.json")])
    assert plain.exit_code == 0, plain.output
    options = ["--cache-dir", str(tmp_path / "b"), "-o", str(tmp_path / "b.json"), "--processes", "2", "--shards", "3"]
    sharded = runner.invoke(app, [*common, *options])
    assert sharded.exit_code == 0, sharded.output
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    assert a["metrics"] == b["metrics"]
    assert (tmp_path / "a.per_query.parquet").read_bytes() == (tmp_path / "b.per_query.parquet").read_bytes()
    assert b["model"]["sharding"]["executor"] == "local" and b["model"]["sharding"]["shards_run"] > 0
    assert a["model"]["sharding"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "dask"], "--executor: expected one of local, ray"),
        (["--shards", "0"], "--shards: expected a positive number"),
        (["--processes", "-1"], "--processes: expected a positive number"),
        (["--ray-address", "127.0.0.1:1"], "--ray-address applies to --executor ray"),
    ],
)
def test_eval_and_build_refuse_bad_sharding_options_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    for command in (["eval", "-s", str(tmp_path), "-m", THUMBS], ["release", str(tmp_path / "release.yaml")]):
        result = CliRunner().invoke(app, [*command, *args])
        assert result.exit_code == 2, command
        assert message in result.output
        assert "Traceback" not in result.output


def test_workers_receive_the_parsed_spec_and_load_from_it(tmp_path: Path) -> None:
    job = ShardedEmbeddings(provider(THUMBS, tmp_path / "cache"), LocalExecutor(None)).job()
    sent = pickle.loads(pickle.dumps(job))
    assert sent.spec == ModelSpec("python", "thumbs:make") and sent.loaded is None
    worker = sent.open(1)  # as a worker process does: loads the model from the spec it was sent
    assert worker.provider.model_spec == ModelSpec("python", "thumbs:make") and worker.provider.spec == THUMBS
    assert str(worker.provider.cache_root) == sent.store_root


def test_a_model_built_from_text_runs_in_the_driver_but_is_refused_by_a_worker(tmp_path: Path) -> None:
    built = ModelEmbeddings("hand-made", ColourStats(), EmbedOptions(cache_dir=tmp_path, progress=False))
    job = ShardedEmbeddings(built, LocalExecutor(None)).job()
    assert job.spec is None and job.open(1).provider is built
    with pytest.raises(ShardError, match="^hand-made: this model was built outside the registry"):
        pickle.loads(pickle.dumps(job)).open(1)
