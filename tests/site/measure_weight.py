"""Page weight and build time for a synthetic 2,345-query run: `python tests/site/measure_weight.py`."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from synth_runs import DEFAULT_MODELS, build_snapshot, evaluate_models  # noqa: E402

from lookbench.reports.report import build_report  # noqa: E402
from lookbench.reports.site import build_site  # noqa: E402

SIZES = {"real_studio_flat": 1000, "aigen_studio": 400, "real_streetlook": 645, "aigen_streetlook": 300}


def main() -> None:
    """Build one snapshot of 2,345 queries, evaluate the three fake models, and report sizes in KiB."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        snapshot, vectors = build_snapshot(root / "snap", SIZES)
        paths = evaluate_models(root, snapshot, vectors, DEFAULT_MODELS)
        for count in (1, len(paths)):
            start = time.perf_counter()
            index = build_site(paths[:count], root / f"site{count}")
            took = time.perf_counter() - start
            print(f"leaderboard, {count} run(s) x 2345 queries: {index.stat().st_size / 1024:.0f} KiB ({took:.1f} s)")
        start = time.perf_counter()
        report = build_report(paths[0], root / "report")
        took = time.perf_counter() - start
        print(f"report, 48 sampled queries: {report.stat().st_size / 1024:.0f} KiB ({took:.1f} s)")


if __name__ == "__main__":
    main()
