"""The import graph has no cycle and points downwards: shared helpers <- core <- wings; the core imports no wing."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

import lookbench

ROOT = Path(lookbench.__file__).parent

LAYERS: dict[str, int] = {
    "errors": 0,
    "__init__": 0,
    "_util": 1,  # one place for each shared concern, imported by everything above
    # the core: snapshot, a model's identity -> embeddings, search, metrics -> models -> results -> evaluation -> cli
    "taxonomy": 2,
    "shards": 2,
    "snapshot": 3,
    "metrics": 4,
    "search": 4,
    "embeddings": 4,
    "models": 5,
    "results": 6,
    "evaluation": 7,
    "cli": 8,
    # the wings, built on the core
    "datasets": 10,
    "release": 11,
    "train": 12,
    "publish": 13,
}
IDENTITY_MODULES = ("meta", "card", "spec", "options", "encoder", "preprocess", "embed_options")
MODEL_IDENTITY: dict[str, int] = {f"models.{name}": 3 for name in IDENTITY_MODULES}
"""Modules below their package's layer: a model's identity (its `ModelMeta` and shipped cards, spec, encoder protocol,
preprocessing and embedding options), which embeddings/ builds on; the model kinds' loaders build on embeddings/."""
CORE = {"_util", "errors", "snapshot", "taxonomy", "metrics", "search", "shards", "models", "embeddings"}
CORE |= {"evaluation", "results", "cli"}
WINGS: dict[str, set[str]] = {
    "datasets": set(),
    "release": set(),
    "train": set(),
    "publish": set(),
}
"""Each wing and the wings it may import: none (the core is always allowed; a service two wings share lives in the
core); the core reaches the wings' commands and named snapshots only through entry points."""
TOP_LEVEL_LIMIT = 16


def module_name(path: Path, root: Path = ROOT) -> str:
    """`lookbench/a/b.py` -> `a.b`; a package's `__init__.py` is the package (the root's is `__init__`)."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def parsed(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per worker while the file is unchanged (a dozen tests walk the package)."""
    stat = path.stat()
    return _parse(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _parse(path: Path, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Nodes inside `if TYPE_CHECKING:` blocks (imports for annotations only, never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(id(child) for child in ast.walk(node))
    return skipped


def imported(path: Path, modules: set[str], annotations: bool = False) -> Iterator[str]:
    """The lookbench modules a file imports, at any depth of the file (lazy imports count; with `annotations`, those
    under `if TYPE_CHECKING:` too)."""
    tree = parsed(path)
    skipped = set() if annotations else _type_checking_nodes(tree)
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


def import_graph(root: Path = ROOT, annotations: bool = False) -> dict[str, set[str]]:
    """Module -> the other lookbench modules it imports (with `annotations`, for type checking only too)."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    return {name: {t for t in imported(path, set(paths), annotations) if t != name} for name, path in paths.items()}


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


def layer(module: str) -> int:
    """A module's layer: its own where `MODEL_IDENTITY` gives one, else its package's."""
    return MODEL_IDENTITY.get(module, LAYERS[package(module)])


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importing module, imported package) for every import of a package at the same or a higher layer, and
    (importing module, imported module) for an import within a package of a module at a higher layer."""
    wrong = set()
    for name, targets in graph.items():
        for target in targets:
            if package(target) == package(name):
                if layer(target) > layer(name):
                    wrong.add((name, target))
            elif layer(target) >= layer(name):
                wrong.add((name, package(target)))
    return wrong


def wing_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importing module, imported wing) for every import of a wing the importer may not use."""
    wrong = set()
    for name, targets in graph.items():
        allowed = WINGS.get(package(name), set()) | {package(name)}
        wrong |= {(name, package(t)) for t in targets if package(t) in WINGS and package(t) not in allowed}
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


def test_a_cycle_through_type_checking_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from lookbench.b import x\n")
    lazy = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lookbench.a import y\n"
    (tmp_path / "b.py").write_text(lazy)
    assert cycles(import_graph(tmp_path)) == []
    assert cycles(import_graph(tmp_path, annotations=True)) == [["a", "b"]]


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_no_import_cycles_counting_every_import() -> None:
    """Top-level, lazy (inside functions) and type-checking-only imports alike: a shared piece lives lower."""
    assert cycles(import_graph(annotations=True)) == []


def test_a_wing_import_is_found(tmp_path: Path) -> None:
    for folder in ("cli", "datasets", "publish"):
        (tmp_path / folder).mkdir()
    (tmp_path / "cli" / "main.py").write_text("def f():\n    from lookbench.datasets.x import y\n")
    (tmp_path / "datasets" / "x.py").write_text("from lookbench.publish import z\n")
    (tmp_path / "publish" / "z.py").write_text("from lookbench.datasets import x\n")
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == {("cli.main", "datasets"), ("datasets.x", "publish")}
    assert wing_imports(graph) == {("cli.main", "datasets"), ("datasets.x", "publish"), ("publish.z", "datasets")}


def test_a_model_identity_import_is_found(tmp_path: Path) -> None:
    for folder in ("embeddings", "models"):
        (tmp_path / folder).mkdir()
    (tmp_path / "embeddings" / "cache.py").write_text("from lookbench.models.meta import ModelMeta\n")
    (tmp_path / "embeddings" / "run.py").write_text("def f():\n    from lookbench.models.registry import KINDS\n")
    (tmp_path / "models" / "meta.py").write_text("from lookbench.models import registry\n")
    (tmp_path / "models" / "registry.py").write_text("from lookbench.embeddings import cache\n")
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == {("embeddings.run", "models"), ("models.meta", "models.registry")}


def test_embeddings_build_on_the_model_identity_below_them() -> None:
    """embeddings/ imports a model's identity from models/ and nothing else there; the identity imports no loader."""
    graph = import_graph(annotations=True)
    assert set(MODEL_IDENTITY) <= set(graph)
    below = {t for name, targets in graph.items() if package(name) == "embeddings" for t in targets}
    assert {"models.meta", "models.encoder", "models.preprocess", "models.embed_options"} <= below
    assert {t for t in below if package(t) == "models"} <= set(MODEL_IDENTITY)
    assert all(layer(m) < LAYERS["embeddings"] < LAYERS["models"] for m in MODEL_IDENTITY)
    for module in MODEL_IDENTITY:
        assert {t for t in graph[module] if package(t) == "models"} <= set(MODEL_IDENTITY), module


def test_every_package_has_a_layer() -> None:
    assert {package(m) for m in import_graph()} <= set(LAYERS)
    assert set(LAYERS) == CORE | set(WINGS) | {"__init__"}


def test_imports_point_downwards() -> None:
    assert upward_imports(import_graph()) == set()


def test_a_wing_importing_another_is_found(tmp_path: Path) -> None:
    for folder in ("release", "train", "publish"):
        (tmp_path / folder).mkdir()
    (tmp_path / "release" / "a.py").write_text("x = 1\n")
    (tmp_path / "train" / "b.py").write_text("def f():\n    from lookbench.release.a import x\n")
    (tmp_path / "publish" / "c.py").write_text("from lookbench.train import b\n")
    assert wing_imports(import_graph(tmp_path)) == {("train.b", "release"), ("publish.c", "train")}


def test_no_wing_imports_another() -> None:
    assert all(allowed == set() for allowed in WINGS.values())


def test_the_core_imports_no_wing_and_no_wing_another() -> None:
    assert wing_imports(import_graph(annotations=True)) == set()


def test_the_top_of_the_package_stays_small() -> None:
    entries = [p.name for p in ROOT.iterdir() if p.name not in ("__init__.py", "py.typed", "__pycache__")]
    assert len(entries) <= TOP_LEVEL_LIMIT, sorted(entries)


GETATTR_DEFAULTS = {
    "release/detect/owl.py:OwlDetector.__init__": "a transformers config's private `_commit_hash` (hub loads)",
    "models/hf_outputs.py:pooled_features": "transformers output classes differ by architecture; not ours to declare",
    "models/hf_model.py:_image_processor": "a transformers config, nested for vision towers; third-party",
    "models/hf_model.py:create_hf": "a transformers config's private `_commit_hash`, set only by hub loads",
    "models/timm_model.py:_hub_id": "a timm pretrained config; third-party",
    "models/open_clip_model.py:open_clip_preprocess": "open_clip's visual tower; third-party",
    "models/mteb_model.py:MtebEncoder.describe": "a loader's name: a functools.partial has no `__name__`",
    "models/python_model.py:load": "the factory the user's spec names in their module; a missing one is an error",
    "shards/ray_executor.py:_cause": "Ray's task error wraps the worker's exception as `cause`; third-party",
}
"""`getattr(obj, name, default)` calls allowed, by file:function, with why: each reads a third-party object or a name
the user gave. A capability of our own models and protocols is declared on the Protocol or record, never probed."""


def getattr_defaults(root: Path = ROOT) -> Iterator[str]:
    """`file:function` of every `getattr` call with a default (the shape of a probe), once per call."""
    for path in sorted(root.rglob("*.py")):
        tree = parsed(path)
        for scope, node in _calls(tree, ""):
            if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) == 3:
                yield f"{path.relative_to(root).as_posix()}:{scope}"


def _calls(node: ast.AST, scope: str) -> Iterator[tuple[str, ast.Call]]:
    """Every call under `node`, with the dotted name of the class or function it is in."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from _calls(child, f"{scope}.{child.name}" if scope else child.name)
            continue
        if isinstance(child, ast.Call):
            yield scope, child
        yield from _calls(child, scope)


def test_a_getattr_probe_is_found(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("class A:\n    def f(self, model):\n        return getattr(model, 'x', None)\n")
    assert list(getattr_defaults(tmp_path)) == ["m.py:A.f"]


def test_no_getattr_capability_probes() -> None:
    found = set(getattr_defaults())
    assert found - set(GETATTR_DEFAULTS) == set(), "declare the capability on the Protocol or record instead"
    assert set(GETATTR_DEFAULTS) - found == set(), "gone: remove it from GETATTR_DEFAULTS"


CLASSIFIERS: dict[str, dict[str, str]] = {
    "protocol_of": {
        "evaluation/plan.py:Plan.of": "the run's plan decides its protocol once; every stage reads the plan",
    },
    "subset_kind": {
        "snapshot/reader.py:Snapshot.kinds": "a snapshot decides its subsets' kinds once, from its folders",
    },
    "is_composed_subset": {
        "snapshot/schema.py:subset_kind": "the one classifier of a subset name",
        "snapshot/reader.py:Snapshot.check_subsets": "a requested name: unknown, or known but absent",
        "snapshot/source.py:is_snapshot_dir": "whether a folder is a snapshot at all, before one is opened",
        "results/tables.py:composed_scopes": "names read back from results, which keep no run plan",
        "release/card.py:root_card": "a release manifest's subsets",
        "datasets/cli/legacy_cmd.py:import_command": "an imported benchmark's card, for the eval hint printed",
    },
    "composed_scopes": {
        "results/tables.py:ordered_scopes": "a result's scopes, in display order",
        "evaluation/window.py:rewindow": "a result re-windowed from its per-query table",
        "publish/reports/report.py:summaries": "a result's scopes",
        "publish/reports/paper.py:paper_columns": "results' scopes",
        "publish/reports/sitedata.py:build_site_data": "runs' per-query subsets",
        "publish/reports/encode.py:scope_mask": "a per-query table's subsets",
    },
}
"""Where a subset's kind or a snapshot's protocol is still worked out from a name, by function, with why: a run reads
its plan, code holding a snapshot reads `Snapshot.kinds`, and results read back go through `composed_scopes`."""


def calls_of(name: str, root: Path = ROOT) -> set[str]:
    """`file:function` of every call of a function called `name` (bare or as an attribute)."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        for scope, node in _calls(parsed(path), ""):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if called == name:
                found.add(f"{path.relative_to(root).as_posix()}:{scope}")
    return found


def test_calls_are_found_in_their_functions(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f(s):\n    return [is_composed_subset(n) for n in s] + [x.protocol_of(s)]\n")
    assert calls_of("is_composed_subset", tmp_path) == {"m.py:f"} == calls_of("protocol_of", tmp_path)


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_names_are_classified_only_where_listed(name: str) -> None:
    found = calls_of(name)
    assert found - set(CLASSIFIERS[name]) == set(), f"read the run plan or Snapshot.kinds instead of {name}"
    assert set(CLASSIFIERS[name]) - found == set(), f"gone: remove it from CLASSIFIERS[{name!r}]"


def test_protocol_of_runs_once_per_run() -> None:
    assert len(CLASSIFIERS["protocol_of"]) == 1
