"""The dedup stage end to end (hashing, the batch's store, candidate pairs, pair decisions, groups) on a published
Synth snapshot as the history and batches made from its images (edits of history images, images it does not hold,
edits of those), per batch size on 1 and 2 local processes and on 1, 2, 4 local Ray workers: wall seconds, each
job's shard seconds, and the tables' sha256 (the same for every executor). With `--growth SIZES` the candidate
search of one batch image in a history of each size (synthetic codes) is timed too, and a whole release of n
against n is projected from it and the measured CPU per pair decision at the candidate caps.

    python benchmarks/dedup/cluster.py SNAPSHOT --growth 10000 30000 100000 300000 --ray-workers 1 2 4
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: measure.py and the dedup package

import argparse
import json
import os
import shutil
import tempfile
from typing import Any, get_args

import numpy as np
from measure import record, results_file

from dedup.common import (
    cluster_batch,
    cpu,
    exponent,
    published,
    random_words,
    synthetic_parts,
    timed_stage,
)
from lookbench.release.config import DedupConfig
from lookbench.release.fingerprints.pairs import Entries, candidate_rows
from lookbench.search.duplicates import history
from lookbench.search.duplicates.crops import CropPairs
from lookbench.search.duplicates.index import (
    MAX_CANDIDATES,
    MAX_CROP_CANDIDATES,
)
from lookbench.shards.local import LocalExecutor


def main_cluster() -> None:
    """The sharded dedup stage end to end (hash, batch store, candidates, decisions, groups) on real images."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path, help="a published Synth version folder (vYYYYMMDD): the history")
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000], help="batch sizes")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2], help="local worker processes")
    parser.add_argument("--ray-workers", type=int, nargs="*", default=[], help="local Ray workers (e.g. 1 2 4)")
    parser.add_argument("--ray-size", type=int, default=500, help="batch size of the Ray runs")
    parser.add_argument("--crop-pairs", choices=get_args(CropPairs), default="all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--growth", type=int, nargs="*", default=[], help="history sizes of the search growth")
    args = parser.parse_args()
    print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    growth = search_growth(args.growth, args.seed, args.crop_pairs) if args.growth else []
    images = [data for _, data in published(args.snapshot)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        (out / "v20260101").symlink_to(args.snapshot.resolve(), target_is_directory=True)
        history.history_store(out, "v20260601", Path(tmp) / "state" / "fingerprints")
        runs = []
        for size in args.sizes:
            samples = cluster_batch(images, size, args.seed)
            for processes in args.processes:
                executor = LocalExecutor(processes if processes > 1 else None)
                root = Path(tmp) / f"local-{size}-{processes}"
                found = timed_stage(root, out, samples, executor, 2 * processes * 4, args.crop_pairs)
                runs.append({"batch": size, "history": len(images), "executor": f"local x{processes}", **found})
                print(json.dumps(runs[-1]), flush=True)
                shutil.rmtree(root)
        if args.ray_workers:
            from lookbench.shards.ray_executor import RayExecutor

            samples = cluster_batch(images, args.ray_size, args.seed)
            for workers in args.ray_workers:
                executor = RayExecutor(None, workers)
                root = Path(tmp) / f"ray-{workers}"
                try:
                    found = timed_stage(root, out, samples, executor, 4 * max(args.ray_workers), args.crop_pairs)
                finally:
                    executor.close()
                runs.append({"batch": args.ray_size, "history": len(images), "executor": f"ray x{workers}", **found})
                print(json.dumps(runs[-1]), flush=True)
                shutil.rmtree(root)
    record(
        growth=growth,
        runs=runs,
        fits=cluster_fits(runs),
        projection=projection(runs, growth),
        load_average_end=[round(x, 2) for x in os.getloadavg()],
    )


def synthetic_entries(rng: np.random.Generator, n: int, queries: bool = False) -> Entries:
    """`n` entries of synthetic fingerprints in memory (uniform codes: no aligned candidate), as the dedup stage's
    candidate search sees a store; with `queries`, mirror pHashes too."""
    (stored,) = synthetic_parts(rng, n, chunk=n)
    return Entries(stored, lambda _row: b"", random_words(rng, (n, 4)) if queries else None)


def search_growth(sizes: list[int], seed: int, pairs: CropPairs, shard: int = 512) -> list[dict[str, Any]]:
    """Per history size, the CPU milliseconds of one batch image's candidate search in it (pHash tier, window
    pairs straight and mirrored): a shard of `shard` queries searched together, as the candidates job does, and one
    by one."""
    rng = np.random.default_rng(seed)
    queries = synthetic_entries(rng, shard, queries=True)
    settings, none = DedupConfig(crop_pairs=pairs), np.zeros(0, dtype=np.int64)
    rows = list(range(shard))
    found = []
    for n in sizes:
        history = synthetic_entries(rng, n)

        def together(history: Entries = history) -> object:
            return candidate_rows(queries, rows, history, settings, lambda _: none)

        def alone(history: Entries = history) -> object:
            return [candidate_rows(queries, [q], history, settings, lambda _: none) for q in rows[:64]]

        ms = {"together": 1000 * cpu(together) / shard, "alone": 1000 * cpu(alone) / 64}
        found.append({"history": n, "cpu_ms_per_image": {name: round(value, 3) for name, value in ms.items()}})
        print(json.dumps({"search_growth": found[-1]}), flush=True)
    return found


PAIRS_AT_CAPS = 2 * (2 * MAX_CROP_CANDIDATES + MAX_CANDIDATES)
"""Pairs one batch image can bring when every cap is reached in the history and in the batch: crop candidates
straight and mirrored and pHash candidates, on each side (an upper bound: a pair found from both sides counts once)."""


def projection(runs: list[dict[str, Any]], growth: list[dict[str, Any]], cores: int = 2) -> dict[str, Any]:
    """CPU and wall hours of a whole dedup of n new images against a history of n, per image: its hashing and
    decisions at the caps (CPU per pair from the largest one-process run) and its candidate search in both indexes
    (the growth fit), spread over `cores` at the efficiency measured with two processes."""
    local = [run for run in runs if run["executor"] == "local x1"]
    if not local or len(growth) < 2:
        return {}
    largest = max(local, key=lambda run: run["batch"])
    pair_ms = 1000 * largest["shard_seconds"]["decisions"] / largest["candidate_pairs"]
    hash_ms = 1000 * largest["shard_seconds"]["hash"] / largest["batch"]
    points = [(g["history"], g["cpu_ms_per_image"]["together"]) for g in growth]
    b = exponent(points)
    a = points[-1][1] / points[-1][0] ** b
    two = [run for run in runs if run["executor"] == "local x2" and run["batch"] == largest["batch"]]
    efficiency = largest["wall_s"] / (2 * two[0]["wall_s"]) if two else 1.0
    out: dict[str, Any] = {
        "cpu_ms_per_pair": round(pair_ms, 3),
        "pairs_per_image_measured": round(largest["candidate_pairs"] / largest["batch"], 1),
        "pairs_per_image_at_caps": PAIRS_AT_CAPS,
        "hash_ms_per_image": round(hash_ms, 2),
        "search_exponent": b,
        "two_process_efficiency": round(efficiency, 3),
    }
    for n in (69_000, 1_000_000):
        search_ms = 2 * a * n**b
        per_image = hash_ms + search_ms + PAIRS_AT_CAPS * pair_ms
        cpu_hours = n * per_image / 1000 / 3600
        out[f"{n} against {n}"] = {
            "cpu_ms_per_image": {"search": round(search_ms, 1), "decisions": round(PAIRS_AT_CAPS * pair_ms, 1)},
            "cpu_hours": round(cpu_hours, 2),
            "wall_hours_on_2_cores": round(cpu_hours / (cores * min(efficiency, 1.0)), 2),
        }
    lookup = [(n, a * n**b + PAIRS_AT_CAPS / 2 * pair_ms) for n in (10_000, 300_000)]
    out["lookup_cost_exponent_10k_to_300k"] = exponent(lookup)
    return out


def cluster_fits(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per executor, wall = a * batch^b fitted over the batch sizes, and its projection to 69k and 1M images."""
    fits = {}
    for name in sorted({run["executor"] for run in runs}):
        points = [(run["batch"], run["wall_s"]) for run in runs if run["executor"] == name]
        if len(points) < 2:
            continue
        slope, intercept = np.polyfit(np.log([p[0] for p in points]), np.log([p[1] for p in points]), 1)
        fits[name] = {
            "exponent": round(float(slope), 3),
            "projected_hours": {
                str(n): round(float(np.exp(intercept) * n**slope) / 3600, 2) for n in (69_000, 1_000_000)
            },
        }
    return fits


if __name__ == "__main__":
    with results_file("dedup-cluster"):
        main_cluster()
