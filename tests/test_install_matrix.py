"""The install matrix (tools/install_matrix.py) covers every install the docs name, every extra and every command;
and each command's declared extra is one that installs the modules it checks for."""

from __future__ import annotations

import importlib.util
import re
import sys
from importlib.metadata import PackageNotFoundError, metadata, packages_distributions, requires
from pathlib import Path
from types import ModuleType

import typer.main

from lookbench.cli.main import app, commands, table
from lookbench.cli.needs import DECLARED

ROOT = Path(__file__).resolve().parents[1]
EXTRA = re.compile(r"(?:lookbench|\.)\[([a-z,]+)\]")
NOT_RUN: dict[str, str] = {
    "annotate": "needs an OpenAI batch job; its refusal without the extra shares release's gate",
    "legacy": "needs a legacy benchmark's official distribution (tests/datasets/legacy builds small copies)",
    "scaling": "trains a grid of models: tests/train runs it on the tiny backbone in the torch tier",
}
"""Commands the matrix does not run, and why."""


def matrix() -> ModuleType:
    """tools/install_matrix.py as a module."""
    spec = importlib.util.spec_from_file_location("install_matrix", ROOT / "tools" / "install_matrix.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["install_matrix"] = module
    spec.loader.exec_module(module)
    return module


def documented_extras() -> set[str]:
    """Every extra a README, CONTRIBUTING or docs/ page tells a user to install (the dev extra aside)."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = {extra for page in pages for group in EXTRA.findall(page.read_text()) for extra in group.split(",")}
    return found - {"dev", "extra"}


def test_every_documented_and_declared_extra_is_installed_by_the_matrix() -> None:
    covered = {extra for install in matrix().INSTALLS for extra in install.extras}
    declared = set(metadata("lookbench").get_all("Provides-Extra") or [])
    assert documented_extras() - covered == set()
    assert declared - {"dev"} - covered == set()
    assert {"default", "release", "train", "hub", "ray"} <= covered


def test_every_command_is_run_by_the_matrix_or_says_why_not() -> None:
    steps = [step.argv for install in matrix().INSTALLS for step in install.steps]
    run = {argv[0] for argv in steps if not argv[0].startswith("--")}
    assert set(commands()) - run == set(NOT_RUN)
    assert NOT_RUN.keys() <= set(commands())


def test_the_bare_install_runs_every_help_and_refuses_each_gated_extra() -> None:
    module = matrix()
    bare = module.INSTALLS[0]
    assert bare.extras == () and module.HELP_ALL in [step.argv for step in bare.steps]
    refused = {step.refused for step in bare.steps if step.refused}
    gated = {needs.extra for needs in DECLARED.values()}
    assert {f"pip install 'lookbench[{extra}]'" for extra in gated} <= refused


def requirement_names(distribution: str, extra: str | None = None) -> set[str]:
    """The normalised names a distribution requires (with `extra`: that extra's only); none when not installed."""
    try:
        lines = requires(distribution) or []
    except PackageNotFoundError:
        return set()
    marker = f'extra == "{extra}"' if extra else "extra =="
    chosen = [line for line in lines if (marker in line) == (extra is not None)]
    return {re.split(r"[ ;<>=!~\[]", line)[0].lower().replace("_", "-") for line in chosen}


def test_each_gated_module_comes_with_its_extra() -> None:
    group = typer.main.get_command(app)
    for command in commands():
        group.get_command(None, command)  # type: ignore[attr-defined]  # loads the module: its gates register
    installed = packages_distributions()
    assert {needs.extra for needs in DECLARED.values()} == {"default", "release", "train"}
    for needs in DECLARED.values():
        direct = requirement_names("lookbench", needs.extra)
        closure = direct.union(*(requirement_names(name) for name in direct))
        for module in needs.modules:
            providers = {dist.lower().replace("_", "-") for dist in installed.get(module, [])}
            if providers:  # what this environment lacks, the install matrix checks
                assert providers & closure, f"{module} is not installed by lookbench[{needs.extra}]"


def test_lookbench_owns_every_command_in_the_table() -> None:
    assert all(not entry.plugin for entry in table().entries.values())
