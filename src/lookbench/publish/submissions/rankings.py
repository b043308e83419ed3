"""A bundle's per-query rankings re-scored on the official snapshot: the queries its declared window keeps (each
once, in the evaluator's order), the corpus of its declared noise pool, the snapshot's labels; every number and
count recomputed, nothing taken from the submitter but the ranked rows themselves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lookbench.errors import LookBenchError, SubmissionError
from lookbench.evaluation.noise import NoisePool, corpus_labels, noise_rows
from lookbench.evaluation.plan import Plan
from lookbench.evaluation.runner import EvalSettings
from lookbench.evaluation.summary import summarise_run
from lookbench.evaluation.window import date_window, kept_rows
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.results.per_query import task_table
from lookbench.results.schema import ResultFile, SubsetInfo
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE

SPLITS = ("query", "gallery")


@dataclass(frozen=True)
class Rescored:
    """A result's numbers and per-query table as re-scoring its rankings on the snapshot gives them."""

    result: ResultFile
    per_query: pa.Table


def declared_skipped(snapshot: Snapshot, result: ResultFile, where: str) -> dict[tuple[str, str], set[int]]:
    """The rows the result says it skipped, by (subset, split); each must be a row of a split the run scored."""
    scored = {(s, split) for s in result.snapshot.subsets for split in SPLITS}
    if noise_rows(snapshot, NoisePool(result.config.noise)):
        scored.add((NOISE, "gallery"))
    out: dict[tuple[str, str], set[int]] = {}
    for i, entry in enumerate(result.skipped):
        key, row = (entry.get("subset"), entry.get("split")), entry.get("row")
        if key not in scored or not isinstance(row, int) or isinstance(row, bool):
            raise SubmissionError(f"{where}: field skipped[{i}] is not a row of a split this run scored")
        subset, split = str(key[0]), str(key[1])
        total = snapshot.num_rows(subset, split)
        if not 0 <= row < total:
            raise SubmissionError(f"{where}: field skipped[{i}].row is {row}; {subset}/{split} has {total} rows")
        rows = out.setdefault((subset, split), set())
        if row in rows:
            raise SubmissionError(f"{where}: field skipped[{i}] repeats {subset}/{split} row {row}")
        rows.add(row)
    return out


def _lists(part: pa.Table, name: str, width: int, subset: str, where: str) -> np.ndarray:
    """A list column as a (queries, width) array; a missing column, a null or a ragged row is refused."""
    if name not in part.column_names:
        raise SubmissionError(f"{where}: column {name} is missing")
    column = part[name].combine_chunks() if part.num_rows else pa.array([], pa.list_(pa.int64()))
    if not pa.types.is_list(column.type) and not pa.types.is_large_list(column.type):
        raise SubmissionError(f"{where}: column {name} is {column.type}, not lists")
    values = column.flatten()
    if column.null_count or values.null_count:
        raise SubmissionError(f"{where}: column {name} of {subset} holds nulls")
    if not pa.types.is_integer(values.type) and not pa.types.is_floating(values.type):
        raise SubmissionError(f"{where}: column {name} holds {values.type}, not numbers")
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    ragged = np.flatnonzero(lengths != width)
    if len(ragged):
        row = int(part["query_row"][int(ragged[0])].as_py())
        raise SubmissionError(
            f"{where}: column {name} of {subset} query row {row} holds {lengths[ragged[0]]} entries, the cut-offs "
            f"need {width}"
        )
    try:
        return np.asarray(values.to_numpy(zero_copy_only=False)).reshape(len(lengths), width)
    except (pa.ArrowException, ValueError) as exc:
        raise SubmissionError(f"{where}: column {name} of {subset}: {exc}") from exc


def check_ranking(topk: np.ndarray, excluded: np.ndarray, rows: np.ndarray, subset: str, where: str) -> None:
    """Each ranking lists distinct corpus rows (-1 pads a ranking longer than the corpus), none a skipped one."""
    if not np.issubdtype(topk.dtype, np.integer):
        raise SubmissionError(f"{where}: column topk_rows of {subset} is {topk.dtype}, not row numbers")
    outside = (topk < -1) | (topk >= len(excluded))
    ordered = np.sort(topk, axis=1)
    repeated = np.zeros_like(outside)
    repeated[:, 1:] = (ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)
    skipped = np.zeros_like(outside)
    skipped[~outside] = np.append(excluded, False)[topk[~outside]]
    for problem, what in ((outside, "points outside the corpus"), (repeated, "repeats a corpus row")):
        bad = np.flatnonzero(problem.any(axis=1))
        if len(bad):
            raise SubmissionError(f"{where}: column topk_rows of {subset} query row {rows[bad[0]]} {what}")
    bad = np.flatnonzero(skipped.any(axis=1))
    if len(bad):
        raise SubmissionError(f"{where}: column topk_rows of {subset} query row {rows[bad[0]]} ranks a skipped row")


def rescore_rankings(
    snapshot: Snapshot, result: ResultFile, settings: EvalSettings, per_query: pa.Table, where: str
) -> Rescored:
    """Re-score the per-query file's rankings for the queries the snapshot and the declared window give."""
    declared = settings.ks or ()
    ks = tuple(sorted(set(declared)))
    if not ks or ks[0] < 1:
        raise SubmissionError(f"{where}: field config.ks is {list(declared)}, not positive cut-offs")
    try:
        subsets = snapshot.check_subsets(list(result.snapshot.subsets))
        plan = Plan.of(snapshot, settings)
    except LookBenchError as exc:
        raise SubmissionError(f"{where}: field snapshot.subsets: {exc}") from exc
    composed = set(plan.composed)
    skipped = declared_skipped(snapshot, result, where)
    for name in ("subset", "query_row"):
        if name not in per_query.column_names:
            raise SubmissionError(f"{where}: column {name} is missing")
    names = np.asarray(per_query["subset"].to_pylist(), dtype=object)
    stray = sorted({str(s) for s in names} - set(subsets))
    if stray:
        raise SubmissionError(f"{where}: column subset names {stray[0]!r}, a subset the result does not declare")
    tables, infos, kept, total = [], {}, 0, 0
    for subset in subsets:
        if subset in composed:
            raise SubmissionError(f"{where}: composed subset {subset}: only image subsets are re-scored from rankings")
        labels = snapshot.labels(subset, "query")
        q_skipped = skipped.get((subset, "query"), set())
        rows = kept_rows(labels, q_skipped, plan.since, plan.until, plan.fallback_date)
        total, kept = total + len(labels), kept + len(rows)
        part = per_query.filter(pa.array(names == subset))
        listed = part["query_row"].to_pylist()
        if len(listed) != len(rows) or listed != rows.tolist():
            raise SubmissionError(
                f"{where}: column query_row of {subset} lists {len(listed)} queries, but the snapshot and the "
                f"declared window keep {len(rows)} (each once, in row order)"
            )
        corpus = corpus_labels(snapshot, subset, settings.noise)
        gallery = snapshot.num_rows(subset, "gallery")
        excluded = np.zeros(len(corpus), dtype=bool)
        excluded[list(skipped.get((subset, "gallery"), set()))] = True
        excluded[[gallery + r for r in skipped.get((NOISE, "gallery"), set())]] = True
        infos[subset] = SubsetInfo(
            queries=len(rows),
            gallery=gallery,
            corpus=len(corpus),
            skipped_queries=len(q_skipped),
            skipped_corpus=int(excluded.sum()),
        )
        if not len(rows):
            continue
        topk = _lists(part, "topk_rows", max(ks), subset, where)
        check_ranking(topk, excluded, rows, subset, where)
        scores = _lists(part, "topk_scores", max(ks), subset, where).astype(np.float32)
        queries = labels.take(rows)
        task = score_task(Relevance.build(queries, corpus, gallery, excluded), topk, ks, settings.fine_rule)
        ids = cluster_ids(queries.outfit_key)
        tables.append(task_table(subset, rows, queries, ids, topk, scores, corpus.item_id, task))
    if not tables:
        raise SubmissionError(f"{where}: the declared window keeps no query of the snapshot")
    table, summary = summarise_run(snapshot, pa.concat_tables(tables), plan, settings.bootstrap())
    sizes = result.snapshot.model_copy(update={"noise_rows": plan.noise_rows, "subsets": infos})
    config = result.config.model_copy(update={"window": date_window(settings.since, settings.until, kept, total)})
    return Rescored(result.model_copy(update={**summary.fields(), "snapshot": sizes, "config": config}), table)
