"""How fast and how lean is Synth generation? Wall time, CPU time and peak memory of `lookbench synth` at a size.

Runs `lookbench synth --size SIZE --workers N` in a child process and samples its whole process tree (the worker
processes included) from /proc every 0.2 s: CPU time is the sum of user + system time over every process seen,
peak memory the largest sum of proportional set sizes (PSS: pages shared between processes counted once) and of
resident set sizes (RSS, an upper bound). The machine's load average is printed before and after, since a loaded
machine stretches wall time, and the 1-minute load average is sampled during the run (min / max). Optionally
regenerates with another process count and compares the files byte by byte.

With `--baseline SRC` (a source tree, the folder holding lookbench/, e.g. the renderer before a change checked out
with `git worktree add`), generates alternately with that tree and this one (baseline, this, baseline, this, ...,
`--repeats` times each, each into its own folder), and prints each run, the min and median per tree and the ratio
this / baseline of each repeat pair.

    python benchmarks/synth_generation.py --size real --workers 2 [--compare-workers 1] [--out DIR]
    python benchmarks/synth_generation.py --size small --workers 2 --baseline /tmp/old/src --repeats 2 --out DIR
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass
class Usage:
    """What the sampled process tree used."""

    wall_s: float = 0.0
    cpu_s: dict[int, float] = field(default_factory=dict)
    peak_pss_mib: float = 0.0
    peak_rss_mib: float = 0.0
    processes: int = 0
    load_min: float = float("inf")
    load_max: float = 0.0

    @property
    def total_cpu_s(self) -> float:
        """User + system seconds summed over every process seen."""
        return sum(self.cpu_s.values())


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(_children(current))
    return out


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def _memory_kib(pid: int) -> tuple[int, int]:
    pss = rss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
    except OSError:
        try:
            rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KIB
            pss = rss
        except OSError:
            pass
    return pss, rss


def run_measured(command: list[str], interval: float = 0.2, env: dict[str, str] | None = None) -> Usage:
    """Run `command`, sampling its process tree until it exits; raise if it fails."""
    usage = Usage()
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env)
    while process.poll() is None:
        load = os.getloadavg()[0]
        usage.load_min, usage.load_max = min(usage.load_min, load), max(usage.load_max, load)
        pss = rss = 0
        for pid in _tree(process.pid):
            seconds = _cpu_seconds(pid)
            if seconds is not None:
                usage.cpu_s[pid] = seconds
            p, r = _memory_kib(pid)
            pss, rss = pss + p, rss + r
        usage.peak_pss_mib = max(usage.peak_pss_mib, pss / 1024)
        usage.peak_rss_mib = max(usage.peak_rss_mib, rss / 1024)
        time.sleep(interval)
    usage.wall_s = time.perf_counter() - started
    usage.processes = len(usage.cpu_s)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return usage


def same_files(a: Path, b: Path) -> list[str]:
    """Relative paths whose bytes differ between two snapshot folders (or exist in one only)."""
    names_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    names_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    differ = sorted(str(p) for p in names_a ^ names_b)
    differ += sorted(str(p) for p in names_a & names_b if not filecmp.cmp(a / p, b / p, shallow=False))
    return differ


def _synth(out: Path, size: str, workers: int, seed: int) -> list[str]:
    return [sys.executable, "-m", "lookbench.cli.main", "synth", "--out", str(out), "--size", size,
            "--workers", str(workers), "--seed", str(seed), "--overwrite"]  # fmt: skip


def _report(name: str, usage: Usage) -> str:
    return (f"{name}: wall {usage.wall_s:.1f} s, CPU {usage.total_cpu_s:.1f} s (user+sys over {usage.processes} "
            f"processes), peak PSS {usage.peak_pss_mib:.0f} MiB, peak RSS {usage.peak_rss_mib:.0f} MiB, "
            f"load {usage.load_min:.1f}-{usage.load_max:.1f} during")  # fmt: skip


def alternate(root: Path, baseline: Path, repeats: int, size: str, workers: int, seed: int) -> None:
    """Generate with the baseline tree and this one alternately, and print each run, min / median and ratios."""
    trees = {"baseline": baseline.resolve(), "this": Path(__file__).resolve().parents[1] / "src"}
    runs: dict[str, list[Usage]] = {name: [] for name in trees}
    for repeat in range(repeats):
        for name, src in trees.items():
            out = root / f"{name}-{repeat}"
            usage = run_measured(_synth(out, size, workers, seed), env={**os.environ, "PYTHONPATH": str(src)})
            runs[name].append(usage)
            generator = json.loads(next(out.glob("v*/synth_manifest.json")).read_text())["generator"]
            print(_report(f"{name} ({generator}) #{repeat}", usage), flush=True)
            shutil.rmtree(out, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    measures = {"wall": lambda u: u.wall_s, "CPU": lambda u: u.total_cpu_s, "peak PSS": lambda u: u.peak_pss_mib,
                "peak RSS": lambda u: u.peak_rss_mib}  # fmt: skip
    for label, value in measures.items():
        for name, usages in runs.items():
            column = [value(u) for u in usages]
            print(f"{name} {label}: min {min(column):.1f}, median {statistics.median(column):.1f}")
        ratios = [value(t) / value(b) for b, t in zip(runs["baseline"], runs["this"], strict=True)]
        print(f"{label} this / baseline per repeat pair: {', '.join(f'{r:.3f}' for r in ratios)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare-workers", type=int, default=None, help="regenerate with this many and compare")
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: a temporary folder)")
    parser.add_argument("--baseline", type=Path, default=None, help="a source tree to alternate with this one")
    parser.add_argument("--repeats", type=int, default=2, help="runs per tree with --baseline")
    args = parser.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="synth-bench-"))
    print(f"load average before: {os.getloadavg()}")
    if args.baseline is not None:
        alternate(root, args.baseline, args.repeats, args.size, args.workers, args.seed)
        if args.out is None:
            shutil.rmtree(root, ignore_errors=True)
        return
    usage = run_measured(_synth(root / "a", args.size, args.workers, args.seed))
    print(f"load average after: {os.getloadavg()}")
    print(_report(f"size {args.size}, {args.workers} worker(s)", usage))
    if args.compare_workers is not None:
        again = run_measured(_synth(root / "b", args.size, args.compare_workers, args.seed))
        print(f"{args.compare_workers} worker(s): wall {again.wall_s:.1f} s, CPU {again.total_cpu_s:.1f} s")
        differ = same_files(root / "a", root / "b")
        print("byte-identical" if not differ else f"DIFFERENT: {differ[:10]}")
    if args.out is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
