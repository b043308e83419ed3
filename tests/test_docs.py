"""The documentation stays a reference, not a diary: README and docs/ within their word budgets, no commit hashes,
issue numbers or machine paths, every cited result file and relative link present; benchmarks/ holds at most 30
declared measurements, every result file declared, no script over 800 lines, and its README's table made from them."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
README = ROOT / "README.md"
BENCHMARKS = ROOT / "benchmarks"
PROSE = [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS]

# 7 to 40 hex digits with at least one digit and one letter: a commit hash, not a number or a word like "defaced"
COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|tmp)/")
RESULT = re.compile(r"benchmarks/results/([\w.\-]+)")
SCRIPT = re.compile(r"benchmarks/[\w/]+\.(?:py|sh)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def words(path: Path) -> int:
    """Words as `wc -w` counts them: runs of non-whitespace."""
    return len(path.read_text(encoding="utf-8").split())


def test_readme_is_at_most_1000_words() -> None:
    assert words(README) <= 1000


def test_docs_are_at_most_30000_words() -> None:
    assert DOCS
    assert sum(words(page) for page in DOCS) <= 30_000


@pytest.mark.parametrize("pattern", [COMMIT, ISSUE, MACHINE_PATH], ids=["commit hash", "issue number", "machine path"])
def test_no_development_history_in_prose(pattern: re.Pattern[str]) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group(0)}"
        for path in PROSE
        if path.exists()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in pattern.finditer(line)
    ]
    assert not found, "\n".join(found)


def benchmarks_module(name: str) -> ModuleType:
    """A module of benchmarks/ (outside the package), imported as its scripts import each other."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_at_most_30_measurements() -> None:
    declared = benchmarks_module("measurements").MEASUREMENTS
    names = [name for measurement in declared for name in measurement.results]
    assert len(declared) <= 30, len(declared)
    assert len(names) == len(set(names)), sorted(names)


def test_every_result_file_is_declared() -> None:
    declared = {name for measurement in benchmarks_module("measurements").MEASUREMENTS for name in measurement.results}
    undeclared = sorted(path.name for path in (BENCHMARKS / "results").glob("*.json") if path.name not in declared)
    assert not undeclared, undeclared


def test_declared_commands_run_scripts_that_exist() -> None:
    commands = [m.command or "" for m in benchmarks_module("measurements").MEASUREMENTS]
    missing = sorted(
        {script for command in commands for script in SCRIPT.findall(command) if not (ROOT / script).is_file()}
    )
    assert not missing, missing


def test_benchmarks_readme_is_current() -> None:
    current = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    assert benchmarks_module("readme").rendered(current) == current, "run: python benchmarks/readme.py"


def test_no_benchmark_script_is_over_800_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in BENCHMARKS.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert not long, long


def test_every_cited_result_file_exists() -> None:
    cited = {name for path in [README, *DOCS] for name in RESULT.findall(path.read_text(encoding="utf-8"))}
    missing = sorted(name for name in cited if not (ROOT / "benchmarks" / "results" / name).is_file())
    assert not missing, missing


def test_relative_links_resolve() -> None:
    broken = []
    for path in [*PROSE, ROOT / "benchmarks" / "README.md"]:
        if not path.exists():
            continue
        for target in LINK.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue
            file = target.partition("#")[0]
            if file and not (path.parent / file).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_the_checks_catch_what_they_are_for() -> None:
    assert COMMIT.search("fixed in 87b3758") and not COMMIT.search("50000000 bytes, defaced")
    assert ISSUE.search("as issue 26 asks") and MACHINE_PATH.search("see /work/bench/x")
    assert not MACHINE_PATH.search("~/.cache/lookbench or ./tmp/x")
