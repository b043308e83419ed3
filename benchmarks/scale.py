"""Real LookBench scale (2,345 queries, ~60k corpus rows): `scoring` (search, metrics and intervals; `--eval` the
whole `lookbench eval` on precomputed vectors), `eval` (a cache-hit `lookbench eval` with a model), `audit`
(`lookbench audit` at real row counts).

    python benchmarks/scale.py scoring|eval|audit [options]     # --help after the subcommand

`scoring`:
Scoring speed at the real LookBench scale: search + every metric + bootstrap CIs, and the whole `lookbench eval`.

Sizes are those of the released snapshot v20251201 (queries 1011/193/981/160, galleries 3951/979/3278/571,
58,275 noise rows), with 1024-d float32 embeddings. Embedding time is excluded.

    python benchmarks/scale.py scoring [--search exact|torch|faiss:hnsw] [--baseline-queries 0] [--eval]

- scoring: the chosen backend's search plus every metric at K in {1, 5, 10, 20} and 1,000-resample intervals;
  a backend other than `exact` is also checked row for row against `exact` (and timed against it);
- `--eval`: writes a real-scale snapshot (labels, 1-pixel images) and `embeddings:DIR` files, runs the whole
  `lookbench eval --model embeddings:DIR` in a fresh process (imports, reading, checks, search, metrics, writing
  the result), and reports its wall and CPU time (user + sys, every thread) against the floor of any exact
  scorer: one fp32 matrix product per subset (all queries x gallery + noise), measured in the same run; the two
  alternate `--repeats` times (3) so that changing load hits both, and min and median ratios are reported, with
  the peak RSS and the load; the same floor on one BLAS thread is reported too (numpy's default threads spend
  CPU waiting for each other on a busy machine; `ExactSearch` runs one BLAS thread per worker); `--before-src DIR`
  times another checkout's `src/` in the same alternation and checks that both wrote the same results
  (`identical_to_before`); the processes use bytecode caches, as an installed package does;
  `--eval-only` skips the in-process scoring figures;
- `--baseline-queries N`: also times the authors' evaluator loop (a full argsort per query, K and metric) on N
  queries, scaled to all of them.

`eval`:
`lookbench eval` with a model at real LookBench scale: wall time and peak memory of a cache-hit run.

    python benchmarks/scale.py eval [--snapshot PATH] [--model SPEC] [--lookbench-src DIR] [--json FILE]

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

`audit`:
Time `lookbench audit --model embeddings:DIR` at the real preset's row counts (8,779 gallery, 58,275 noise,
2,345 queries, 1280-d vectors), where everything but decoding scales with the snapshot.

The images are small procedural JPEGs (decoding is capped by the sample, `--per-side` per side plus `--queries`
per subset, and is timed on a real snapshot separately); the embeddings are random float32 vectors read from
`.npy` files, as cached embeddings are read from disk. Prints wall and CPU seconds per phase and the machine's load.

    python benchmarks/scale.py audit --out /tmp/audit-scale [--dim 1280]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from embedding_throughput import photo_jpeg
from measure import Timed, lookbench, run_subcommand, timed_process
from PIL import Image, ImageDraw
from threadpoolctl import threadpool_limits

from lookbench.datasets.synth.sizes import size_preset
from lookbench.metrics.aggregate import summarise
from lookbench.metrics.definitions import DEFAULT_KS, FineRule
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.models.registry import resolve_model
from lookbench.release.audit.run import AuditSettings, audit_snapshot
from lookbench.results.per_query import subset_values, task_table
from lookbench.search import make_backend
from lookbench.search.backend import SearchBackend
from lookbench.search.exact import ExactSearch
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.schema import IMAGE_TYPE, NOISE, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, SUBSETS
from lookbench.snapshot.writer import image_value, rows_to_table, write_split

COLUMN_TYPES_scoring = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}


SIZES = {
    "real_studio_flat": (1011, 3951),
    "aigen_studio": (193, 979),
    "real_streetlook": (981, 3278),
    "aigen_streetlook": (160, 571),
}


NOISE_ROWS = 58_275


CATEGORIES_scoring = [f"cat{i}" for i in range(27)]


ATTRIBUTES = [f"attr{i}" for i in range(120)]


Task = tuple[SplitLabels, SplitLabels, np.ndarray, np.ndarray, np.ndarray, int]


def fake_labels(rng: np.random.Generator, n: int, prefix: str, outfits: bool) -> SplitLabels:
    """Random labels with the real label shapes."""
    cats = rng.integers(0, len(CATEGORIES_scoring), n)
    attrs = rng.integers(0, len(ATTRIBUTES), (n, 5))
    return SplitLabels(
        category=[CATEGORIES_scoring[c] for c in cats],
        main_attribute=[ATTRIBUTES[a[0]] for a in attrs],
        other_attributes=[[ATTRIBUTES[x] for x in a[1 : 1 + rng.integers(0, 5)]] for a in attrs],
        item_id=[f"{prefix}{i}" for i in range(n)],
        outfit_key=[f"o{i // 3}" if outfits else None for i in range(n)],
    )


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Random unit vectors."""
    x = rng.standard_normal((n, dim), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def real_scale_data(dim: int) -> tuple[SplitLabels, np.ndarray, dict[str, Task]]:
    """Noise labels and vectors, and per subset (query labels, gallery labels, queries, gallery, noise, rows)."""
    rng = np.random.default_rng(0)
    noise_labels = fake_labels(rng, NOISE_ROWS, "n", False)
    noise = unit(rng, NOISE_ROWS, dim)
    noise.flags.writeable = False
    data: dict[str, Task] = {}
    for subset, (nq, ng) in SIZES.items():
        gallery = unit(rng, ng, dim)
        queries = unit(rng, nq, dim) * 0.5 + gallery[rng.integers(0, ng, nq)] * 0.5
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        street = "street" in subset
        data[subset] = (
            fake_labels(rng, nq, "q", street),
            fake_labels(rng, ng, "g", False),
            queries,
            gallery,
            noise,
            ng,
        )
    return noise_labels, noise, data


def score(backend: SearchBackend, noise_labels: SplitLabels, data: dict[str, Task], resamples: int) -> dict[str, Any]:
    """Search + metrics per subset, then the bootstrap; returns timings and the rankings."""
    t0 = time.perf_counter()
    search_s = 0.0
    tables = []
    rankings = {}
    for subset, (q_labels, g_labels, q, gallery, noise, ng) in data.items():
        t1 = time.perf_counter()
        found = backend.search(q, [gallery, noise], max(DEFAULT_KS))
        search_s += time.perf_counter() - t1
        rankings[subset] = found
        rel = Relevance.build(q_labels, SplitLabels.concat([g_labels, noise_labels]), ng)
        scores = score_task(rel, found.indices, DEFAULT_KS, FineRule.MAIN)
        item_ids = g_labels.item_id + noise_labels.item_id
        rows = np.arange(len(q))
        clusters = cluster_ids(q_labels.outfit_key)
        tables.append(task_table(subset, rows, q_labels, clusters, found.indices, found.scores, item_ids, scores))
    search_and_metrics = time.perf_counter() - t0
    summarise(subset_values(pa.concat_tables(tables)), resamples=resamples)
    total = time.perf_counter() - t0
    return {"search_s": search_s, "search_and_metrics_s": search_and_metrics, "total_s": total, "rankings": rankings}


def matmul_floor(data: dict[str, Task]) -> tuple[float, float]:
    """One fp32 product of all queries x (gallery + noise) per subset, the floor of any exact scorer: (wall, CPU)
    seconds, CPU counting every BLAS thread."""
    wall = cpu = 0.0
    for _, _, q, gallery, noise, _ in data.values():
        corpus = np.concatenate([gallery, noise])
        t0, c0 = time.perf_counter(), time.process_time()
        product = q @ corpus.T
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        del product, corpus
    return wall, cpu


def _table(labels: SplitLabels, image: dict[str, Any]) -> pa.Table:
    n = len(labels)
    columns: dict[str, pa.Array] = {
        "image": pa.array([image] * n, IMAGE_TYPE),
        "raw_image": pa.nulls(n, IMAGE_TYPE),
        "category": pa.array(labels.category),
        "main_attribute": pa.array(labels.main_attribute),
        "other_attributes": pa.array(labels.other_attributes, COLUMN_TYPES_scoring["other_attributes"]),
        "bbox": pa.array([[0.0, 0.0, 1.0, 1.0]] * n, COLUMN_TYPES_scoring["bbox"]),
        "item_ID": pa.array(labels.item_id),
        "task": pa.array(["retrieval"] * n),
        "difficulty": pa.array(["easy"] * n),
    }
    if any(key is not None for key in labels.outfit_key):
        columns["outfit_id"] = pa.array(labels.outfit_key, pa.string())
    return pa.table(columns)


def write_eval_inputs(
    root: Path, noise_labels: SplitLabels, noise: np.ndarray, data: dict[str, Task]
) -> tuple[Path, Path]:
    """A real-scale snapshot (1-pixel JPEGs) and the matching `embeddings:DIR` folder."""
    buf = io.BytesIO()
    Image.new("RGB", (1, 1)).save(buf, format="JPEG")
    image = {"bytes": buf.getvalue(), "path": "1px.jpg"}
    snap, vectors = root / "v20251201", root / "vectors"
    write_split(_table(noise_labels, image), snap / "noise" / "gallery.parquet")
    (vectors / "noise").mkdir(parents=True)
    np.save(vectors / "noise" / "gallery.npy", noise)
    for subset, (q_labels, g_labels, q, gallery, _, _) in data.items():
        write_split(_table(q_labels, image), snap / subset / "query.parquet")
        write_split(_table(g_labels, image), snap / subset / "gallery.parquet")
        (vectors / subset).mkdir(parents=True)
        np.save(vectors / subset / "query.npy", q)
        np.save(vectors / subset / "gallery.npy", gallery)
    return snap, vectors


def run_eval(snap: Path, vectors: Path, out: Path, search: str, source: Path | None = None) -> Timed:
    """Wall, peak RSS and CPU of `lookbench eval --model embeddings:DIR` in a fresh process (on `source`'s code)."""
    args = ["eval", "--snapshot", str(snap), "--model", f"embeddings:{vectors}", "--output", str(out / "result.json")]
    env = {"PYTHONPATH": str(source.resolve())} if source else None
    return timed_process(lookbench(*args, "--search", search), env)


def same_results(a: Path, b: Path) -> bool:
    """Both runs wrote the same results: `result.json` but its creation time and timings, the per-query file byte
    for byte."""

    def kept(folder: Path) -> dict[str, Any]:
        result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        return {key: value for key, value in result.items() if key not in ("created_at", "timings")}

    parquet = "result.per_query.parquet"
    return kept(a) == kept(b) and (a / parquet).read_bytes() == (b / parquet).read_bytes()


def _spread(values: list[float]) -> dict[str, Any]:
    return {
        "runs": [round(v, 3) for v in values],
        "min": round(min(values), 3),
        "median": round(float(np.median(values)), 3),
    }


def eval_against_floor(
    noise_labels: SplitLabels, noise: np.ndarray, data: dict[str, Task], args: argparse.Namespace
) -> dict[str, Any]:
    """The whole eval (and `--before-src`'s) alternated with the floor: wall, CPU, ratios, peak RSS, load."""
    codes = {"eval": None, **({"before": args.before_src} if args.before_src else {})}
    runs: dict[str, list[Timed]] = {code: [] for code in codes}
    floors: list[tuple[float, float]] = []
    single: list[tuple[float, float]] = []  # the same floor on one BLAS thread
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        snap, vectors = write_eval_inputs(Path(tmp), noise_labels, noise, data)
        for code, source in codes.items():  # warm the page cache, import and digest caches
            run_eval(snap, vectors, Path(tmp) / code, args.search, source)
        for _ in range(args.repeats):  # alternate, so that changing load hits all alike
            for code, source in codes.items():
                floors.append(matmul_floor(data))
                with threadpool_limits(limits=1, user_api="blas"):
                    single.append(matmul_floor(data))
                runs[code].append(run_eval(snap, vectors, Path(tmp) / code, args.search, source))
                loads.append(os.getloadavg()[0])
        identical = same_results(Path(tmp) / "eval", Path(tmp) / "before") if args.before_src else None
    report: dict[str, Any] = {
        "identical_to_before": identical,
        "floor_wall_s": _spread([w for w, _ in floors]),
        "floor_cpu_s": _spread([c for _, c in floors]),
        "floor_one_blas_thread_cpu_s": _spread([c for _, c in single]),
        "load_average_1min": _spread(loads),
    }
    for n, (code, timed) in enumerate(runs.items()):
        paired = floors[n :: len(codes)]  # the floor measured just before each of this code's runs
        report[code] = {
            "wall_s": _spread([t.wall_s for t in timed]),
            "cpu_s": _spread([t.cpu_s for t in timed]),
            "peak_rss_mb": round(max(t.peak_mb for t in timed), 1),
            "wall_over_floor": _spread([t.wall_s / f[0] for t, f in zip(timed, paired, strict=True)]),
            "cpu_over_floor": _spread([t.cpu_s / f[1] for t, f in zip(timed, paired, strict=True)]),
            "cpu_over_one_thread_floor": _spread(
                [t.cpu_s / f[1] for t, f in zip(timed, single[n :: len(codes)], strict=True)]
            ),
        }
    return report


def baseline(queries: np.ndarray, corpus: np.ndarray, rel: Relevance, ks: tuple[int, ...]) -> None:
    """The authors' evaluator's loop (`BaseEvaluator.evaluate`): each metric family computes the similarity
    matrix, then for each K and each query fully argsorts the query's row. Families: the four we report per K."""
    for family in ("coarse_recall", "fine_recall", "mrr", "ndcg"):
        similarity = queries @ corpus.T
        for k in ks:
            for i in range(len(queries)):
                order = np.argsort(-similarity[i])[None, :k]
                if family == "coarse_recall":
                    rel.coarse(order)
                elif family == "ndcg":
                    rel.gains(order)
                else:
                    rel.fine(order, FineRule.MAIN)


def main_scoring() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--search", default="exact", help="auto, exact, torch, faiss, faiss:ivf, faiss:hnsw")
    parser.add_argument("--eval", action="store_true", help="also time the whole `lookbench eval` at real scale")
    parser.add_argument("--repeats", type=int, default=3, help="eval/floor pairs, alternated")
    parser.add_argument("--eval-only", action="store_true", help="skip the in-process scoring figures")
    parser.add_argument("--before-src", type=Path, help="also time the eval on this checkout's src/, alternated")
    parser.add_argument("--baseline-queries", type=int, default=0, help="queries timed for the authors' loop")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    noise_labels, noise, data = real_scale_data(args.dim)
    backend = make_backend(args.search)
    report: dict[str, Any] = {
        "queries": sum(nq for nq, _ in SIZES.values()),
        "corpora": [ng + NOISE_ROWS for _, ng in SIZES.values()],
        "dim": args.dim,
        "search": backend.describe(),
        "cpus": os.cpu_count(),
    }
    if not args.eval_only:
        score(backend, noise_labels, {"aigen_streetlook": data["aigen_streetlook"]}, 10)  # warm-up (device, BLAS)
        timed = score(backend, noise_labels, data, args.resamples)
        report |= {key: round(value, 3) for key, value in timed.items() if key.endswith("_s")}
        if backend.name != "exact":
            reference = score(ExactSearch(), noise_labels, data, args.resamples)
            same = all(
                np.array_equal(timed["rankings"][s].indices, reference["rankings"][s].indices)
                and np.array_equal(timed["rankings"][s].scores, reference["rankings"][s].scores)
                for s in data
            )
            report["identical_to_exact"] = same
            report["exact_total_s"] = round(reference["total_s"], 3)
    if args.eval or args.eval_only:
        report["eval"] = eval_against_floor(noise_labels, noise, data, args)
    if args.baseline_queries:
        t0 = time.perf_counter()
        done = 0
        for q_labels, g_labels, q, gallery, _, ng in data.values():
            take = min(len(q), args.baseline_queries - done)
            if take <= 0:
                break
            rel = Relevance.build(q_labels, SplitLabels.concat([g_labels, noise_labels]), ng)
            baseline(q[:take], np.concatenate([gallery, noise]), rel, DEFAULT_KS)
            done += take
        report["authors_loop_s"] = round((time.perf_counter() - t0) * report["queries"] / done, 2)
        report["authors_loop_timed_queries"] = done
        report["speed_up"] = round(report["authors_loop_s"] / report["total_s"], 1)
    report["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


COLUMN_TYPES_eval = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}


MODEL_MODULE = '''"""A cheap deterministic 1280-d model for scale.py eval: 8x8 thumbnails, fixed projection."""
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
        "other_attributes": pa.array(labels.other_attributes, COLUMN_TYPES_eval["other_attributes"]),
        "bbox": pa.array([[0.0, 0.0, float(size), float(size)]] * n, COLUMN_TYPES_eval["bbox"]),
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
    write_split(_split(rng, NOISE_ROWS, "n", False, size, 10_000_000), snap / "noise" / "gallery.parquet")
    for s, (subset, (queries, gallery)) in enumerate(SIZES.items()):
        street = "street" in subset
        write_split(_split(rng, queries, "q", street, size, s * 100_000), snap / subset / "query.parquet")
        write_split(_split(rng, gallery, "g", False, size, s * 100_000 + 50_000), snap / subset / "gallery.parquet")
    marker.write_text("done\n")
    return snap


def main_eval() -> None:
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


CATEGORIES_audit = ("dress", "skirt", "top", "pants", "coat", "shoes", "bag", "shirt")


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
            "category": CATEGORIES_audit[i % len(CATEGORIES_audit)],
            "main_attribute": COLOURS[(i // len(CATEGORIES_audit)) % len(COLOURS)],
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


def main_audit() -> None:
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


SUBCOMMANDS = {
    "scoring": main_scoring,
    "eval": main_eval,
    "audit": main_audit,
}


def main() -> None:
    run_subcommand("scale", SUBCOMMANDS)


if __name__ == "__main__":
    main()
