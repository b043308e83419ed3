"""`lookbench eval` wall time and peak memory, and `lookbench --help` start-up time, for two source trees.

Runs alternate between the trees (A, B, A, B...) so load on a shared machine falls on both alike; each figure is
reported as min and median of the repeats, with the 1-minute load average before and after.

    python benchmarks/route_overhead.py --a /tmp/before/src --b src [--repeats 5] [--json FILE] [--cache DIR]

The eval runs the default model on the embedded default snapshot with one shared, pre-filled embedding cache, so
they time what the code around the model does (loading, checks, search, metrics, bootstrap, writing results).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOOKBENCH = [sys.executable, "-c", "from lookbench.cli.main import app; app()"]


def _load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _run(src: str, args: list[str], timed: bool) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one `lookbench ARGS` run with `src` first on the path."""
    env = {**os.environ, "PYTHONPATH": src}
    prefix = ["/usr/bin/time", "-v"] if timed else []
    started = time.perf_counter()
    done = subprocess.run([*prefix, *LOOKBENCH, *args], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lookbench {' '.join(args)} failed under {src}:\n{done.stderr[-2000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr) if timed else None
    return wall, int(found.group(1)) / 1024 if found else 0.0


def _scores(path: Path) -> str:
    """What must not change between the trees: metrics, per-category values and breakdowns of a result file."""
    result = json.loads(path.read_text(encoding="utf-8"))
    return json.dumps({key: result[key] for key in ("metrics", "per_category", "breakdowns")}, sort_keys=True)


def _summary(values: list[float]) -> dict[str, float]:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="first source tree (the `src` folder)")
    parser.add_argument("--b", required=True, help="second source tree")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--cache", type=Path, help="an embedding cache already filled by an earlier run (else a new one)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="route-overhead-"))
    cache = args.cache or work / "cache"
    trees = {"a": args.a, "b": args.b}
    evals: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    helps: dict[str, list[float]] = {name: [] for name in trees}
    load_before = _load()
    if args.cache is None:
        _run(args.a, ["eval", "--cache-dir", str(cache), "-o", str(work / "warm.json")], timed=False)  # fills it
    for repeat in range(args.repeats):
        for name, src in trees.items():
            out = work / f"{name}-{repeat}.json"
            evals[name].append(_run(src, ["eval", "--cache-dir", str(cache), "-o", str(out)], timed=True))
            helps[name].append(_run(src, ["--help"], timed=False)[0])
    scores = {name: _scores(work / f"{name}-0.json") for name in trees}
    report = {
        "repeats": args.repeats,
        "same_scores": scores["a"] == scores["b"],
        "load_before": load_before,
        "load_after": _load(),
        **{
            name: {
                "src": src,
                "eval_wall_s": _summary([wall for wall, _ in evals[name]]),
                "eval_peak_rss_mib": _summary([rss for _, rss in evals[name]]),
                "help_wall_s": _summary(helps[name]),
            }
            for name, src in trees.items()
        },
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
