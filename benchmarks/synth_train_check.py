"""Check that a Synth training release on disk (e.g. a copy) is what `lookbench synth --purpose train` makes.

    python benchmarks/synth_train_check.py data/v20260301 [--seed 0 --release 2026-03-01 --size small]

A fresh plan (under the exclusions and exhausted-category policy the manifest records) must give a manifest (products,
rows per file, excluded designs, dropped categories) equal to the folder's `synth_manifest.json`,
every file must hold the planned rows, and the first and last render task of each file, rendered again now, must
give rows identical to the stored ones (images, ids, labels). Exits 1 naming the first difference.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from lookbench.dates import parse_day
from lookbench.synth.disjoint import DEFAULT_EXCLUSION, excluded_designs
from lookbench.synth.generate import MANIFEST, manifest, task_rows, training_file_jobs
from lookbench.synth.tasks import run_task
from lookbench.synth.training import plan_training


def main() -> int:
    """Compare the folder with a fresh plan and a re-render of two tasks per file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the release folder, e.g. data/v20260301")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--release", default="2026-03-01")
    parser.add_argument("--size", default="small")
    args = parser.parse_args()
    stored = json.loads((args.root / MANIFEST).read_text(encoding="utf-8"))
    excluded = list(stored.get("excluded_designs", DEFAULT_EXCLUSION))
    exhausted = str(stored.get("exhausted_categories", "fail"))
    plan = plan_training(args.seed, parse_day(args.release), args.size, excluded_designs(excluded), exhausted)
    jobs = training_file_jobs(plan)
    if manifest(plan, jobs, "train", excluded, exhausted) != stored:
        print(f"{args.root / MANIFEST}: differs from a fresh plan's manifest")
        return 1
    checked = 0
    for job in jobs:
        table = pq.read_table(args.root / job.path)
        if table.num_rows != job.rows:
            print(f"{job.path}: {table.num_rows} rows, the plan has {job.rows}")
            return 1
        offsets = [sum(task_rows(task) for task in job.tasks[:index]) for index in range(len(job.tasks))]
        for index in sorted({0, len(job.tasks) - 1}):
            rendered = run_task(job.tasks[index]).to_pylist()
            if table.slice(offsets[index], len(rendered)).to_pylist() != rendered:
                print(f"{job.path}: render task {index} differs from the stored rows")
                return 1
            checked += len(rendered)
    print(f"{stored['name']}: manifest identical, rows {stored['rows']}; {checked} re-rendered rows identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
