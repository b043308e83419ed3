"""Write the self-contained visual retrieval report of one run."""

from __future__ import annotations

from pathlib import Path

from lookbench.atomic import write_text_atomic
from lookbench.contamination.assess import assess
from lookbench.contamination.tables import load_with_per_query
from lookbench.errors import ResultError, SnapshotError
from lookbench.reports.render import render
from lookbench.reports.retrieval import confusions, query_cards, select_rows
from lookbench.results.tables import run_label
from lookbench.snapshot import open_snapshot
from lookbench.snapshot.schema import SUBSET_TITLES


def build_report(
    result_path: Path,
    out: Path,
    chosen: list[tuple[str, int]] | None = None,
    per_subset: int = 12,
    per_category: int = 2,
) -> Path:
    """Render `out/index.html` for one run and return its path."""
    result, per_query = load_with_per_query(result_path)
    if per_query is None:
        raise ResultError(f"{result_path}: the report needs the run's per-query file")
    try:
        snapshot = open_snapshot(result.snapshot.location)
    except SnapshotError as exc:
        raise SnapshotError(f"{result_path}: the report needs the run's snapshot for its images ({exc})") from exc
    note = None
    if snapshot.content_hash != result.snapshot.content_hash:
        note = f"the snapshot at {result.snapshot.location} differs from the one evaluated (content hash changed)"
    cards = query_cards(snapshot, per_query, select_rows(per_query, chosen, per_subset, per_category))
    page = render(
        "report.html",
        label=run_label(result),
        result=result,
        flags=assess(result, per_query),
        cards=cards,
        confusions=confusions(snapshot, per_query),
        titles=SUBSET_TITLES,
        categories=sorted({c.category for c in cards}),
        subsets=list(dict.fromkeys(c.subset for c in cards)),
        note=note,
    )
    write_text_atomic(out / "index.html", page)
    return out / "index.html"
