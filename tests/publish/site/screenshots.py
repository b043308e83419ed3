"""Screenshots of the leaderboard and the report at 1400 and 400 px, for docs/leaderboard.md.

    python tests/publish/site/screenshots.py results/A.json [results/B.json ...] --out docs/images

The leaderboard is built from every run and the report from the first (its snapshot must be reachable). The
leaderboard opens with the first run as the overview's baseline; the pictures are its first screen (the overview),
the controls, the first board table and, when the runs span releases, the series section; the report's is at its
sample switch. PNGs are stored with a 128-colour palette to stay small. Needs Debian chromium and chromium-driver.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).parent)]

from browser import available, chromium  # noqa: E402
from PIL import Image  # noqa: E402

from lookbench.publish.reports.report import build_report  # noqa: E402
from lookbench.publish.reports.site import build_site  # noqa: E402

SHOTS = {1400: 1000, 400: 1500}
"""Viewport width -> height of each picture."""


def save(driver: Any, target: Path) -> None:
    """The visible screen as a small palette PNG."""
    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
    print(f"{target}: {target.stat().st_size / 1024:.0f} KiB")


def scroll_to(driver: Any, selector: str) -> None:
    """Put the first element matching `selector` at the top of the screen."""
    driver.execute_script("document.querySelector(arguments[0]).scrollIntoView(true);", selector)
    time.sleep(0.2)


def main() -> None:
    """Build the pages and save the pictures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="result JSON files (with per-query files)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG files")
    args = parser.parse_args()
    if not available():
        raise SystemExit("needs Debian chromium and chromium-driver (scripts/ensure-chromium.sh)")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(args.results, Path(tmp) / "site")
        report = build_report(args.results[0], Path(tmp) / "report")
        for width, height in SHOTS.items():
            with chromium(width=width, height=height) as driver:
                driver.get(site.as_uri() + "#base=0")
                save(driver, args.out / f"leaderboard-{width}.png")
                scroll_to(driver, "#controls")
                save(driver, args.out / f"leaderboard-controls-{width}.png")
                scroll_to(driver, "#board-title")
                save(driver, args.out / f"leaderboard-tables-{width}.png")
                if driver.find_element("id", "series").is_displayed():
                    scroll_to(driver, "#series")
                    save(driver, args.out / f"leaderboard-series-{width}.png")
                driver.get(report.as_uri())
                scroll_to(driver, "#filters")
                save(driver, args.out / f"report-{width}.png")


if __name__ == "__main__":
    main()
