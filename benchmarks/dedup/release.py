"""A batch of `--batch` images, made as `cluster.py` makes them (edits of history images, new images, edits of
those), against a whole published snapshot as the history (the real-size
Synth, 69k images), on `--processes` local processes, `--repeats` times: the stage's wall time per batch image (min
and median), the wall time of a batch of the history's size projected from it (the candidates job counted twice: the
batch's own index then is as large as the history's), the crop-candidate search's growth on the snapshot's own
window codes, and a 1M-image crawl deduped as one batch projected from both.

    python benchmarks/dedup/release.py SNAPSHOT --batch 10000 --processes 2
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
import time
from typing import Any

import numpy as np
from measure import record, results_file

from dedup.common import (
    cluster_batch,
    exponent,
    process_cpu_s,
    published,
    timed_stage,
)
from lookbench.search.duplicates import history
from lookbench.search.duplicates.index import (
    CROP_CANDIDATE_BITS,
    MAX_CROP_CANDIDATES,
)
from lookbench.search.duplicates.store import StoredCodes, open_store
from lookbench.search.duplicates.tables import (
    Codes,
    HashedWindows,
)
from lookbench.shards.local import LocalExecutor


def main_release() -> None:
    """A batch as large as a release against a whole published snapshot: the wall time of the dedup stage per
    batch image, and the projected wall time of a batch of the history's size."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("snapshot", type=Path, help="a published Synth version folder (vYYYYMMDD): the history")
    parser.add_argument("--batch", type=int, default=10_000, help="batch images (edits of history images and new)")
    parser.add_argument("--processes", type=int, default=2, help="local worker processes")
    parser.add_argument("--state", type=Path, help="state folder kept between runs (default: a temporary one)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the stage (each from scratch)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    images = [data for _, data in published(args.snapshot)]
    with tempfile.TemporaryDirectory() as tmp:
        out, state = Path(tmp) / "out", args.state or Path(tmp) / "state"
        cache = state / "fingerprints"
        out.mkdir()
        (out / "v20260101").symlink_to(args.snapshot.resolve(), target_is_directory=True)
        started = time.perf_counter()
        history.history_store(out, "v20260601", cache)
        store_s = time.perf_counter() - started
        started = time.perf_counter()
        samples = cluster_batch(images, args.batch, args.seed)
        made_s = time.perf_counter() - started
        executor = LocalExecutor(args.processes if args.processes > 1 else None)
        runs = []
        for repeat in range(args.repeats):
            runs.append(
                timed_stage(Path(tmp) / f"run{repeat}", out, samples, executor, 8 * args.processes, "all", state)
            )
            print(json.dumps(runs[-1]), flush=True)
            shutil.rmtree(Path(tmp) / f"run{repeat}")
        if len({json.dumps(run["tables_sha256"]) for run in runs}) != 1:
            raise AssertionError("the repeats wrote different tables")
        walls = sorted(run["wall_s"] for run in runs)
        found = min(runs, key=lambda run: run["wall_s"])
        store_folder, _ = history.history_store(out, "v20260601", cache)
        assert store_folder is not None
        growth = real_search_growth(open_store(store_folder), args.seed)
    n, shard = len(images), found["shard_seconds"]
    per_image = found["wall_s"] / args.batch
    median_per_image = walls[len(walls) // 2] / args.batch
    # The batch's own index is searched by every batch image: at the history's size its search costs what the
    # history's does, so the candidates job's time per image is counted twice (an upper bound).
    extra = shard["candidates"] / args.batch / args.processes
    # A crawl deduped as one batch of 1M: hashing and decisions per image as measured, the search in one index of
    # 1M from the growth fit on real window codes, spread over the processes at the run's own efficiency.
    efficiency = sum(shard.values()) / (args.processes * found["wall_s"])
    fixed_ms = 1000 * (shard["hash"] + shard["decisions"]) / args.batch
    b = exponent([(g["history"], g["cpu_ms_per_image"]) for g in growth])
    a = growth[-1]["cpu_ms_per_image"] / growth[-1]["history"] ** b
    crawl = 1_000_000
    crawl_ms = fixed_ms + a * crawl**b
    record(
        history=n,
        batch=args.batch,
        processes=args.processes,
        history_store_s=round(store_s, 1),
        batch_made_s=round(made_s, 1),
        **found,
        wall_s_of_repeats=walls,
        wall_ms_per_batch_image={"min": round(1000 * per_image, 2), "median": round(1000 * median_per_image, 2)},
        search_growth_on_real_codes=growth,
        search_exponent=b,
        efficiency=round(efficiency, 3),
        projected={
            f"{n} against {n}": {
                "wall_hours": {
                    "min": round(n * (per_image + extra) / 3600, 3),
                    "median": round(n * (median_per_image + extra) / 3600, 3),
                }
            },
            f"{crawl} in one batch": {
                "cpu_ms_per_image": {"hash and decisions": round(fixed_ms, 1), "search": round(a * crawl**b, 1)},
                "wall_hours": round(crawl * crawl_ms / 1000 / 3600 / (args.processes * efficiency), 2),
            },
        },
        load_average={"before": load, "after": [round(x, 2) for x in os.getloadavg()]},
    )


def real_search_growth(stored: StoredCodes, seed: int, queries: int = 300) -> list[dict[str, Any]]:
    """CPU milliseconds of one image's crop-candidate search (straight and mirrored) in the first n entries of a
    store of real window codes, for n from an eighth of it to all but the queries (other entries of it)."""
    rng = np.random.default_rng(seed)
    rows = len(stored)
    picked = rng.choice(rows, queries, replace=False)
    straight = np.asarray(stored.windows)[picked]
    mirrored = np.stack([stored.view(int(row)).mirrored().windows for row in picked])
    keep = np.setdiff1d(np.arange(rows), picked)
    windows, present = np.asarray(stored.windows)[keep], np.asarray(stored.present)[keep]
    found = []
    for n in sorted({len(keep) // 8, len(keep) // 4, len(keep) // 2, len(keep)}):
        table = HashedWindows(Codes.of(windows[:n]), Codes.of(present[:n]))
        table.nearest_many(straight[:2], CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES)
        times = []
        for _ in range(3):
            started = process_cpu_s()
            table.nearest_many(straight, CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES)
            table.nearest_many(mirrored, CROP_CANDIDATE_BITS, MAX_CROP_CANDIDATES)
            times.append(1000 * (process_cpu_s() - started) / queries)
        found.append({"history": n, "cpu_ms_per_image": round(min(times), 3), "median": round(sorted(times)[1], 3)})
        print(json.dumps({"real_search_growth": found[-1]}), flush=True)
    return found


if __name__ == "__main__":
    with results_file("dedup-release"):
        main_release()
