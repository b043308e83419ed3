"""Write the self-contained visual retrieval report of one run."""

from __future__ import annotations

from pathlib import Path

from lookbench.atomic import write_text_atomic
from lookbench.contamination.assess import assess
from lookbench.contamination.tables import load_with_per_query
from lookbench.errors import ResultError, SnapshotError
from lookbench.reports.images import ImageTable
from lookbench.reports.labels import run_title, window_text
from lookbench.reports.render import render
from lookbench.reports.retrieval import ACROSS, confusions, query_anchor, query_cards, select_rows
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import SUBSET_TITLES


def build_report(
    result_path: Path,
    out: Path,
    chosen: list[tuple[str, int]] | None = None,
    per_subset: int = 12,
    per_category: int = 2,
    snapshot_path: str | None = None,
) -> Path:
    """Render `out/index.html` for one run and return its path.

    The snapshot is read from `snapshot_path` when given (it moved since the run), else from where the run
    found it; a snapshot whose content differs from the evaluated one is reported on the page.
    """
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
    found = confusions(snapshot, per_query)
    rows = select_rows(per_query, chosen, per_subset, per_category)
    examples = [i for groups in found.values() for group in groups for c in group.rows for i in c.examples]
    indices = list(dict.fromkeys(rows + examples))
    images = ImageTable()
    cards = query_cards(snapshot, per_query, indices, images)
    by_index = dict(zip(indices, cards, strict=True))
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
        window=window_text(result.config.window),
        across=ACROSS,
        result=result,
        flags=assess(result, per_query),
        cards=cards,
        sampled=len(dict.fromkeys(rows)),
        confusions=found,
        anchor=lambda i: query_anchor(subsets[i], query_rows[i]),
        row_of=lambda i: query_rows[i],
        titles=SUBSET_TITLES,
        categories=sorted({c.category for c in cards}),
        subsets=list(dict.fromkeys(c.subset for c in cards)),
        images=images.by_id(),
        note=note,
        location=location,
    )
    write_text_atomic(out / "index.html", page)
    return out / "index.html"
