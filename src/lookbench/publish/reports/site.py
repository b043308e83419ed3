"""Write the static leaderboard site: one self-contained index.html plus a data.json copy."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lookbench._util.atomic import write_text_atomic
from lookbench.publish.reports.comparable import run_ids
from lookbench.publish.reports.render import render
from lookbench.publish.reports.scaling import scaling_section
from lookbench.publish.reports.sitedata import build_site_data
from lookbench.results.audit_io import AUDIT_NAME, read_audit
from lookbench.results.audit_schema import AuditReport
from lookbench.results.io import load_result


def site_audits(results: list[Path], given: list[Path]) -> list[AuditReport]:
    """The audits given, then those inside the results' snapshot folders, one per snapshot content."""
    found = {a.snapshot.content_hash: a for a in map(read_audit, given)}
    for path in results:
        snapshot = load_result(path).snapshot
        beside = Path(snapshot.location) / AUDIT_NAME
        if snapshot.content_hash not in found and beside.is_file():
            audit = read_audit(beside)
            if audit.snapshot.content_hash == snapshot.content_hash:  # an audit of other data is not this one's
                found[snapshot.content_hash] = audit
    return list(found.values())


def report_links(paths: list[Path], out: Path, reports: Path | None) -> dict[str, str]:
    """{run id: link from `out` to its `lookbench report` page}, for the runs whose `reports/RUN_ID/index.html`
    exists."""
    if reports is None:
        return {}
    found = {i: reports / i / "index.html" for i in run_ids(paths)}
    return {i: Path(os.path.relpath(page, out)).as_posix() for i, page in found.items() if page.is_file()}


def build_site(
    paths: list[Path],
    out: Path,
    published: bool = True,
    title: str = "LookBench leaderboard",
    scaling: Path | None = None,
    verification: dict[Path, tuple[str, str]] | None = None,
    audits: list[Path] | None = None,
    reports: Path | None = None,
) -> Path:
    """Build the site into `out` (with a `lookbench scaling` study's section when given, the source audits of
    the results' snapshots, and links to `reports/RUN_ID/index.html` where such a report exists) and return
    index.html."""
    data = build_site_data(
        paths, published=published, verification=verification, reports=report_links(paths, out, reports)
    )
    section = scaling_section(scaling) if scaling is not None else None
    shown = site_audits(paths, audits or [])
    page = render("leaderboard.html", data=data, title=title, scaling=section, audits=shown)
    write_text_atomic(out / "index.html", page)
    write_text_atomic(out / "data.json", json.dumps(data, separators=(",", ":")) + "\n")
    return out / "index.html"
