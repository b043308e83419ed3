"""`paper.tex` compiles with pdflatex in an A4 article and fits its text block, on a board of two releases whose
model names hold the characters LaTeX would print as other glyphs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from site_fixtures import synth_data_fixture, synth_runs_fixture  # noqa: F401
from synth_runs import copy_run, older_release
from typer.testing import CliRunner

from lookbench.cli.main import app

DOCUMENT = r"""\documentclass[a4paper]{article}
\usepackage{booktabs}
\usepackage{graphicx}
\begin{document}
\input{paper.tex}
\end{document}
"""


def renamed(result: dict) -> None:  # type: ignore[type-arg]
    """An edit for `copy_run`: the run on an earlier release under a long name of LaTeX's special characters."""
    older_release(result)
    result["model"]["name"] = "model<with>|pipes_and_100%_of{braces}&a-very-long-name-that-goes-on-and-on-and-on"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed (scripts/ensure-latex.sh)")
def test_paper_tex_compiles_and_fits_an_a4_text_block(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    other = copy_run(paths[0], tmp_path / "older.json", renamed)
    out = tmp_path / "paper"
    result = CliRunner().invoke(app, ["tables", *map(str, paths), str(other), "--format", "latex", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (out / "main.tex").write_text(DOCUMENT)
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    log = (out / "main.log").read_text(errors="replace")
    assert done.returncode == 0, log[-3000:]
    assert re.search(r"Output written on main\.pdf \(1 page", log), log[-2000:]
    assert "Overfull \\hbox" not in log and "Overfull \\vbox" not in log
    assert "Missing character" not in log  # every glyph of the names exists in the font
