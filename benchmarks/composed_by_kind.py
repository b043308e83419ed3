"""A composed run's metric by kind of query (docs/composed.md), from its per-query table and the composed queries.

The kinds `lookbench composed derive` makes on a Synth snapshot, told apart by reference and target: a photo
reference (the query's studio shot or street crop; `shot` unset) with a catalogue variant as target (one change, or
two where a bag's style also changes its strap), a catalogue reference (`shot` set) to another variant, and a photo
reference to a design re-rendered with two groups changed (its target is in no image subset's gallery). Each value
is the mean over the kind's queries with a 95% bootstrap interval (1,000 resamples of the run's own clusters, as
`lookbench eval` draws them); with two runs, also the paired difference A - B per kind (as `lookbench compare`).

    python benchmarks/composed_by_kind.py SNAPSHOT A.json [B.json] [--metric recall@10]     # SNAPSHOT: vYYYYMMDD
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from measure import results_file

from lookbench.metrics.bootstrap import (
    ClusterSums,
    paired_bootstrap,
    percentile_interval,
    replicate_totals,
    resample_counts,
)
from lookbench.snapshot.schema import COMPOSED, SUBSETS

KINDS = (
    "photo reference, one change",
    "photo reference, two changes (bag style and strap)",
    "catalogue reference, two changes",
    "photo reference, re-rendered target, two changes",
)
RESAMPLES = 1000


def query_kinds(snapshot: Path) -> np.ndarray:
    """(Q,) index into KINDS of every row of the snapshot's composed/query.parquet."""
    catalogue: set[str] = set()
    for subset in SUBSETS:
        if (snapshot / subset / "gallery.parquet").is_file():
            catalogue |= set(
                pq.read_table(snapshot / subset / "gallery.parquet", columns=["item_ID"])["item_ID"].to_pylist()
            )
    table = pq.read_table(snapshot / COMPOSED / "query.parquet", columns=["shot", "changes", "target_ids"])
    kinds = []
    for row in table.to_pylist():
        if row["shot"] is not None:
            kinds.append(2)
        elif row["target_ids"][0] not in catalogue:
            kinds.append(3)
        else:
            kinds.append(0 if len(row["changes"]) == 1 else 1)
    return np.asarray(kinds)


def per_query(result: Path, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """(query rows, values, dense clusters, run title) of a result's composed per-query table."""
    meta = json.loads(result.read_text())
    table = pq.read_table(result.parent / meta["per_query_file"], columns=["query_row", "cluster", metric])
    _, clusters = np.unique(table["cluster"].to_numpy(), return_inverse=True)
    return table["query_row"].to_numpy(), table[metric].to_numpy().astype(float), clusters, meta["model"]["name"]


def mean_interval(values: np.ndarray, clusters: np.ndarray, seed: int) -> tuple[float, float, float]:
    """Mean with a 95% cluster-bootstrap percentile interval."""
    _, dense = np.unique(clusters, return_inverse=True)
    sums = ClusterSums.of(values[:, None], dense)
    totals, sizes = replicate_totals(resample_counts(np.random.default_rng(seed), len(sums.sizes), RESAMPLES), sums)
    point = np.asarray([values.mean()])
    low, high = percentile_interval(totals / np.maximum(sizes, 1)[:, None], 0.95, point)
    return float(point[0]), float(low[0]), float(high[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", type=Path, help="the derived snapshot's vYYYYMMDD folder")
    parser.add_argument("results", type=Path, nargs="+", help="one or two result JSON files (A, then B)")
    parser.add_argument("--metric", default="recall@10")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    kinds = query_kinds(args.snapshot)
    runs = [per_query(result, args.metric) for result in args.results[:2]]
    header = ["run", *(f"{kind} ({int((kinds == k).sum())})" for k, kind in enumerate(KINDS))]
    print(f"{args.metric}, percent")
    print("| " + " | ".join(header) + " |\n| " + " | ".join("---" for _ in header) + " |")
    for rows, values, clusters, title in runs:
        cells = []
        for k in range(len(KINDS)):
            mask = kinds[rows] == k
            mean, low, high = mean_interval(values[mask], clusters[mask], args.seed)
            cells.append(f"{100 * mean:.2f} [{100 * low:.2f}, {100 * high:.2f}]")
        print(f"| {title} | " + " | ".join(cells) + " |")
    if len(runs) == 2:
        (rows_a, a, clusters, title_a), (rows_b, b, _, title_b) = runs
        if not np.array_equal(rows_a, rows_b):
            raise SystemExit("the two runs scored different queries")
        cells = []
        for k in range(len(KINDS)):
            mask = kinds[rows_a] == k
            test = paired_bootstrap(a[mask], b[mask], clusters[mask], args.metric, RESAMPLES, args.seed)
            cells.append(f"{100 * test.diff:+.2f} [{100 * test.ci_low:+.2f}, {100 * test.ci_high:+.2f}]")
        print(f"| {title_a} - {title_b} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    with results_file("composed_by_kind"):
        main()
