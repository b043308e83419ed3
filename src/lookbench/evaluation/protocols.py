"""Official protocols of the legacy benchmarks as named metric sets, applied by `lookbench eval` from the card.

Each protocol adds `recall@K` per query (the benchmark's own "Recall@K" / "top-k accuracy": a correct item in the
top K) at its own cut-offs, and where the benchmark averages categories without weighting them, an `average` scope.
The LookBench metrics (coarse/fine recall, nDCG, ...) are computed beside them as for every snapshot.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lookbench.errors import SnapshotError
from lookbench.metrics.bootstrap import ClusterSums, percentile_interval, replicate_totals, resample_counts, subset_rng
from lookbench.results.schema import MetricValue
from lookbench.snapshot.reader import Snapshot, reading

RECALL = "recall"
MISSED_COLUMN = "detector_missed"
MATCH_COLUMN = "match_keys"


@dataclass(frozen=True)
class Protocol:
    """A benchmark's official metric set."""

    name: str
    title: str
    ks: tuple[int, ...]
    definition: str
    missed_column: str | None = None
    """A boolean query column: True rows score 0 at every K whatever was retrieved (detector misses)."""
    average_of: tuple[str, ...] = ()
    """Subsets whose unweighted mean is reported under `average`."""
    match_column: str | None = None
    """A list<string> gallery column: a retrieved row is correct when it lists the query's item_ID (a row may answer
    several items); without it, when its item_ID equals the query's."""


INSHOP = Protocol(
    "inshop",
    "DeepFashion In-shop Recall@K",
    (1, 10, 20, 30, 40, 50),
    "a gallery image of the query's item id in the top K",
)

DEEPFASHION2 = Protocol(
    "deepfashion2",
    "DeepFashion2 consumer-to-shop top-k accuracy",
    (1, 5, 10, 15, 20),
    "a shop box in the top K overlapping (IoU >= 0.5) a ground-truth item of the query's pair_id and style "
    "(style > 0) in its image; a query item the detector missed counts as a failure",
    missed_column=MISSED_COLUMN,
    match_column=MATCH_COLUMN,
)

STREET2SHOP = Protocol(
    "street2shop",
    "Street2Shop per-category top-k accuracy",
    (1, 5, 10, 20, 50),
    "a shop photo of the query's product in the top K, searched within the query's category",
)

FASHION200K = Protocol(
    "fashion200k",
    "Fashion200K image retrieval by product, and TIRG's composed protocol",
    (1, 10, 50),
    "image subset: an image of the query's product in the top K; composed subset: an image whose "
    "description equals the target description in the top K (the query image removed)",
)

FASHIONIQ = Protocol(
    "fashioniq",
    "FashionIQ Recall@K per category and their average",
    (10, 50),
    "the target image in the top K of the category's gallery (the candidate image left in the gallery); "
    "average: the unweighted mean of the three categories",
    average_of=("composed_dress", "composed_shirt", "composed_toptee"),
)

FASHION_MNIST = Protocol(
    "fashion-mnist",
    "Fashion-MNIST class-level top-k accuracy",
    (1, 5, 10),
    "a gallery image (first 160 training images per class) of the query's class (first 40 test images per "
    "class) in the top K; item_ID is the class, so Item, Coarse and Fine recall are class-level too",
)

FASHION_MNIST_VALIDATION = Protocol(
    "fashion-mnist-validation",
    "Fashion-MNIST class-level top-k accuracy (validation draw)",
    (1, 5, 10),
    "a gallery image (training images 201-360 per class) of the query's class (training images 161-200 per "
    "class) in the top K: disjoint from the fashion-mnist test protocol, for choosing a recipe",
)

PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (INSHOP, DEEPFASHION2, STREET2SHOP, FASHION200K, FASHIONIQ, FASHION_MNIST, FASHION_MNIST_VALIDATION)
}
"""Each protocol by the name a dataset card records."""


def protocol_of(snapshot: Snapshot) -> Protocol | None:
    """The protocol named by the snapshot's dataset card (None for LookBench snapshots)."""
    if snapshot.card is None or snapshot.card.protocol is None:
        return None
    try:
        return PROTOCOLS[snapshot.card.protocol]
    except KeyError:
        known = ", ".join(PROTOCOLS)
        raise SnapshotError(
            f"{snapshot.root}: DATASET.json names protocol {snapshot.card.protocol!r}; known protocols: {known}"
        ) from None


def first_hits(flags: list[list[bool]]) -> np.ndarray:
    """The 0-based rank of each row's first True flag; a large number where there is none."""
    none = np.iinfo(np.int64).max
    return np.array([next((r for r, f in enumerate(row) if f), none) for row in flags], dtype=np.int64)


def _missed(snapshot: Snapshot, subset: str, column: str) -> np.ndarray:
    parts = []
    for path in snapshot.files(subset, "query"):
        with reading(path):
            schema = pq.read_schema(path)
            if column not in schema.names:
                raise SnapshotError(f"{path}: the protocol needs a boolean column {column!r}")
            values = pq.read_table(path, columns=[column])[column].to_numpy(zero_copy_only=False)
        parts.append(np.asarray([bool(v) for v in values], dtype=bool))
    return np.concatenate(parts)


def _matched(snapshot: Snapshot, subset: str, column: str, part: pa.Table) -> list[list[bool]]:
    """Per query row of `part`, whether each retrieved row lists the query's item_ID in the gallery's `column`."""
    answers: list[frozenset[str]] = []
    for path in snapshot.files(subset, "gallery"):
        with reading(path):
            if column not in pq.read_schema(path).names:
                raise SnapshotError(f"{path}: the protocol needs a list column {column!r}; import the dataset again")
            values = pq.read_table(path, columns=[column])[column].to_pylist()
        answers += [frozenset(v or ()) for v in values]
    items = snapshot.labels(subset, "query").item_id
    return [
        [0 <= r < len(answers) and items[q] in answers[r] for r in topk]
        for q, topk in zip(part["query_row"].to_pylist(), part["topk_rows"].to_pylist(), strict=True)
    ]


def protocol_columns(
    protocol: Protocol, snapshot: Snapshot, per_query: pa.Table, ks: tuple[int, ...], composed_subsets: Collection[str]
) -> pa.Table:
    """The per-query table with the protocol's `recall@K` on the image-subset rows; rows of `composed_subsets` keep
    the `recall@K` the composed task gave them (an explicit target in the top K)."""
    subsets = per_query["subset"].to_numpy(zero_copy_only=False)
    composed = np.array([s in composed_subsets for s in subsets.tolist()], dtype=bool)
    flags = per_query["item"].to_pylist()
    if protocol.match_column is not None:
        for subset in dict.fromkeys(subsets[~composed].tolist()):
            rows = np.flatnonzero(subsets == subset)
            matched = _matched(snapshot, subset, protocol.match_column, per_query.take(pa.array(rows)))
            for row, row_flags in zip(rows.tolist(), matched, strict=True):
                flags[row] = row_flags
    hits = first_hits(flags)
    failed = np.zeros(len(per_query), dtype=bool)
    if protocol.missed_column is not None:
        for subset in dict.fromkeys(subsets[~composed].tolist()):
            mask = subsets == subset
            missed = _missed(snapshot, subset, protocol.missed_column)
            failed[mask] = missed[per_query["query_row"].to_numpy()[mask]]
    for k in ks:
        name = f"{RECALL}@{k}"
        values = ((hits < k) & ~failed).astype(np.float64)
        if composed.any():
            own = per_query[name].to_numpy(zero_copy_only=False).astype(np.float64)
            per_query = per_query.set_column(
                per_query.column_names.index(name), name, pa.array(np.where(composed, own, values))
            )
        else:
            per_query = per_query.append_column(name, pa.array(values))
    return per_query


def average_scope(
    protocol: Protocol, per_query: pa.Table, ks: tuple[int, ...], resamples: int, seed: int, confidence: float
) -> dict[str, MetricValue]:
    """The unweighted mean of `recall@K` over the protocol's categories, with a bootstrap interval.

    Each category is resampled as its own subset is (same generator), and each replicate averages the categories'
    replicate means. Empty when not every category was evaluated.
    """
    subsets = per_query["subset"].to_numpy(zero_copy_only=False)
    if not protocol.average_of or any(not (subsets == s).any() for s in protocol.average_of):
        return {}
    names = [f"{RECALL}@{k}" for k in ks if f"{RECALL}@{k}" in per_query.column_names]
    points, replicates, n = [], [], 0
    for subset in protocol.average_of:
        part = per_query.filter(pa.array(subsets == subset))
        matrix = np.column_stack([part[name].to_numpy(zero_copy_only=False).astype(np.float64) for name in names])
        _, clusters = np.unique(part["cluster"].to_numpy(), return_inverse=True)
        sums = ClusterSums.of(matrix, clusters)
        counts = resample_counts(subset_rng(seed, subset), len(sums.sizes), resamples)
        totals, sizes = replicate_totals(counts, sums)
        points.append(matrix.mean(axis=0))
        replicates.append(totals / np.maximum(sizes, 1)[:, None])
        n += len(matrix)
    point = np.mean(points, axis=0)
    low, high = percentile_interval(np.mean(replicates, axis=0), confidence, point)
    return {
        name: MetricValue(value=float(point[j]), ci_low=float(low[j]), ci_high=float(high[j]), n=n)
        for j, name in enumerate(names)
    }
