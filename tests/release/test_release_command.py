"""`lookbench release` is the builder's command; `lookbench build` still runs it, saying it is deprecated."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from lookbench.cli.main import app


def test_release_help_names_the_config() -> None:
    result = CliRunner().invoke(app, ["release", "--help"])
    assert result.exit_code == 0 and "config" in result.output.lower() and "resumes" in result.output


def test_build_is_a_deprecated_alias_with_the_same_errors(tmp_path: Path) -> None:
    config = tmp_path / "release.yaml"
    config.write_text("release_date: 2026-02-30\n")
    runner = CliRunner()
    old, new = runner.invoke(app, ["build", str(config)]), runner.invoke(app, ["release", str(config)])
    assert old.exit_code == new.exit_code == 2
    assert "`lookbench build` is deprecated: use `lookbench release`" in old.output
    assert "is deprecated" not in new.output
    assert new.output.strip().splitlines()[-1] in old.output
    assert "deprecated" in runner.invoke(app, ["build", "--help"]).output.lower()
