"""Shared by the benchmark scripts: timing a command in a fresh process (wall seconds, CPU seconds and the peak resident
memory of the process tree), and writing a run's figures to a result file under benchmarks/results/."""

from __future__ import annotations

import contextlib
import datetime
import importlib.metadata
import io
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

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


RESULTS = Path(__file__).resolve().parent / "results"
_figures: dict[str, Any] | None = None


def machine() -> dict[str, Any]:
    """What the figures were measured on: cores, CPU model, platform and Python."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": model,
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def provenance() -> dict[str, Any]:
    """The installed lookbench version, and the repository's commit with whether tracked files (result files aside)
    differ from it."""
    try:
        version: str | None = importlib.metadata.version("lookbench")
    except importlib.metadata.PackageNotFoundError:
        version = None
    found: dict[str, Any] = {"lookbench_version": version, "commit": None, "dirty": None}
    root = str(Path(__file__).resolve().parents[1])
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        # result files a run of the same series wrote before this one are not a change to the code measured
        code = ["--", ".", ":(exclude)benchmarks/results"]
        status = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--untracked-files=no", *code],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if head.returncode == 0 and status.returncode == 0:
            found |= {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}
    return found


def record(**figures: Any) -> None:
    """Add figures to the result file of the run in progress (see `results_file`); a no-op outside one."""
    if _figures is not None:
        _figures.update(figures)


def _printed_json(text: str) -> Any:
    """The JSON a script printed: its whole output if that is one document, else each line that is one."""
    with contextlib.suppress(ValueError):
        return json.loads(text)
    found = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            if line.lstrip().startswith(("{", "[")):
                found.append(json.loads(line))
    return found


class _Tee(io.TextIOBase):
    """Writes to the real stdout and keeps a copy."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()


@contextlib.contextmanager
def results_file(name: str) -> Iterator[None]:
    """Run a benchmark and write `benchmarks/results/NAME.json` when it succeeds.

    The file holds the command line, the UTC date, the lookbench version and commit (`provenance()`, taken before
    the run), the machine (`machine()`), the load average before and after, the wall seconds, the figures the script
    passed to `record()` and the lines it printed. `LOOKBENCH_RESULTS`
    names another folder; `LOOKBENCH_RESULTS=none` writes nothing.
    """
    global _figures
    target = os.environ.get("LOOKBENCH_RESULTS", str(RESULTS))
    _figures, tee, started, load = {}, _Tee(sys.stdout), time.perf_counter(), os.getloadavg()
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    source = provenance()
    try:
        with contextlib.redirect_stdout(tee):
            yield
        figures = _figures
    finally:
        _figures = None
    if target == "none":
        return
    result = {
        "command": " ".join(["python", *sys.argv]),
        "date": date,
        **source,
        "machine": machine(),
        "load_average": {"before": [round(x, 2) for x in load], "after": [round(x, 2) for x in os.getloadavg()]},
        "wall_s": round(time.perf_counter() - started, 1),
        "figures": figures or _printed_json(tee.copy.getvalue()),
        "output": tee.copy.getvalue().splitlines(),
    }
    path = Path(target) / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def run_subcommand(script: str, subcommands: dict[str, Callable[[], None]], suffix: str = "") -> None:
    """`python benchmarks/SCRIPT.py SUBCOMMAND [options]`: run one and write results/SCRIPT-SUBCOMMAND[SUFFIX].json."""
    if len(sys.argv) < 2 or sys.argv[1] not in subcommands:
        names = ",".join(subcommands)
        raise SystemExit(f"usage: {sys.argv[0]} {{{names}}} [options]; --help after one for its options")
    command = sys.argv.pop(1)
    sys.argv[0] = f"{sys.argv[0]} {command}"
    with results_file(f"{script}-{command}{suffix}"):
        subcommands[command]()


if __name__ == "__main__":
    # python benchmarks/measure.py NAME [--figures FILE.json] COMMAND...: run COMMAND and keep what it prints (and
    # FILE's `metrics`, or FILE whole, e.g. the result file of a `lookbench eval`) in results/NAME.json
    if len(sys.argv) < 3:
        raise SystemExit("usage: python benchmarks/measure.py NAME [--figures FILE.json] COMMAND...")
    name, command, figures_file = sys.argv[1], sys.argv[2:], None
    if command[0] == "--figures":
        figures_file, command = Path(command[1]), command[2:]
    with results_file(name):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        print(done.stdout, end="")
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            # raised inside the block, so a failed run leaves the result file an earlier run wrote as it was
            raise SystemExit(done.returncode)
        if figures_file is not None:
            written = json.loads(figures_file.read_text())
            record(**(written.get("metrics", written) if isinstance(written, dict) else {"figures": written}))
