"""Verify a bundle against the official snapshot: recompute its rankings from the bundled embeddings with the real
evaluator (the snapshot's queries and labels, the declared window and noise pool), compare every declared number,
count and per-query column with them, and check its training cutoff against the release dates."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from lookbench._util.dates import parse_date
from lookbench.embeddings.precomputed import PrecomputedEmbeddings
from lookbench.errors import LookBenchError, SubmissionError
from lookbench.evaluation.contamination.assess import assess
from lookbench.evaluation.contamination.flags import Flag
from lookbench.evaluation.contamination.sources import snapshot_sources
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalOutput, EvalSettings, evaluate
from lookbench.metrics.definitions import FineRule
from lookbench.publish.submissions.agreement import SCORE_TOLERANCE, compare_numbers, compare_tables
from lookbench.publish.submissions.bundle import Bundle, check_embedding_files, open_bundle
from lookbench.publish.submissions.rankings import rescore_rankings
from lookbench.results.io import load_with_per_query, per_query_path
from lookbench.results.schema import ResultFile
from lookbench.snapshot.reader import Snapshot


class Status(str, Enum):
    """How far a leaderboard row was checked."""

    VERIFIED = "verified"
    """Re-searched and re-scored from the bundled embeddings by the evaluator: every number and column matches."""
    UNVERIFIED = "unverified"
    """Not recomputed: a plain result file, a bundle whose snapshot is not at hand, or one without embeddings (its
    rankings are checked against the snapshot, but they are the submitter's own)."""


@dataclass(frozen=True)
class Verification:
    """The outcome of a successful verification."""

    status: Status
    note: str
    """What was recomputed, for the leaderboard's badge."""
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
        noise=NoisePool(config.noise),
    )


def rescore_embeddings(snapshot: Snapshot, bundle: Bundle) -> EvalOutput:
    """The run recomputed from the bundled embeddings: exact search, the declared settings."""
    assert bundle.embeddings is not None
    check_embedding_files(bundle.embeddings, bundle.result, bundle.result_path)
    try:
        return evaluate(snapshot, PrecomputedEmbeddings(bundle.embeddings), settings_of(bundle.result))
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
    """Verify a bundle: its files, its snapshot, every declared number and per-query column against a
    recomputation, and its dates against the snapshot's."""
    bundle = open_bundle(bundle_root)
    where = str(bundle.result_path)
    check_snapshot(snapshot, bundle.result, where)
    result, per_query = load_with_per_query(bundle.result_path)
    assert per_query is not None
    table_where = str(per_query_path(bundle.result_path, result))
    if bundle.embeddings is None:
        how = "re-scoring its rankings on the snapshot"
        rescored = rescore_rankings(snapshot, result, settings_of(result), per_query, table_where)
        compare_tables(per_query, rescored.per_query, table_where, how, 0.0)
        numbers = compare_numbers(result, rescored.result, where, how)
        status, note = Status.UNVERIFIED, f"{numbers} numbers match, re-scored from its own rankings (no embeddings)"
    else:
        how = "re-searching the bundled embeddings"
        output = rescore_embeddings(snapshot, bundle)
        compare_tables(per_query, output.per_query, table_where, how, SCORE_TOLERANCE)
        numbers = compare_numbers(result, output.result, where, how)
        if result.skipped != output.result.skipped:
            raise SubmissionError(f"{where}: field skipped lists rows that {how} does not skip")
        status, note = Status.VERIFIED, f"{numbers} numbers match, recomputed from its embeddings"
    return Verification(status, note, numbers, assess(result, per_query, snapshot_sources(snapshot)))
