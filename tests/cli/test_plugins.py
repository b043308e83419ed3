"""Third-party plugins (`lookbench.commands`, `lookbench.snapshots` entry points) cannot break or replace lookbench:
a plugin that fails is left out with one line, a name that is lookbench's or not a command name is ignored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLUGIN = '''
import typer

def register(app: typer.Typer) -> None:
    @app.command("{name}")
    def cmd() -> None:
        """{text}"""
        print("{text}")
'''


def plugin(site: Path, dist: str, commands: dict[str, str], snapshots: dict[str, str] | None = None) -> None:
    """A distribution `dist` in `site` whose entry points name these command modules (and snapshot functions)."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"  # as wheels name it
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = ["[lookbench.commands]", *(f"{name} = {module}" for name, module in commands.items())]
    lines += ["[lookbench.snapshots]", *(f"{name} = {target}" for name, target in (snapshots or {}).items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def lookbench(site: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`lookbench ARGV` with `site` on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    code = "import sys; from lookbench.cli.main import run; sys.argv[0] = 'lookbench'; run()"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, check=False)


def warnings(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The warning lines on stderr."""
    return [line for line in done.stderr.splitlines() if line.startswith("warning: ")]


def test_a_plugin_that_fails_to_import_is_left_out_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "brokenplug.py").write_text("import not_a_module_anywhere\n")
    plugin(tmp_path, "broken-plugin", {"broken": "brokenplug"})
    done = lookbench(tmp_path, "--help")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "eval" in done.stdout and "broken " not in done.stdout
    assert warnings(done) == [
        "warning: plugin command 'broken' from broken-plugin left out: ModuleNotFoundError: "
        "No module named 'not_a_module_anywhere'"
    ]
    assert lookbench(tmp_path, "taxonomy").returncode == 0
    called = lookbench(tmp_path, "broken")
    assert called.returncode == 2 and "Traceback" not in called.stderr


def test_a_plugin_cannot_replace_a_core_or_wing_command(tmp_path: Path) -> None:
    (tmp_path / "evilplug.py").write_text(PLUGIN.format(name="verify", text="evil verify"))
    plugin(tmp_path, "evil-plugin", {"verify": "evilplug", "eval": "evilplug"})
    done = lookbench(tmp_path, "verify", "--help")
    assert done.returncode == 0 and "evil" not in done.stdout and "bundle" in done.stdout
    assert sorted(warnings(done)) == [
        "warning: plugin command 'eval' from evil-plugin ignored: lookbench has a command of that name",
        "warning: plugin command 'verify' from evil-plugin ignored: lookbench has a command of that name",
    ]


def test_a_name_that_is_not_a_command_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "oddplug.py").write_text(PLUGIN.format(name="--help", text="odd"))
    plugin(tmp_path, "odd-plugin", {"--help": "oddplug", "Bad_Name": "oddplug"})
    done = lookbench(tmp_path, "--help")
    assert done.returncode == 0 and "Traceback" not in done.stderr and "Commands:" in done.stdout
    assert sorted(warnings(done)) == [
        "warning: plugin command '--help' from odd-plugin ignored: not a valid command name",
        "warning: plugin command 'Bad_Name' from odd-plugin ignored: not a valid command name",
    ]


def test_two_plugins_with_one_name_are_both_left_out_whatever_their_order(tmp_path: Path) -> None:
    for dist, text in (("plugin-a", "from a"), ("plugin-b", "from b")):
        module = dist.replace("-", "_")
        (tmp_path / f"{module}.py").write_text(PLUGIN.format(name="hello", text=text))
        plugin(tmp_path, dist, {"hello": module})
    done = lookbench(tmp_path, "hello")
    assert done.returncode == 2 and "from a" not in done.stdout and "from b" not in done.stdout
    assert warnings(done) == [
        "warning: plugin command 'hello' ignored: registered by more than one plugin (plugin-a and plugin-b)"
    ]


def test_a_well_behaved_plugin_runs_and_is_listed(tmp_path: Path) -> None:
    (tmp_path / "goodplug.py").write_text(PLUGIN.format(name="say-hello", text="hello from a plugin"))
    plugin(tmp_path, "good-plugin", {"say-hello": "goodplug"})
    assert "say-hello" in lookbench(tmp_path, "--help").stdout
    done = lookbench(tmp_path, "say-hello")
    assert done.returncode == 0 and done.stdout.strip() == "hello from a plugin" and warnings(done) == []


def test_a_plugin_module_that_does_not_register_its_name_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "wrongplug.py").write_text(PLUGIN.format(name="other", text="x"))
    plugin(tmp_path, "wrong-plugin", {"mine": "wrongplug"})
    done = lookbench(tmp_path, "mine")
    assert done.returncode == 2
    assert warnings(done) == [
        "warning: plugin command 'mine' from wrong-plugin left out: its module does not register it"
    ]


def test_a_plugin_cannot_replace_a_named_snapshot(tmp_path: Path) -> None:
    (tmp_path / "snapplug.py").write_text("def folder():\n    raise SystemExit('the plugin snapshot was used')\n")
    plugin(tmp_path, "snap-plugin", {}, {"default": "snapplug:folder"})
    code = "from lookbench.snapshot.named import registered; print(registered()['default'].value)"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.stdout.strip() == "lookbench.datasets.synth.default:default_snapshot"
    assert (
        done.stderr.strip()
        == "warning: plugin snapshot name 'default' from snap-plugin ignored: lookbench has one of that name"
    )
