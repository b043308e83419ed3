"""The package's import graph has no cycle and points downwards: shared helpers <- core <- families <- commands."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import lookbench

ROOT = Path(lookbench.__file__).parent

LAYERS: dict[str, int] = {
    # one place for each shared concern (the single-file modules), imported by everything above
    "errors": 0,
    **dict.fromkeys(
        (
            *("arrow", "atomic", "cache", "cores", "dates", "gcpause", "hashing", "http", "images"),
            *("jsontext", "labels", "optional", "precision", "safetext", "yamlfile"),
        ),
        1,
    ),
    "__init__": 1,
    "configfile": 2,
    "taxonomy": 2,
    "shards": 2,
    # the core: snapshot -> embeddings, search, metrics -> models -> results -> evaluation -> contamination
    "snapshot": 3,
    "metrics": 4,
    "search": 4,
    "embeddings": 4,
    "models": 5,
    "results": 6,
    "evaluation": 7,
    "contamination": 8,
    "audit": 9,
    # the families, built on the core
    "synth": 10,
    "composed": 11,
    "legacy": 11,
    "release": 12,
    "train": 13,
    "reports": 14,
    "submissions": 14,
    "integrations": 14,
    "cli": 15,
}
CORE = {"snapshot", "embeddings", "models", "search", "metrics", "results", "evaluation"}
FAMILIES = {"composed", "legacy", "train", "release"}

KNOWN_UPWARD = {
    ("evaluation.runner", "composed"),
}
"""Upward imports still to remove (the runner picks the composed task itself until tasks are injected); a test
fails both on a new one and on one listed here that is gone, so this list only shrinks."""


def module_name(path: Path, root: Path = ROOT) -> str:
    """`lookbench/a/b.py` -> `a.b`; a package's `__init__.py` is the package (the root's is `__init__`)."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside `if TYPE_CHECKING:` blocks (imports for annotations only, never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(id(child) for child in ast.walk(node))
    return skipped


def imported(path: Path, modules: set[str]) -> Iterator[str]:
    """The lookbench modules a file imports, at any depth of the file (lazy imports count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from lookbench.a import b` imports the module `a.b` when there is one, else a name of `a`
            names = [
                f"{node.module}.{a.name}" if _short(f"{node.module}.{a.name}") in modules else node.module
                for a in node.names
            ]
        else:
            continue
        for name in names:
            if _short(name) in modules:
                yield _short(name)


def _short(name: str) -> str:
    """`lookbench.a.b` -> `a.b`; `lookbench` -> `__init__`; anything else is returned as it is."""
    return (
        "__init__" if name == "lookbench" else name.removeprefix("lookbench.") if name.startswith("lookbench.") else "-"
    )


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the other lookbench modules it imports."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    return {name: {t for t in imported(path, set(paths)) if t != name} for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package(module: str) -> str:
    return module.split(".")[0]


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importing module, imported package) for every import of a package at the same or a higher layer."""
    wrong = set()
    for name, targets in graph.items():
        for target in targets:
            if package(target) != package(name) and LAYERS[package(target)] >= LAYERS[package(name)]:
                wrong.add((name, package(target)))
    return wrong


def test_the_graph_sees_real_imports_lazy_ones_included() -> None:
    graph = import_graph()
    assert "evaluation.runner" in graph["cli.eval_cmd"]
    assert "models.registry" in graph["cli.eval_cmd"]  # imported inside the command function
    assert "models.backbones" not in graph["models.registry"]  # only under TYPE_CHECKING


def test_a_cycle_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from lookbench.b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from lookbench.a import y\n")
    (tmp_path / "c.py").write_text("from lookbench.a import z\n")
    assert cycles(import_graph(tmp_path)) == [["a", "b"]]


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_every_package_has_a_layer() -> None:
    assert {package(m) for m in import_graph()} <= set(LAYERS)


def test_imports_point_downwards() -> None:
    wrong = upward_imports(import_graph())
    assert wrong - KNOWN_UPWARD == set(), "new upward imports"
    assert KNOWN_UPWARD - wrong == set(), "fixed: remove them from KNOWN_UPWARD"


def test_the_core_never_imports_its_families_but_where_listed() -> None:
    graph = import_graph()
    reached = {(m, package(t)) for m, ts in graph.items() if package(m) in CORE for t in ts if package(t) in FAMILIES}
    assert reached <= KNOWN_UPWARD
