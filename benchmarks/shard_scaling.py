"""Sharded embedding: the same job with 1, 2 and 4 local worker processes and on a local Ray cluster.

    python benchmarks/shard_scaling.py --synth small --model efficientnet-lite0 --workers 1,2,4 --ray
    python benchmarks/shard_scaling.py --snapshot PATH --shards 16 --out scaling.json

Every configuration embeds every split of the snapshot from an empty cache (its own temporary folder) as
`lookbench eval --executor ... --processes N` does, and must give the same vectors as the run without shards.
Reported: wall seconds, images embedded per second, speed-up over the run without shards (today's path, the
reference), and the overhead per shard: the time worker slots spent outside their shards' own work (starting
processes or Ray, loading the model, scheduling), spread over the shards, `(wall * workers - sum of shard seconds)
/ shards`. More workers than cores cannot go faster: each worker runs the model on its share of the same cores.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

from measure import results_file

from lookbench._util.cores import usable_cores
from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.sharded import ShardedEmbeddings
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.shards.executor import Executor
from lookbench.shards.local import LocalExecutor
from lookbench.snapshot.reader import Snapshot, open_snapshot


@dataclass
class Row:
    """One configuration's measurement."""

    executor: str
    workers: int
    shards: int
    images: int
    seconds: float
    images_per_s: float
    speedup: float
    overhead_per_shard_s: float | None


def splits_of(snap: Snapshot) -> list[tuple[str, str]]:
    """Every split the evaluation embeds."""
    found = [(s, sp) for s in snap.subsets for sp in ("query", "gallery")]
    return found + ([("noise", "gallery")] if snap.has_noise else [])


def provider(spec: str, cache: Path, batch_size: int) -> ModelEmbeddings:
    """The model with an empty cache of its own."""
    made = resolve_model(spec, EmbedOptions(cache_dir=cache, batch_size=batch_size, progress=False))
    if not isinstance(made, ModelEmbeddings):
        raise SystemExit(f"{spec}: not a model this benchmark can shard")
    return made


def vectors(embeddings: Any, snap: Snapshot) -> bytes:
    """Every split's vectors, in order, as bytes (to check each configuration against the first)."""
    return b"".join(embeddings.embed_split(snap, *key).tobytes() for key in splits_of(snap))


def plain_run(snap: Snapshot, spec: str, batch_size: int) -> tuple[Row, bytes]:
    """Today's path: one process, no shards (after a warm-up split, so the page cache and the runtime are warm)."""
    with tempfile.TemporaryDirectory() as tmp:
        provider(spec, Path(tmp) / "warm-up", batch_size).embed_split(snap, *splits_of(snap)[0])
        model = provider(spec, Path(tmp), batch_size)
        started = time.perf_counter()
        found = vectors(model, snap)
        seconds = time.perf_counter() - started
        images = model.embedded_images
    return Row("none (no shards)", 1, 0, images, round(seconds, 2), round(images / seconds, 1), 1.0, None), found


def sharded_run(
    snap: Snapshot, spec: str, batch_size: int, executor: Executor, name: str, shards: int | None
) -> tuple[Row, bytes]:
    """Every split as shards on `executor`, from an empty cache."""
    with tempfile.TemporaryDirectory() as tmp:
        model = provider(spec, Path(tmp), batch_size)
        sharded = ShardedEmbeddings(model, executor, shards)
        workers = executor.workers(sharded.job())
        started = time.perf_counter()
        run = sharded.prepare(snap, splits_of(snap))
        seconds = time.perf_counter() - started
        found = vectors(sharded, snap)
        images = int(sum(m.stats.get("embedded", 0) for m in run.markers.values()))
        count = len(run.ran)
        busy = sum(m.seconds for m in run.markers.values())
        overhead = (seconds * min(workers, count) - busy) / count if count else None
    row = Row(name, workers, count, images, round(seconds, 2), round(images / seconds, 1), 0.0, None)
    row.overhead_per_shard_s = None if overhead is None else round(overhead, 3)
    return row, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshot", type=Path, help="a snapshot folder (else --synth generates one)")
    parser.add_argument("--synth", default="tiny", help="LookBench-Synth size to generate (seed 0)")
    parser.add_argument("--model", default="efficientnet-lite0")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", default="1,2,4", help="local worker process counts")
    parser.add_argument("--shards", type=int, default=None, help="shards per split (default: the fixed size)")
    parser.add_argument("--ray", action="store_true", help="also on a local Ray cluster of every core")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.snapshot or generate_snapshot(Path(tmp), date(2026, 6, 1), args.synth, seed=0)
        snap = open_snapshot(root)
        reference, expected = plain_run(snap, args.model, args.batch_size)
        rows = [reference]
        runs: list[tuple[str, Executor]] = [
            (f"local, {n} worker process{'es' if n > 1 else ''}" if n > 1 else "local, this process", LocalExecutor(n))
            for n in map(int, args.workers.split(","))
        ]
        if args.ray:
            import ray

            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            ray.init(num_cpus=usable_cores(), include_dashboard=False, log_to_driver=False)
            from lookbench.shards.ray_executor import RayExecutor

            runs.append((f"ray, local cluster of {usable_cores()} CPUs", RayExecutor()))
        for name, executor in runs:
            row, found = sharded_run(snap, args.model, args.batch_size, executor, name, args.shards)
            if found != expected:
                raise SystemExit(f"{name}: vectors differ from the run without shards")
            row.speedup = round(row.images_per_s / reference.images_per_s, 2)
            rows.append(row)
            executor.close()
            print(json.dumps(asdict(row)), flush=True)
    load = os.getloadavg()
    print(f"\n{args.model}, batch {args.batch_size}, {usable_cores()} usable cores, load {load[0]:.1f} after the run")
    print("| executor | workers | shards | images | s | images/s | speed-up | overhead per shard (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        overhead = "" if r.overhead_per_shard_s is None else f"{r.overhead_per_shard_s:.2f}"
        print(
            f"| {r.executor} | {r.workers} | {r.shards} | {r.images} | {r.seconds} | {r.images_per_s} | "
            f"{r.speedup} | {overhead} |"
        )
    if args.out:
        args.out.write_text(json.dumps([asdict(r) for r in rows], indent=1))


if __name__ == "__main__":
    with results_file("shard_scaling"):
        main()
