"""CPU per image of gallery rows and distractors: this tree against a baseline source tree, alternated.

Renders the first 32 gallery rows of every subset and two chunks of distractors (128) of the default release, in a
fresh process per run, alternating the baseline tree (e.g. the renderer before a change, `git archive COMMIT src`)
and this one, and prints each run's CPU seconds per image plus the min and median per tree. Same load for both.

    git archive e804c09 src | tar -x -C /tmp/base && python benchmarks/synth_render_cost.py --baseline /tmp/base/src
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

RUN = """
import time
from datetime import date
from lookbench.synth import tasks
from lookbench.synth.plan import plan_release
from lookbench.synth.tasks import RenderTask, run_task
release = date(2026, 6, 1)
plan = plan_release(0, release, "small")
setter = getattr(tasks, "set_noise_basis", None) or getattr(tasks, "set_cover")
setter(getattr(plan, "basis", None) or getattr(plan, "cover"))
items = tuple(item for sub in plan.subsets for item in sub.gallery[:32])
run_task(RenderTask("catalogue", "real", items[:2], 0, release))  # warm caches (sensor-noise tile, taxonomy)
start = time.process_time()
run_task(RenderTask("catalogue", "real", items, 0, release))
gallery = (time.process_time() - start) / len(items)
start = time.process_time()
for chunk in plan.noise_chunks()[2:4]:
    run_task(RenderTask("noise", "real", (chunk,), 0, release))
print(gallery, (time.process_time() - start) / 128)
"""


def measure(src: Path) -> tuple[float, float]:
    """(gallery, noise) CPU seconds per image of one fresh process on the source tree `src`."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", RUN], env=env, check=True, capture_output=True, text=True).stdout
    gallery, noise = (float(v) for v in out.split())
    return gallery, noise


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a source tree (the folder holding lookbench/)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    this = Path(__file__).resolve().parents[1] / "src"
    runs: dict[str, list[tuple[float, float]]] = {"baseline": [], "this": []}
    print(f"load average before: {os.getloadavg()}")
    for _ in range(args.repeats):
        for name, src in (("baseline", args.baseline), ("this", this)):
            runs[name].append(measure(src))
            print(f"{name}: gallery {runs[name][-1][0]:.4f} s, noise {runs[name][-1][1]:.4f} s per image", flush=True)
    print(f"load average after: {os.getloadavg()}")
    for name, values in runs.items():
        for k, part in enumerate(("gallery", "noise")):
            column = [v[k] for v in values]
            print(f"{name} {part}: min {min(column):.4f} s, median {statistics.median(column):.4f} s per image")


if __name__ == "__main__":
    main()
