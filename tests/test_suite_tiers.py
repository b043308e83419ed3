"""scripts/test.sh runs the torch tier on the files its grep finds: every torch test must be in one of them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).parent
SCRIPT = TESTS.parent / "scripts" / "test.sh"


def is_torch_mark(node: ast.AST) -> bool:
    """`pytest.mark.torch`, the marker the torch tier selects."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "torch"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
    )


def marked_files() -> set[str]:
    """Test files that use the torch marker anywhere, found by parsing them (however the marker is written)."""
    found = set()
    for path in TESTS.rglob("*.py"):
        if any(is_torch_mark(node) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))):
            found.add(path.relative_to(TESTS.parent).as_posix())
    return found


def script_selection() -> set[str]:
    """The files scripts/test.sh's grep selects, by its own pattern."""
    found = re.search(r"torch_files < <\(grep -rlE '([^']+)' tests \| sort\)", SCRIPT.read_text())
    assert found is not None, f"{SCRIPT}: no grep selecting the torch tier's files"
    pattern = re.compile(found.group(1))
    return {
        path.relative_to(TESTS.parent).as_posix()
        for path in TESTS.rglob("*.py")
        if any(pattern.search(line) for line in path.read_text(encoding="utf-8").splitlines())
    }


def test_the_torch_tier_script_selects_every_file_that_marks_a_torch_test() -> None:
    marked = marked_files()
    assert len(marked) > 10  # the train, models and MTEB tests among them
    assert script_selection() == marked


def test_the_torch_marker_is_written_only_where_the_scripts_grep_sees_it() -> None:
    for path in TESTS.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if is_torch_mark(node):
                written = re.match(r"(@pytest\.mark\.torch|pytestmark.*pytest\.mark\.torch)", lines[node.lineno - 1])
                assert written, f"{path}:{node.lineno}: the torch marker split over lines or aliased"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_marker":
                assert "torch" not in ast.unparse(node), f"{path}:{node.lineno}: a torch marker added by a hook"
