"""`lookbench eval` with a model at real LookBench scale: wall time and peak memory of a cache-hit run.

    python benchmarks/eval_real_scale.py [--snapshot PATH] [--model SPEC] [--lookbench-src DIR] [--json FILE]

Without `--snapshot` it writes a real-scale snapshot of small photo-like JPEGs (queries 1011/193/981/160,
galleries 3951/979/3278/571, 58,275 noise images; `--image-size` pixels square, random labels of the real shapes)
under `--work` (kept, so later runs reuse it). The default model is a cheap deterministic `python:` model giving
1280-d vectors (EfficientNet-Lite0's width): 8x8 thumbnails through a fixed random projection, so filling the cache
takes about a minute on 2 cores; `--model efficientnet-lite0` measures the real default (about 10 minutes to fill).

Runs, each a fresh `lookbench eval` process: `cold` embeds and fills the cache (unless an earlier run did),
`hit` finds every vector cached (the figure the issue's "cache-hit run" means), and `touched` runs after every
parquet file's modification time changed (the digest index re-hashes each file once, not its images).
`--lookbench-src` runs the eval processes on another checkout's `src/` (for a before/after comparison; the
snapshot and the model are made by this one).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from embedding_throughput import photo_jpeg
from measure import lookbench, timed_process
from scoring_speed import NOISE, SIZES, fake_labels

from lookbench.snapshot.schema import IMAGE_TYPE, OPTIONAL_COLUMNS, REQUIRED_COLUMNS
from lookbench.snapshot.writer import write_split

COLUMN_TYPES = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}
MODEL_MODULE = '''"""A cheap deterministic 1280-d model for eval_real_scale.py: 8x8 thumbnails, fixed projection."""
import numpy as np


class Thumbs:
    model_id, revision = "thumbs-1280", "1"

    def __init__(self):
        self.projection = np.random.default_rng(0).standard_normal((192, 1280)).astype(np.float32)

    def embed(self, images):
        pixels = np.stack([np.asarray(im.resize((8, 8)), np.float32).ravel() for im in images])
        return (pixels / 255.0 - 0.5) @ self.projection + 0.01


def make():
    return Thumbs()
'''


def _split(rng: np.random.Generator, n: int, prefix: str, street: bool, size: int, seed: int) -> pa.Table:
    labels = fake_labels(rng, n, prefix, street)
    images = [{"bytes": photo_jpeg(seed + i, size, size), "path": f"{prefix}{i}.jpg"} for i in range(n)]
    columns: dict[str, Any] = {
        "image": pa.array(images, IMAGE_TYPE),
        "raw_image": pa.nulls(n, IMAGE_TYPE),
        "category": pa.array(labels.category),
        "main_attribute": pa.array(labels.main_attribute),
        "other_attributes": pa.array(labels.other_attributes, COLUMN_TYPES["other_attributes"]),
        "bbox": pa.array([[0.0, 0.0, float(size), float(size)]] * n, COLUMN_TYPES["bbox"]),
        "item_ID": pa.array(labels.item_id),
        "task": pa.array(["retrieval"] * n),
        "difficulty": pa.array(["easy"] * n),
    }
    if street:
        columns["outfit_id"] = pa.array(labels.outfit_key, pa.string())
    return pa.table(columns)


def make_snapshot(root: Path, size: int) -> Path:
    """A real-scale snapshot of `size`-pixel JPEGs (written once; its MARKER says it is complete)."""
    snap = root / "v20251201"
    marker = root / f"complete-{size}"
    if marker.is_file():
        return snap
    rng = np.random.default_rng(0)
    write_split(_split(rng, NOISE, "n", False, size, 10_000_000), snap / "noise" / "gallery.parquet")
    for s, (subset, (queries, gallery)) in enumerate(SIZES.items()):
        street = "street" in subset
        write_split(_split(rng, queries, "q", street, size, s * 100_000), snap / subset / "query.parquet")
        write_split(_split(rng, gallery, "g", False, size, s * 100_000 + 50_000), snap / subset / "gallery.parquet")
    marker.write_text("done\n")
    return snap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--snapshot", type=Path, help="an existing snapshot folder (e.g. `lookbench synth --size real`)"
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/lookbench-eval-real-scale"))
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--model", default="python:thumbs_model:make")
    parser.add_argument("--lookbench-src", type=Path, help="run the eval processes on this checkout's src/")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "thumbs_model.py").write_text(MODEL_MODULE)
    started = time.perf_counter()
    snap = args.snapshot or make_snapshot(args.work, args.image_size)
    made_s = time.perf_counter() - started
    source = str(args.lookbench_src.resolve()) if args.lookbench_src else os.environ.get("PYTHONPATH", "")
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (source, str(args.work)) if p),
        "LOOKBENCH_CACHE": str(args.work / "cache"),
    }
    command = lookbench("eval", "--snapshot", str(snap), "--model", args.model, "--output", str(args.work / "r.json"))
    report: dict[str, Any] = {
        "snapshot": str(snap),
        "model": args.model,
        "lookbench_src": source,
        "snapshot_written_s": round(made_s, 1),
    }
    cold = timed_process(command, env)
    report["cold"] = {"wall_s": round(cold[0], 1), "peak_rss_mb": round(cold[1])}
    hit = timed_process(command, env)
    report["hit"] = {"wall_s": round(hit[0], 2), "peak_rss_mb": round(hit[1])}
    for path in Path(snap).rglob("*.parquet"):
        os.utime(path)
    touched = timed_process(command, env)
    report["touched"] = {"wall_s": round(touched[0], 2), "peak_rss_mb": round(touched[1])}
    report["cpus"] = os.cpu_count()
    report["load_average_1min"] = round(os.getloadavg()[0], 2)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
