"""Write benchmarks/README.md's "Reproduce" section from `measurements.py` and the result files (`--check`: only
compare, exit 1 when the README is not current)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from measurements import MEASUREMENTS, Measurement

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE / "README.md"
HEADING = "## Reproduce"
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Recorded:
    """What one result file says about its run."""

    name: str
    command: str
    date: str
    machine: str
    load: str
    wall_s: str
    source: str

    @classmethod
    def read(cls, path: Path) -> Recorded:
        """The run recorded in the result file at `path`."""
        found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        machine = found.get("machine") or {}
        load = found.get("load_average") or {}
        return cls(
            path.name,
            found.get("command", NOT_RECORDED),
            str(found.get("date", NOT_RECORDED))[:10],
            f"{machine.get('usable_cores', '?')} of {machine.get('cores', '?')} cores, {machine.get('cpu_model', '?')}"
            if machine
            else NOT_RECORDED,
            " → ".join(str(load[key][0]) for key in ("before", "after")) if load else NOT_RECORDED,
            str(found.get("wall_s", NOT_RECORDED)),
            source(found),
        )


def source(found: dict[str, Any]) -> str:
    """The lookbench version and commit a result file records."""
    if "lookbench_version" not in found:
        return NOT_RECORDED
    commit = found.get("commit")
    at = f" at {commit[:12]}{' (dirty)' if found.get('dirty') else ''}" if commit else ", commit not recorded"
    return f"{found['lookbench_version'] or 'version unknown'}{at}"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def code(text: str) -> str:
    """Text as a code span inside a Markdown table cell."""
    return f"`{cell(text)}`"


def files_cell(measurement: Measurement, present: set[str]) -> str:
    """A measurement's result files: linked where present, else marked as not measured on this tree yet."""
    return "<br>".join(
        f"[{name}](results/{name})" if name in present else f"`{name}`: not measured on this tree yet"
        for name in measurement.results
    )


def command_cell(measurement: Measurement) -> str:
    """How to reproduce a measurement on this tree."""
    if measurement.command is None:
        return "no script on this tree"
    return code(measurement.command) + (f" ({cell(measurement.note)})" if measurement.note else "")


def section(results: Path = RESULTS) -> str:
    """The generated "Reproduce" section: one row per measurement, then one row per result file's recorded run."""
    recorded = [Recorded.read(path) for path in sorted(results.glob("*.json"))]
    present = {run.name for run in recorded}
    lines = [
        f"{HEADING}",
        "",
        "Made by `python benchmarks/readme.py` from `benchmarks/measurements.py` and the result files; do not edit.",
        "",
        "| result files | what it measures | command | time on 2 cores |",
        "| --- | --- | --- | --- |",
        *(
            f"| {files_cell(m, present)} | {cell(m.measures)} | {command_cell(m)} | {cell(m.time)} |"
            for m in MEASUREMENTS
        ),
        "",
        "What each result file records of its run (1-minute load average before → after):",
        "",
        "| result file | command as run | date | machine | load | wall s | lookbench version, commit |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *(
            f"| {run.name} | {code(run.command)} | {run.date} | {cell(run.machine)} | {run.load} | {run.wall_s} "
            f"| {cell(run.source)} |"
            for run in recorded
        ),
        "",
    ]
    return "\n".join(lines)


def rendered(readme: str, results: Path = RESULTS) -> str:
    """`readme` with its "Reproduce" section (up to the next `## ` heading) replaced by the generated one."""
    start = readme.index(f"{HEADING}")
    end = readme.find("\n## ", start + len(HEADING))
    return readme[:start] + section(results) + ("" if end < 0 else readme[end:])


def main() -> None:
    """Write the README's section, or with `--check` only compare."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the README is not current")
    args = parser.parse_args()
    current = README.read_text(encoding="utf-8")
    wanted = rendered(current)
    if args.check:
        sys.exit(0 if wanted == current else 1)
    README.write_text(wanted, encoding="utf-8")


if __name__ == "__main__":
    main()
