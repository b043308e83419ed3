"""`lookbench release` is the builder's command; `lookbench build` is gone and says so in one line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from lookbench.cli.main import app


def test_release_help_names_the_config() -> None:
    result = CliRunner().invoke(app, ["release", "--help"])
    assert result.exit_code == 0 and "config" in result.output.lower() and "resumes" in result.output


def test_build_was_removed_and_says_what_replaces_it(tmp_path: Path) -> None:
    config = tmp_path / "release.yaml"
    config.write_text("release_date: 2026-02-30\n")
    result = CliRunner().invoke(app, ["build", str(config)])
    assert result.exit_code == 2
    assert result.output.strip() == "`lookbench build` was removed: use `lookbench release` (same arguments)"
