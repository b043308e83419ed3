"""Page weight and build time of the leaderboard and the report built from real result files.

    python tests/publish/site/measure_weight.py results/A.json [results/B.json ...]

Builds the leaderboard from the first run alone and from all of them, and the report of the first run (its
snapshot must be reachable), and prints sizes in KiB; for the report also how many thumbnails it shows, how many
distinct ones it stores, and what storing every shown thumbnail would have weighed. With Debian Chromium
present, also the time the page takes to apply a date window to every run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent)]

from lookbench.publish.reports.report import build_report  # noqa: E402
from lookbench.publish.reports.site import build_site  # noqa: E402


def timed_build(build: object, *args: object) -> tuple[Path, float]:
    """The built page and the seconds the build took."""
    start = time.perf_counter()
    index = build(*args)  # type: ignore[operator]
    return index, time.perf_counter() - start


def kib(n: float) -> str:
    """Bytes as KiB without decimals."""
    return f"{n / 1024:.0f} KiB"


def window_seconds(index: Path) -> float | None:
    """Seconds the page takes to apply a window starting on the middle day of its data (None without Chromium)."""
    from browser import available, chromium

    if not available():
        return None
    with chromium(width=1400) as driver:
        driver.get(index.as_uri())
        middle = driver.execute_script(
            "var r = document.getElementById('since-range'); return Math.round((+r.min + +r.max) / 2);"
        )
        return float(
            driver.execute_script(
                "var t = performance.now(); var d = new Date(arguments[0] * 86400000).toISOString().slice(0, 10);"
                "document.getElementById('since').value = d; document.getElementById('apply').click();"
                "return (performance.now() - t) / 1000;",
                middle,
            )
        )


def report_images(page: str) -> tuple[int, int, int, int]:
    """(thumbnails shown, distinct thumbnails stored, bytes stored, bytes if every shown one were stored)."""
    match = re.search(r'<script type="application/json" id="report-images">(.*?)</script>', page, re.S)
    images: dict[str, str] = json.loads(match.group(1)) if match else {}
    used = re.findall(r'data-img="(\d+)"', page)
    return len(used), len(images), sum(map(len, images.values())), sum(len(images[i]) for i in used)


def main() -> None:
    """Build the pages in a temporary folder and print their weights."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="result JSON files (with per-query files)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        counts = sorted({1, len(args.results)})
        for count in counts:
            index, took = timed_build(build_site, args.results[:count], root / f"site{count}")
            print(f"leaderboard, {count} run(s): {kib(index.stat().st_size)} ({took:.1f} s to build)")
        seconds = window_seconds(root / f"site{counts[-1]}" / "index.html")
        if seconds is not None:
            print(f"applying a date window to the {counts[-1]}-run page: {seconds:.2f} s")
        report, took = timed_build(build_report, args.results[0], root / "report")
        page = report.read_text(encoding="utf-8")
        shown, stored, size, every = report_images(page)
        cards = page.count('<article class="query"')
        print(f"report, {cards} queries: {kib(len(page.encode()))} ({took:.1f} s to build)")
        print(f"  thumbnails: {shown} shown, {stored} distinct stored: {kib(size)}")
        print(f"  storing every shown thumbnail would take {kib(every)}")


if __name__ == "__main__":
    main()
