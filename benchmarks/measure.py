"""Timing a command in a fresh process: wall seconds, CPU seconds and the peak resident memory of the process tree."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import NamedTuple

_WRAPPER = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); r = subprocess.run(sys.argv[1:]); "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(time.perf_counter() - t, u.ru_maxrss / 1024, u.ru_utime + u.ru_stime); "
    "sys.exit(r.returncode)"
)


class Timed(NamedTuple):
    """One command's wall seconds, peak RSS (MB) of its largest process, and CPU seconds (user + sys, all threads)."""

    wall_s: float
    peak_mb: float
    cpu_s: float


def timed_process(command: list[str], env: dict[str, str] | None = None) -> Timed:
    """Time `command`, run by a small wrapper so its own memory and CPU are not counted.

    The command writes and reads bytecode caches as an installed package does, even where the environment says
    PYTHONDONTWRITEBYTECODE (this sandbox's shells do): otherwise every run would compile each imported module.
    """
    child = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *command],
        capture_output=True,
        text=True,
        check=False,
        env={**child, **(env or {})},
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-4000:]}")
    wall, rss, cpu = done.stdout.strip().splitlines()[-1].split()
    return Timed(float(wall), float(rss), float(cpu))


def lookbench(*args: str) -> list[str]:
    """The `lookbench` command line run by this Python."""
    return [sys.executable, "-m", "lookbench.cli.main", *args]
