"""Time `lookbench audit --model embeddings:DIR` at the real preset's row counts (8,779 gallery, 58,275 noise,
2,345 queries, 1280-d vectors), where everything but decoding scales with the snapshot.

The images are small procedural JPEGs (decoding is capped by the sample, `--per-side` per side plus `--queries`
per subset, and is timed on a real snapshot separately); the embeddings are random float32 vectors read from
`.npy` files, as cached embeddings are read from disk. Prints wall and CPU seconds per phase and the machine's load.

    python benchmarks/audit_scale.py --out /tmp/audit-scale [--dim 1280]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from lookbench.audit.run import AuditSettings, audit_snapshot
from lookbench.models.registry import resolve_model
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import NOISE, SUBSETS
from lookbench.snapshot.writer import image_value, rows_to_table, write_split
from lookbench.synth.sizes import size_preset

CATEGORIES = ("dress", "skirt", "top", "pants", "coat", "shoes", "bag", "shirt")
COLOURS = ("red", "blue", "green", "black", "white", "grey")


def _jpeg(rng: np.random.Generator) -> bytes:
    image = Image.new("RGB", (96, 128), tuple(int(v) for v in rng.integers(0, 256, 3)))
    draw = ImageDraw.Draw(image)
    x0, y0 = (int(v) for v in rng.integers(0, 60, 2))
    draw.ellipse((x0, y0, x0 + 30, y0 + 50), fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=85)
    return buf.getvalue()


def _rows(prefix: str, n: int, rng: np.random.Generator, pool: list[bytes]) -> list[dict[str, Any]]:
    return [
        {
            "image": image_value(pool[int(rng.integers(len(pool)))], f"{prefix}{i}.jpg"),
            "category": CATEGORIES[i % len(CATEGORIES)],
            "main_attribute": COLOURS[(i // len(CATEGORIES)) % len(COLOURS)],
            "other_attributes": [],
            "item_ID": f"{prefix}{i % max(n // 3, 1)}",
        }
        for i in range(n)
    ]


def build(out: Path, dim: int) -> tuple[Path, Path]:
    """The snapshot and the embeddings folder at the real preset's counts (reused when present)."""
    snap, emb = out / "v20260601", out / "emb"
    if (emb / "done").is_file():
        return snap, emb
    preset = size_preset("real")
    rng = np.random.default_rng(0)
    pool = [_jpeg(rng) for _ in range(2000)]  # distinct images: decoding cost as for any small JPEG
    splits = [(s, "query", preset.queries[s]) for s in SUBSETS] + [(s, "gallery", preset.gallery[s]) for s in SUBSETS]
    for subset, split, n in [*splits, (NOISE, "gallery", preset.noise)]:
        write_split(rows_to_table(_rows(f"{subset}-{split}-", n, rng, pool)), snap / subset / f"{split}.parquet")
        path = emb / subset / f"{split}.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, rng.normal(size=(n, dim)).astype(np.float32))
    (emb / "done").write_text("")
    return snap, emb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dim", type=int, default=1280)
    args = parser.parse_args()
    snap, emb = build(args.out, args.dim)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    report = audit_snapshot(open_snapshot(snap), resolve_model(f"embeddings:{emb}"), AuditSettings())
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    print(f"phases (wall s): {report.timings}")
    rss = cpu1.ru_maxrss / 1024
    print(f"total: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {rss:.0f} MiB, {os.cpu_count()} cores")
    print(f"load before {' '.join(load_before)}, after {' '.join(load_after)}")
    print(f"sampled: {report.sampling.model_dump()}")


if __name__ == "__main__":
    main()
