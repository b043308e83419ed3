"""docs/cli.md is the app's own help, current: a command or option changed without regenerating it fails here."""

from __future__ import annotations

from pathlib import Path

from lookbench.cli.main import commands
from lookbench.cli.reference import render, subcommands

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_cli_reference_is_current() -> None:
    assert DOCS.read_text(encoding="utf-8") == render(), "run: python -m lookbench.cli.reference > docs/cli.md"


def test_the_reference_covers_every_command_and_subcommand() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert all(f"\n## lookbench {name}\n" in text for name in commands())
    assert "\n## lookbench snapshot validate\n" in text and "\n## lookbench legacy import\n" in text


def test_subcommands_are_read_from_a_groups_help() -> None:
    text = "Usage: x\n\nCommands:\n  validate  Check.\n  info      Show\n            more.\n"
    assert subcommands(text) == ["validate", "info"]
    assert subcommands("Usage: x\n\nOptions:\n  --help  Show.\n") == []
