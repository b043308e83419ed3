"""Scoring speed at the real LookBench scale: exact search + every metric + bootstrap CIs, vs a per-query full sort.

Sizes are those of the released snapshot v20251201 (queries 1011/193/981/160, galleries 3951/979/3278/571,
58,275 noise rows), with 1024-d float32 embeddings. Embedding time is excluded: this measures scoring alone.

    python benchmarks/scoring_speed.py [--dim 1024] [--baseline-queries 2345]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from lookbench.metrics.aggregate import summarise
from lookbench.metrics.definitions import DEFAULT_KS, FineRule
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.results.per_query import subset_values, task_table
from lookbench.search.exact import ExactSearch
from lookbench.snapshot.labels import SplitLabels

SIZES = {
    "real_studio_flat": (1011, 3951),
    "aigen_studio": (193, 979),
    "real_streetlook": (981, 3278),
    "aigen_streetlook": (160, 571),
}
NOISE = 58_275
CATEGORIES = [f"cat{i}" for i in range(27)]
ATTRIBUTES = [f"attr{i}" for i in range(120)]


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--baseline-queries", type=int, default=2345, help="queries timed for the baseline")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    noise_labels = fake_labels(rng, NOISE, "n", False)
    noise = unit(rng, NOISE, args.dim)
    data = {}
    for subset, (nq, ng) in SIZES.items():
        street = "street" in subset
        gallery = unit(rng, ng, args.dim)
        queries = unit(rng, nq, args.dim) * 0.5 + gallery[rng.integers(0, ng, nq)] * 0.5
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        data[subset] = (
            fake_labels(rng, nq, "q", street),
            SplitLabels.concat([fake_labels(rng, ng, "g", False), noise_labels]),
            queries,
            np.concatenate([gallery, noise]),
            ng,
        )

    backend = ExactSearch()
    t0 = time.perf_counter()
    tables = []
    for subset, (q_labels, c_labels, q, c, ng) in data.items():
        found = backend.search(q, c, max(DEFAULT_KS))
        rel = Relevance.build(q_labels, c_labels, ng)
        scores = score_task(rel, found.indices, DEFAULT_KS, FineRule.MAIN)
        rows = np.arange(len(q))
        tables.append(
            task_table(
                subset,
                rows,
                q_labels,
                cluster_ids(q_labels.outfit_key),
                found.indices,
                found.scores,
                c_labels.item_id,
                scores,
            )
        )
    search_and_metrics = time.perf_counter() - t0
    summarise(subset_values(pa.concat_tables(tables)), resamples=args.resamples)
    ours = time.perf_counter() - t0
    total_queries = sum(nq for nq, _ in SIZES.values())
    print(f"queries={total_queries} corpus={[ng + NOISE for _, ng in SIZES.values()]} dim={args.dim}")
    print(f"lookbench: search+metrics {search_and_metrics:.2f}s, with {args.resamples}-resample CIs {ours:.2f}s")

    budget = args.baseline_queries
    t0 = time.perf_counter()
    done = 0
    for q_labels, c_labels, q, c, ng in data.values():
        take = min(len(q), budget - done)
        if take <= 0:
            break
        baseline(q[:take], c, Relevance.build(q_labels, c_labels, ng), DEFAULT_KS)
        done += take
    base = (time.perf_counter() - t0) * total_queries / done
    note = "" if done == total_queries else f" (timed on {done} queries, scaled to {total_queries})"
    print(f"authors' loop, full argsort per query, K and metric family: {base:.2f}s{note}")
    print(f"speed-up: {base / ours:.1f}x")


if __name__ == "__main__":
    main()
