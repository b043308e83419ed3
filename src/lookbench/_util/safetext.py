"""Untrusted text (model names, labels, paths) made inert in the formats written: CSV, Markdown, LaTeX."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|!])")

LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "‡": r"$\ddagger$",
    "†": r"$\dagger$",
    "Δ": r"$\Delta$",
    "≥": r"$\geq$",
    "±": r"$\pm$",
    "–": "--",
}
"""Each LaTeX special character and symbol as typeset text (the published site escapes with the same table)."""


def one_line(text: str) -> str:
    """Every run of whitespace (newlines, tabs, carriage returns included) as one space, trimmed."""
    return " ".join(text.split())


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet will not run: text starting with = + - @, a tab or a carriage return gets a
    leading `'` (OWASP), unless it is a plain number; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_row(values: Sequence[object]) -> list[object]:
    """`csv_cell` of every cell."""
    return [csv_cell(v) for v in values]


def markdown_cell(text: str) -> str:
    """Text shown as typed inside a Markdown table cell: on one line, HTML escaped, and every character that makes
    markup (pipes, emphasis, code, links and images, autolinks) backslash-escaped."""
    return html.escape(_MARKDOWN_SPECIAL.sub(r"\\\1", one_line(text)), quote=False)


def latex_escape(text: str) -> str:
    """Text safe in LaTeX on one line: special characters escaped, marks and symbols in math mode."""
    return "".join(LATEX.get(ch, ch) for ch in one_line(text))
