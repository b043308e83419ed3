"""Write the static leaderboard site: one self-contained index.html plus a data.json copy."""

from __future__ import annotations

import json
from pathlib import Path

from lookbench.atomic import write_text_atomic
from lookbench.reports.render import render
from lookbench.reports.scaling import scaling_section
from lookbench.reports.sitedata import build_site_data


def build_site(
    paths: list[Path],
    out: Path,
    published: bool = True,
    title: str = "LookBench leaderboard",
    scaling: Path | None = None,
    verification: dict[Path, tuple[str, str]] | None = None,
) -> Path:
    """Build the site into `out` (with a `lookbench scaling` study's section when given) and return index.html."""
    data = build_site_data(paths, published=published, verification=verification)
    section = scaling_section(scaling) if scaling is not None else None
    page = render("leaderboard.html", data=data, title=title, scaling=section)
    write_text_atomic(out / "index.html", page)
    write_text_atomic(out / "data.json", json.dumps(data, separators=(",", ":")) + "\n")
    return out / "index.html"
