"""The release package's imports point one way: commands -> pipeline -> stages -> helpers -> config and records."""

from __future__ import annotations

import ast
from pathlib import Path

import lookbench.release

ROOT = Path(lookbench.release.__file__).parent
BASE = {"config", "records"}
STAGES = {"collect", "dedup", "crop", "annotate", "audit", "distractors", "split", "publish"}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def imported(path: Path) -> set[str]:
    """Release modules a file imports (absolute or relative, at any depth of the file)."""
    package = module_name(path).split(".")[:-1] if path.name != "__init__.py" else module_name(path).split(".")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(["lookbench", "release", *package[: len(package) - node.level + 1], base]).strip(".")
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if (
                name.startswith("lookbench.release.")
                and (ROOT / (name[18:].replace(".", "/") + ".py")).exists()
                or name.startswith("lookbench.release.")
                and (ROOT / name[18:].replace(".", "/")).is_dir()
            ):
                found.add(name[18:])
    return found


def layer(module: str) -> int:
    """0 config and records, 1 helpers, 2 the Stage protocol, 3 a stage, 4 the pipeline, 5 the wing's commands."""
    top = module.split(".")[0]
    if top == "cli":
        return 5
    if top == "pipeline":
        return 4
    if module == "stages.base" or module == "stages":
        return 2
    if top == "stages":
        return 3
    return 0 if top in BASE else 1


def test_imports_never_point_upwards():
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    assert {f"stages.{s}" for s in STAGES} <= set(modules) and "pipeline" in modules
    wrong = []
    for name, path in sorted(modules.items()):
        for target in sorted(imported(path)):
            if target == name:
                continue
            upward = layer(target) > layer(name)
            sideways_stage = layer(target) == 3 and layer(name) == 3
            if upward or sideways_stage:
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_nothing_but_the_cli_imports_the_pipeline_or_a_stage():
    src = ROOT.parent
    wrong = []
    for path in sorted(src.rglob("*.py")):
        if path.is_relative_to(ROOT) or path.is_relative_to(src / "cli"):
            continue
        text = path.read_text()
        if "lookbench.release.pipeline" in text or "lookbench.release.stages" in text:
            wrong.append(str(path.relative_to(src)))
    assert wrong == []
