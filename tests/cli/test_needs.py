"""A command whose extra is missing stops in one line naming the install, before it does anything."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from lookbench.cli.needs import DECLARED, Needs, needs


def test_a_missing_module_stops_the_command_in_one_line_before_it_runs(tmp_path: Path) -> None:
    app = typer.Typer()

    @app.command()
    @needs("release", "json", "no_such_module_here")
    def write(out: Path) -> None:
        out.write_text("written")

    result = CliRunner().invoke(app, [str(tmp_path / "out.txt")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: this command needs the release extra: pip install 'lookbench[release]' (missing: no_such_module_here)"
    ]
    assert not (tmp_path / "out.txt").exists()


def test_help_works_without_the_extra_and_the_command_runs_with_it(tmp_path: Path) -> None:
    app = typer.Typer()

    @app.command()
    @needs("default", "json")
    def write(out: Path) -> None:
        """Write a file."""
        out.write_text("written")

    assert "Write a file." in CliRunner().invoke(app, ["--help"]).output
    assert CliRunner().invoke(app, [str(tmp_path / "out.txt")]).exit_code == 0
    assert (tmp_path / "out.txt").read_text() == "written"
    assert Needs("default", ("json",)) in DECLARED.values()
