"""Scoring speed at the real LookBench scale: search + every metric + bootstrap CIs, and the whole `lookbench eval`.

Sizes are those of the released snapshot v20251201 (queries 1011/193/981/160, galleries 3951/979/3278/571,
58,275 noise rows), with 1024-d float32 embeddings. Embedding time is excluded.

    python benchmarks/scoring_speed.py [--search exact|torch|faiss:hnsw] [--baseline-queries 0] [--eval]

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
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from measure import Timed, lookbench, timed_process
from PIL import Image
from threadpoolctl import threadpool_limits

from lookbench.metrics.aggregate import summarise
from lookbench.metrics.definitions import DEFAULT_KS, FineRule
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.results.per_query import subset_values, task_table
from lookbench.search import make_backend
from lookbench.search.backend import SearchBackend
from lookbench.search.exact import ExactSearch
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.schema import IMAGE_TYPE, OPTIONAL_COLUMNS, REQUIRED_COLUMNS
from lookbench.snapshot.writer import write_split

COLUMN_TYPES = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}
SIZES = {
    "real_studio_flat": (1011, 3951),
    "aigen_studio": (193, 979),
    "real_streetlook": (981, 3278),
    "aigen_streetlook": (160, 571),
}
NOISE = 58_275
CATEGORIES = [f"cat{i}" for i in range(27)]
ATTRIBUTES = [f"attr{i}" for i in range(120)]
Task = tuple[SplitLabels, SplitLabels, np.ndarray, np.ndarray, np.ndarray, int]


def fake_labels(rng: np.random.Generator, n: int, prefix: str, outfits: bool) -> SplitLabels:
    """Random labels with the real label shapes."""
    cats = rng.integers(0, len(CATEGORIES), n)
    attrs = rng.integers(0, len(ATTRIBUTES), (n, 5))
    return SplitLabels(
        category=[CATEGORIES[c] for c in cats],
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
    noise_labels = fake_labels(rng, NOISE, "n", False)
    noise = unit(rng, NOISE, dim)
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
        "other_attributes": pa.array(labels.other_attributes, COLUMN_TYPES["other_attributes"]),
        "bbox": pa.array([[0.0, 0.0, 1.0, 1.0]] * n, COLUMN_TYPES["bbox"]),
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


def main() -> None:
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
        "corpora": [ng + NOISE for _, ng in SIZES.values()],
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


if __name__ == "__main__":
    main()
