"""The CLI reference (docs/cli.md), rendered from the app's own `--help` texts so it cannot drift from the commands."""

from __future__ import annotations

import os

from typer.testing import CliRunner

from lookbench.cli.main import app, commands

HEADER = """# CLI reference

Generated from the `lookbench` app by `python -m lookbench.cli.reference > docs/cli.md`; a test keeps it current.
Each section is what `--help` prints. A command given a bad input exits with status 2 and one line naming it.
"""
WIDTH = "100"
"""Columns the help texts are rendered at, fixed so the file does not depend on the terminal."""


def help_text(path: list[str]) -> str:
    """What `lookbench PATH --help` prints."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": WIDTH, "TERMINAL_WIDTH": WIDTH})
    if result.exit_code != 0:
        raise RuntimeError(f"lookbench {' '.join(path)} --help failed: {result.output}")
    return result.output.rstrip() + "\n"


def subcommands(text: str) -> list[str]:
    """The subcommand names a group's help lists under `Commands:`."""
    if "\nCommands:\n" not in text:
        return []
    listed = text.split("\nCommands:\n", 1)[1].splitlines()
    return [line.split()[0] for line in listed if line.startswith("  ") and not line.startswith("   ")]


def section(path: list[str]) -> str:
    """One command's section, then its subcommands' sections."""
    text = help_text(path)
    out = f"\n## lookbench {' '.join(path)}\n\n```text\n{text}```\n"
    return out + "".join(section([*path, name]) for name in subcommands(text))


def render() -> str:
    """The whole reference: every command in `--help` order, groups with their subcommands."""
    os.environ.setdefault("COLUMNS", WIDTH)
    return HEADER + "".join(section([name]) for name in commands())


if __name__ == "__main__":
    print(render(), end="")
