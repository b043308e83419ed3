"""The per-query result table: rankings, match flags and metric values, so any breakdown can be recomputed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lookbench._util.arrow import from_numpy, rows_of, strings, timestamps, to_numpy
from lookbench._util.atomic import atomic_path
from lookbench._util.hashing import file_sha256, sha256_hex
from lookbench.errors import ResultError
from lookbench.metrics.aggregate import SubsetValues
from lookbench.metrics.outfits import outfit_recall
from lookbench.metrics.scoring import TaskScores
from lookbench.results.tables import ordered_scopes
from lookbench.snapshot.labels import SplitLabels
from lookbench.snapshot.schema import STREETLOOK_SUBSETS

FIXED_COLUMNS = ("subset", "query_row", "query_item_id", "category", "cluster", "outfit_key", "first_seen_at")


def task_table(
    subset: str,
    query_rows: np.ndarray,
    queries: SplitLabels,
    clusters: np.ndarray,
    topk: np.ndarray,
    scores: np.ndarray,
    corpus_item_ids: list[str],
    task: TaskScores,
) -> pa.Table:
    """One subset's per-query rows; `queries` are the labels of the kept queries, in `query_rows` order."""
    n = len(query_rows)
    k = topk.shape[1]
    ids = np.asarray(corpus_item_ids + [""], dtype=object)[np.where(topk >= 0, topk, len(corpus_item_ids))]
    dates = queries.first_seen_at if queries.first_seen_at is not None else np.full(n, np.datetime64("NaT"), "M8[us]")

    def lists(values: pa.Array) -> pa.Array:
        return pa.ListArray.from_arrays(from_numpy(np.arange(0, n * k + 1, k, dtype=np.int32)), values)

    columns: dict[str, pa.Array] = {
        "subset": strings([subset] * n),
        "query_row": from_numpy(query_rows.astype(np.int64)),
        "query_item_id": strings(queries.item_id),
        "category": strings(queries.category),
        "cluster": from_numpy(clusters.astype(np.int64)),
        "outfit_key": strings(queries.outfit_key),
        "first_seen_at": timestamps(dates, "UTC"),
        "topk_rows": lists(from_numpy(topk.astype(np.int64).reshape(-1))),
        "topk_item_ids": lists(strings(ids.reshape(-1).tolist())),
        "topk_scores": lists(from_numpy(scores.astype(np.float32).reshape(-1))),
        "fine": lists(from_numpy(task.fine.reshape(-1))),
        "coarse": lists(from_numpy(task.coarse.reshape(-1))),
        "item": lists(from_numpy(task.item.reshape(-1))),
        "gain": lists(from_numpy(task.gains.astype(np.float32).reshape(-1))),
    }
    for name, values in task.values.items():
        columns[name] = from_numpy(values.astype(np.float64))
    return pa.table(columns)


def metric_columns(table: pa.Table) -> list[str]:
    """The per-query metric columns of a table, in stored order."""
    return [c for c in table.column_names if "@" in c]


def subset_values(table: pa.Table) -> list[SubsetValues]:
    """Rebuild the inputs of `summarise` from a (possibly filtered) per-query table, subsets in canonical order.

    A subset's metrics are the metric columns it fills (composed subsets fill other columns than image subsets).
    """
    names = metric_columns(table)
    out = []
    subsets = np.array(table["subset"].to_pylist(), dtype=object)
    present = list(dict.fromkeys(subsets.tolist()))
    for subset in ordered_scopes(present):  # legacy subsets in table order, composed ones by name
        part = rows_of(table, subsets == subset)
        values = {name: to_numpy(part[name]) for name in names if part[name].null_count == 0}
        _, clusters = np.unique(to_numpy(part["cluster"]), return_inverse=True)
        outfit = None
        if subset in STREETLOOK_SUBSETS:
            fine_at_1 = np.array([flags[0] if flags else False for flags in part["fine"].to_pylist()], dtype=float)
            outfit = outfit_recall(fine_at_1, clusters)
        out.append(
            SubsetValues(
                name=subset,
                values=values,
                clusters=clusters,
                categories=part["category"].to_pylist(),
                outfit_values=outfit,
            )
        )
    return out


def write_per_query(table: pa.Table, path: Path) -> str:
    """Atomically write the per-query table as parquet; return the written file's sha256."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
        digest = file_sha256(tmp)
    return digest


def read_per_query(path: Path, sha256: str | None = None, result_path: Path | None = None) -> pa.Table:
    """Read a per-query table, checking its sha256 (when the result recorded one) and its fixed columns."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ResultError(f"per-query file not found: {path}") from exc
    except OSError as exc:
        raise ResultError(f"{path}: cannot read the per-query file ({exc})") from exc
    if sha256 is not None and sha256_hex(data) != sha256:
        raise ResultError(
            f"{path}: the per-query file is not the one {result_path or 'its result'} was written with "
            "(sha256 differs; another run replaced one of the pair); re-run the evaluation"
        )
    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception as exc:
        raise ResultError(f"{path}: not a readable parquet file ({exc})") from exc
    missing = [c for c in FIXED_COLUMNS if c not in table.column_names]
    if missing:
        raise ResultError(f"{path}: missing per-query column(s) {', '.join(missing)}")
    return table
