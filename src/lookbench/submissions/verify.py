"""Verify a bundle against a snapshot: re-score it (from its embeddings, else from its rankings and the
snapshot's labels), compare every number it declares, and check its training cutoff against the release dates."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.contamination.assess import assess
from lookbench.contamination.flags import Flag
from lookbench.contamination.sources import snapshot_sources
from lookbench.dates import parse_date
from lookbench.embeddings.precomputed import PrecomputedEmbeddings
from lookbench.errors import LookBenchError, SubmissionError
from lookbench.evaluation.plan import build_plan
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.evaluation.summary import summarise_run
from lookbench.metrics.definitions import FineRule
from lookbench.metrics.outfits import cluster_ids
from lookbench.metrics.relevance import Relevance
from lookbench.metrics.scoring import score_task
from lookbench.results.io import load_with_per_query
from lookbench.results.per_query import task_table
from lookbench.results.schema import ResultFile
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import NOISE, is_composed_subset
from lookbench.submissions.bundle import Bundle, check_embedding_files, open_bundle

TOLERANCE = 1e-9
"""Largest difference allowed between a declared and a recomputed value (metrics are fractions in [0, 1])."""


class Status(str, Enum):
    """How far a leaderboard row was checked."""

    VERIFIED = "verified"
    """Re-searched and re-scored from the bundled embeddings: every number matches."""
    RESCORED = "re-scored"
    """The bundled rankings re-scored against the snapshot's labels: every number matches."""
    UNVERIFIED = "unverified"
    """Not checked: a plain result file, or a bundle whose snapshot is not at hand."""


@dataclass(frozen=True)
class Verification:
    """The outcome of a successful verification."""

    status: Status
    numbers: int
    """How many declared numbers were compared."""
    flags: list[Flag]
    """Contamination flags from the card's training cutoff and data against the snapshot's dates and sources."""


def settings_of(result: ResultFile) -> EvalSettings:
    """The evaluation settings a result declares (exact search: verification never trusts an approximate index)."""
    config = result.config
    window = config.window
    return EvalSettings(
        subsets=list(result.snapshot.subsets),
        ks=tuple(config.ks),
        fine_rule=FineRule(config.fine_rule),
        resamples=config.bootstrap.resamples,
        seed=config.bootstrap.seed,
        confidence=config.bootstrap.confidence,
        since=None if window is None else parse_date(window.since, "config.window.since"),
        until=None if window is None else parse_date(window.until, "config.window.until"),
    )


def declared_numbers(result: ResultFile) -> Iterator[tuple[str, float]]:
    """Every number a result declares about its scores and sizes, as (field path, value)."""

    def walk(prefix: str, value: Any) -> Iterator[tuple[str, float]]:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from walk(f"{prefix}.{key}", item)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield prefix, float(value)

    dumped = result.model_dump(include={"metrics", "per_category", "breakdowns"})
    dumped["snapshot"] = result.snapshot.model_dump(include={"noise_rows", "subsets"})
    for name, part in dumped.items():
        yield from walk(name, part)


def compare_numbers(declared: ResultFile, recomputed: ResultFile, where: str, how: str) -> int:
    """Raise naming the first field whose declared value differs from the recomputed one; return the count."""
    mine = dict(declared_numbers(declared))
    theirs = dict(declared_numbers(recomputed))
    for field in sorted(mine.keys() | theirs.keys()):
        if field not in theirs:
            raise SubmissionError(f"{where}: field {field} is declared but {how} gives no such value")
        if field not in mine:
            raise SubmissionError(f"{where}: field {field} is missing; {how} gives {theirs[field]!r}")
        if not math.isclose(mine[field], theirs[field], rel_tol=0.0, abs_tol=TOLERANCE):
            raise SubmissionError(f"{where}: field {field} is {mine[field]!r} but {how} gives {theirs[field]!r}")
    return len(mine)


def _excluded(result: ResultFile, subset: str, gallery_rows: int, corpus_rows: int) -> np.ndarray:
    """Corpus rows the run skipped (undecodable images): they were never ranked."""
    excluded = np.zeros(corpus_rows, dtype=bool)
    for entry in result.skipped:
        if entry.get("split") != "gallery":
            continue
        if entry.get("subset") == subset:
            excluded[int(entry["row"])] = True
        elif entry.get("subset") == NOISE:
            excluded[gallery_rows + int(entry["row"])] = True
    return excluded


def rescore_rankings(snapshot: Snapshot, result: ResultFile, per_query: pa.Table, where: str) -> ResultFile:
    """The result recomputed from the per-query file's rankings and the snapshot's labels."""
    settings = settings_of(result)
    plan = build_plan(snapshot, settings)
    ks = plan.ks
    subsets = per_query["subset"].to_numpy(zero_copy_only=False)
    tables = []
    for subset in dict.fromkeys(subsets.tolist()):
        if is_composed_subset(subset):
            raise SubmissionError(f"{where}: composed subset {subset}: only image subsets are re-scored from rankings")
        part = per_query.filter(pa.array(subsets == subset))
        rows = part["query_row"].to_numpy()
        labels = snapshot.labels(subset, "query")
        if len(rows) and (rows.min() < 0 or rows.max() >= len(labels)):
            raise SubmissionError(f"{where}: column query_row of {subset} points outside the snapshot's queries")
        queries = labels.take(rows)
        corpus = snapshot.corpus_labels(subset)
        gallery_rows = snapshot.num_rows(subset, "gallery")
        topk = np.asarray(part["topk_rows"].to_pylist(), dtype=np.int64).reshape(len(rows), -1)
        if topk.size and topk.max() >= len(corpus):
            raise SubmissionError(f"{where}: column topk_rows of {subset} points outside the snapshot's corpus")
        scores = np.asarray(part["topk_scores"].to_pylist(), dtype=np.float32).reshape(topk.shape)
        relevance = Relevance.build(queries, corpus, gallery_rows, _excluded(result, subset, gallery_rows, len(corpus)))
        try:
            task = score_task(relevance, topk, ks, settings.fine_rule)
        except ValueError as exc:
            raise SubmissionError(f"{where}: column topk_rows of {subset}: {exc}") from exc
        table = task_table(subset, rows, queries, cluster_ids(queries.outfit_key), topk, scores, corpus.item_id, task)
        if table["topk_item_ids"].to_pylist() != part["topk_item_ids"].to_pylist():
            raise SubmissionError(f"{where}: column topk_item_ids of {subset} does not match the snapshot's item ids")
        tables.append(table)
    _, (metrics, categories, breakdowns) = summarise_run(snapshot, pa.concat_tables(tables), plan, settings.bootstrap())
    return result.model_copy(update={"metrics": metrics, "per_category": categories, "breakdowns": breakdowns})


def rescore_embeddings(snapshot: Snapshot, bundle: Bundle) -> ResultFile:
    """The result recomputed from the bundled embeddings: exact search, the declared settings."""
    assert bundle.embeddings is not None
    check_embedding_files(bundle.embeddings, bundle.result, bundle.result_path)
    try:
        return evaluate(snapshot, PrecomputedEmbeddings(bundle.embeddings), settings_of(bundle.result)).result
    except LookBenchError as exc:
        raise SubmissionError(f"{bundle.embeddings}: re-scoring failed: {exc}") from exc


def check_snapshot(snapshot: Snapshot, result: ResultFile, where: str) -> None:
    """The snapshot must be the one the result declares, by content hash."""
    if snapshot.content_hash != result.snapshot.content_hash:
        raise SubmissionError(
            f"{where}: field snapshot.content_hash is {result.snapshot.content_hash[:16]}..., but snapshot "
            f"{snapshot.root} has {snapshot.content_hash[:16]}... (a different snapshot)"
        )


def verify_bundle(bundle_root: Path, snapshot: Snapshot) -> Verification:
    """Verify a bundle: its files, its snapshot, every declared number, and its dates against the snapshot's."""
    bundle = open_bundle(bundle_root)
    where = str(bundle.result_path)
    check_snapshot(snapshot, bundle.result, where)
    result, per_query = load_with_per_query(bundle.result_path)
    assert per_query is not None
    from_rankings = rescore_rankings(snapshot, result, per_query, where)
    numbers = compare_numbers(result, from_rankings, where, "re-scoring its rankings against the labels")
    status = Status.RESCORED
    if bundle.embeddings is not None:
        compare_numbers(result, rescore_embeddings(snapshot, bundle), where, "re-scoring the bundled embeddings")
        status = Status.VERIFIED
    return Verification(status, numbers, assess(result, per_query, snapshot_sources(snapshot)))
