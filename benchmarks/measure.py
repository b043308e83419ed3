"""Timing a command in a fresh process: wall seconds and the peak resident memory of the process tree's largest."""

from __future__ import annotations

import os
import subprocess
import sys

_WRAPPER = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); r = subprocess.run(sys.argv[1:]); "
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); "
    "sys.exit(r.returncode)"
)


def timed_process(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of `command`, run by a small wrapper so its own memory is not counted."""
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-4000:]}")
    wall, rss = done.stdout.strip().splitlines()[-1].split()
    return float(wall), float(rss)


def lookbench(*args: str) -> list[str]:
    """The `lookbench` command line run by this Python."""
    return [sys.executable, "-m", "lookbench.cli.main", *args]
