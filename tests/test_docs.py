"""The documentation stays a reference, not a diary: README and docs/ within their word budgets, no commit hashes,
issue numbers or machine paths, at most 15 benchmark scripts, and every cited result file and relative link present."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
README = ROOT / "README.md"
PROSE = [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS]

# 7 to 40 hex digits with at least one digit and one letter: a commit hash, not a number or a word like "defaced"
COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
ISSUE = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|tmp)/")
RESULT = re.compile(r"benchmarks/results/([\w.\-]+)")
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


def test_at_most_15_benchmark_scripts() -> None:
    scripts = [p for p in (ROOT / "benchmarks").iterdir() if p.is_file() and p.suffix in {".py", ".sh"}]
    assert len(scripts) <= 15, sorted(p.name for p in scripts)


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
