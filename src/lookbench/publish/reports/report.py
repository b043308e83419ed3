"""Write the self-contained visual retrieval report of one run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from lookbench._util.atomic import write_text_atomic
from lookbench._util.limits import MAX_SAMPLE, check_count
from lookbench.errors import ResultError, SnapshotError
from lookbench.evaluation.contamination.assess import assess
from lookbench.evaluation.contamination.tables import load_with_per_query
from lookbench.metrics.aggregate import AVERAGE, COMPOSED_OVERALL, OVERALL
from lookbench.publish.reports.images import ImageTable
from lookbench.publish.reports.labels import metric_title, run_title, run_window, shown_location
from lookbench.publish.reports.render import render
from lookbench.publish.reports.retrieval import (
    ACROSS,
    RECURS,
    SAMPLES,
    confusions,
    half,
    query_anchor,
    query_cards,
    select_samples,
)
from lookbench.publish.reports.throughput import throughput_text
from lookbench.results.audit_io import snapshot_audit
from lookbench.results.schema import ResultFile
from lookbench.results.tables import composed_scopes, ordered_scopes
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.schema import SUBSET_TITLES

IMAGE_SUMMARY = ("fine_recall@1", "coarse_recall@1", "ndcg@5")
COMPOSED_SUMMARY = ("recall@1", "recall@{k}", "map@{k}", "fine_recall@{k}", "hard_negative@{k}")
"""The summary's columns; a composed table's K is 10 where the run has it, else its largest cut-off."""


@dataclass(frozen=True)
class Summary:
    """One table of the page's header: image scopes or composed scopes, with their columns."""

    kind: str
    keys: tuple[str, ...]
    scopes: list[str]


def summaries(result: ResultFile) -> list[Summary]:
    """The image scopes' table (Fine/Coarse Recall@1, nDCG@5) and the composed scopes' (Recall, mAP, Fine Recall,
    hard negatives)."""
    scopes = ordered_scopes(result.metrics)
    composed = [s for s in scopes if s in (*composed_scopes(scopes), COMPOSED_OVERALL)]
    images = [s for s in scopes if s not in composed and s != AVERAGE]
    out = [Summary("image", IMAGE_SUMMARY, images)] if images else []
    if composed:
        ks = sorted({int(m.split("@")[1]) for s in composed for m in result.metrics[s] if m.startswith("recall@")})
        k = 10 if 10 in ks else ks[-1]
        keys = tuple(dict.fromkeys(key.format(k=k) for key in COMPOSED_SUMMARY))
        out.append(Summary("composed", keys, composed))
    return out


def _check_rows_exist(snapshot: Snapshot, per_query: pa.Table, location: str) -> None:
    """A changed snapshot must still hold every query and ranked row the run names, or the page would lie."""
    subsets = per_query["subset"].to_pylist()
    for subset in dict.fromkeys(subsets):
        part = per_query.filter(pa.array([s == subset for s in subsets]))
        wanted = max(part["query_row"].to_pylist(), default=-1)
        ranked = max((r for rows in part["topk_rows"].to_pylist() for r in rows or ()), default=-1)
        try:
            queries, corpus = snapshot.num_rows(subset, "query"), len(snapshot.corpus_labels(subset))
        except SnapshotError as exc:
            raise SnapshotError(f"--snapshot {location}: not the evaluated snapshot ({exc})") from exc
        if wanted >= queries or ranked >= corpus:
            raise SnapshotError(
                f"--snapshot {location}: {subset} has {queries} query and {corpus} corpus rows, the run names query "
                f"row {wanted} and corpus row {ranked}: not the evaluated snapshot (its content hash differs)"
            )


def build_report(
    result_path: Path,
    out: Path,
    chosen: list[tuple[str, int]] | None = None,
    per_subset: int = 12,
    per_category: int = 2,
    snapshot_path: str | None = None,
    audit_path: Path | None = None,
    board: str | None = None,
) -> Path:
    """Render `out/index.html` for one run and return its path.

    The snapshot is read from `snapshot_path` when given (it moved since the run), else from where the run
    found it; a snapshot whose content differs from the evaluated one is reported on the page. The source audit
    (docs/audit.md) is `audit_path`, else the snapshot's own `AUDIT.json` when it has one; `board` is a link back
    to the leaderboard.
    """
    check_count("--per-subset", per_subset, MAX_SAMPLE, low=1)
    check_count("--per-category", per_category, MAX_SAMPLE, low=1)
    result, per_query = load_with_per_query(result_path)
    if per_query is None:
        raise ResultError(f"{result_path}: the report needs the run's per-query file")
    location = snapshot_path or result.snapshot.location
    try:
        snapshot = open_snapshot(location)
    except SnapshotError as exc:
        hint = "" if snapshot_path else "; if it moved, pass --snapshot PATH"
        raise SnapshotError(f"{result_path}: the report needs the run's snapshot for its images ({exc}){hint}") from exc
    note = None
    if snapshot.content_hash != result.snapshot.content_hash:
        note = f"the snapshot at {location} differs from the one evaluated (content hash changed)"
    if note is not None:
        _check_rows_exist(snapshot, per_query, location)
    audit = snapshot_audit(snapshot.root, audit_path)
    if audit is not None and audit.snapshot.content_hash != result.snapshot.content_hash:
        note = (note + "; " if note else "") + f"the source audit describes another snapshot ({audit.snapshot.name})"
    found = confusions(snapshot, per_query)
    samples = select_samples(per_query, chosen, per_subset, per_category)
    rows = [i for members in samples.values() for i in members]
    examples = [i for groups in found.values() for group in groups for c in group.rows for i in c.examples]
    indices = list(dict.fromkeys(rows + examples))
    images = ImageTable()
    cards = query_cards(snapshot, per_query, indices, images)
    by_index = dict(zip(indices, cards, strict=True))
    for name, members in samples.items():
        for i in members:
            by_index[i].samples.append(name)
    for groups in found.values():
        for group in groups:
            for confusion in group.rows:
                for i in confusion.examples:
                    by_index[i].confused.append(confusion.key)
    subsets = per_query["subset"].to_pylist()
    query_rows = per_query["query_row"].to_pylist()
    page = render(
        "report.html",
        label=run_title(result),
        window=run_window(result),
        across=ACROSS,
        result=result,
        flags=assess(result, per_query),
        throughput=throughput_text(result),
        cards=cards,
        sampled=len(dict.fromkeys(rows)),
        samples={name: len(members) for name, members in samples.items()},
        sample_rules={
            name: rule.format(per_subset=per_subset, per_category=per_category, half=half(per_subset))
            for name, rule in SAMPLES.items()
        },
        recurs=RECURS,
        confusions=found,
        anchor=lambda i: query_anchor(subsets[i], query_rows[i]),
        row_of=lambda i: query_rows[i],
        titles={**SUBSET_TITLES, OVERALL: "Overall", COMPOSED_OVERALL: "Composed overall"},
        summaries=summaries(result),
        metric_title=metric_title,
        composed=any(c.text is not None for c in cards),
        categories=sorted({c.category for c in cards}),
        subsets=list(dict.fromkeys(c.subset for c in cards)),
        images=images.by_id(),
        note=note,
        location=shown_location(location),
        audit=audit,
        board=board,
    )
    write_text_atomic(out / "index.html", page)
    return out / "index.html"
