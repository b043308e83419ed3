"""`lookbench` imports a command's module only when that command runs, and still lists every command."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from conftest import make_row, write_snapshot
from lookbench.cli.main import CORE_COMMANDS, app, commands


def test_every_command_module_is_mapped_to_exactly_its_commands() -> None:
    registered: dict[str, str] = {}
    for module in sorted(set(commands().values())):
        eager = typer.Typer()
        importlib.import_module(module).register(eager)
        names = [c.name for c in eager.registered_commands] + [g.name for g in eager.registered_groups]
        registered.update(dict.fromkeys(names, module))
    assert registered == commands()


def test_the_wings_commands_come_from_entry_points_and_the_cores_first() -> None:
    found = commands()
    assert list(found)[: len(CORE_COMMANDS)] == list(CORE_COMMANDS)
    assert {"train", "release", "synth", "submit", "leaderboard"} <= set(found) - set(CORE_COMMANDS)
    assert all(module.startswith("lookbench.cli.") for module in CORE_COMMANDS.values())
    wings = {found[name].split(".")[1] for name in set(found) - set(CORE_COMMANDS)}
    assert wings == {"datasets", "release", "train", "publish"}


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    lines = result.output.split("Commands:")[1].splitlines()
    listed = [line.split()[0] for line in lines if line.startswith("  ") and not line.startswith("   ")]
    assert listed == list(commands())


def test_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["evaluate"])
    assert result.exit_code == 2 and "No such command 'evaluate'" in result.output


def test_eval_imports_neither_other_commands_nor_pandas(tmp_path: Path) -> None:
    pytest.importorskip("pandas")  # where pandas is missing nothing could import it
    rows = [make_row("a", "dress", "red", ["v-neck"]), make_row("b", "skirt", "blue", [])]
    snap = write_snapshot(tmp_path / "snap", {"real_studio_flat": {"query": rows, "gallery": rows}}, "v20260301")
    for split in ("query", "gallery"):
        (tmp_path / "emb" / "real_studio_flat").mkdir(parents=True, exist_ok=True)
        np.save(tmp_path / "emb" / "real_studio_flat" / f"{split}.npy", np.eye(2, 4, dtype=np.float32))
    emb, out = tmp_path / "emb", tmp_path / "r.json"
    argv = ["lookbench", "eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(out)]
    code = (
        "import json, sys\n"
        "from lookbench.cli.main import app\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    app()\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    modules = set(json.loads(done.stdout.splitlines()[-1]))
    assert out.exists()
    assert "pandas" not in modules
    assert sorted(m for m in modules if m.endswith("_cmd")) == ["lookbench.cli.eval_cmd"]
    wings = ("lookbench.datasets", "lookbench.release", "lookbench.train", "lookbench.publish")
    assert not {m for m in modules if m.startswith(("lookbench.evaluation.contamination", *wings))}
