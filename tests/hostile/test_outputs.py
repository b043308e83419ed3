"""Written outputs under hostile input: formulas, markup and line breaks in names stay inert text; odd files and
values are refused in one line."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hostilekit import clean_error, evaluate, invoke, make_snapshot, vectors, write_vectors

NAMES = {
    "formula": '=HYPERLINK("http://evil","x")',
    "plus": "+cmd|' /C calc'!A0",
    "minus": "-2+3",
    "at": "@SUM(A1)",
    "markdown": "a|b [click](javascript:alert(1)) ![x](http://evil/p.png) *bold*",
    "latex": "A&B_1 #2 $x$ \\end{tabular} 50%",
    "newline": "line one\nline two\\\\ \\hline",
}


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    snap = make_snapshot(root / "s")
    runs = []
    for key, name in NAMES.items():
        out = root / f"{key}.json"
        evaluate(snap, write_vectors(root / key, vectors(), card={"name": name}), out)
        runs.append(out)
    return runs


def _csv_names(text: str) -> list[str]:
    return [row["model"] for row in csv.DictReader(io.StringIO(text))]


def test_csv_cells_never_start_a_formula(hostile_runs: list[Path], tmp_path: Path) -> None:
    assert invoke("tables", *map(str, hostile_runs), "--out", str(tmp_path / "t")).exit_code == 0
    assert invoke("tables", *map(str, hostile_runs), "--format", "csv", "--out", str(tmp_path / "p")).exit_code == 0
    for text in ((tmp_path / "t" / "tables.csv").read_text(), (tmp_path / "p" / "paper.csv").read_text()):
        names = _csv_names(text)
        for key in ("formula", "plus", "minus", "at"):
            assert any(n.startswith("'" + NAMES[key]) for n in names), (key, names)  # as typed, behind a quote
        assert not [n for n in names if n.startswith(("=", "+", "-", "@"))]
    values = [row["value"] for row in csv.DictReader(io.StringIO((tmp_path / "t" / "tables.csv").read_text()))]
    assert all(float(v) == 1.0 for v in values)  # numbers stay numbers


def test_markdown_keeps_no_link_image_or_pipe_live(hostile_runs: list[Path], tmp_path: Path) -> None:
    assert invoke("tables", *map(str, hostile_runs), "--out", str(tmp_path / "t")).exit_code == 0
    assert (
        invoke("tables", *map(str, hostile_runs), "--format", "markdown", "--out", str(tmp_path / "p")).exit_code == 0
    )
    for text in ((tmp_path / "t" / "tables.md").read_text(), (tmp_path / "p" / "paper.md").read_text()):
        row = next(line for line in text.splitlines() if "click" in line)
        assert not re.search(r"(?<!\\)\]\(", row) and not re.search(r"!\[", row)  # no live link or image
        assert "\\[click\\](javascript:" in row and "\\!\\[x\\](http://evil/p.png)" in row  # shown as typed
        header = next(line for line in text.splitlines() if line.startswith("| "))
        assert row.replace("\\|", "").count("|") == header.count("|")  # the name's pipe splits no cell
        assert "line one line two" in text  # the newline name stays one row


def test_latex_escapes_specials_and_line_breaks(hostile_runs: list[Path], tmp_path: Path) -> None:
    assert invoke("tables", *map(str, hostile_runs), "--format", "latex", "--out", str(tmp_path)).exit_code == 0
    text = (tmp_path / "paper.tex").read_text()
    rows = [line for line in text.splitlines() if line.endswith(r"\\") and "&" in line]
    assert r"A\&B\_1 \#2 \$x\$ \textbackslash{}end\{tabular\} 50\%" in text
    newline_row = next(line for line in rows if "line one" in line)
    assert "line two" in newline_row and r"\textbackslash{}\textbackslash{} \textbackslash{}hline" in newline_row
    assert r"\end{tabular}" in text and text.count(r"\end{tabular}") == 1


def test_an_npz_posing_as_npy_is_named(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    emb = write_vectors(tmp_path / "e", vectors())
    target = emb / "real_studio_flat" / "query.npy"
    with target.open("wb") as handle:
        np.savez(handle, a=vectors()["real_studio_flat/query"])
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "-o", str(tmp_path / "r.json"))
    clean_error(run, str(target), "an .npz archive, not a .npy array")


def test_json_nested_200000_deep_is_refused(tmp_path: Path) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    result = tmp_path / "deep.json"
    result.write_text(deep)
    clean_error(invoke("tables", str(result)), str(result), "nested too deeply")
    snap = make_snapshot(tmp_path / "s")
    (snap / "MANIFEST.json").write_text('{"files": ' + deep + "}")
    clean_error(invoke("snapshot", "validate", str(snap)), str(snap / "MANIFEST.json"), "nested too deeply")


def test_yaml_nested_too_deep_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "release.yaml"
    config.write_text("sources: " + "[" * 20_000 + "]" * 20_000 + "\n")
    clean_error(invoke("release", str(config)), str(config), "nested too deeply")


def test_a_cutoff_on_the_last_day_is_refused_for_since_cutoff(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    emb = write_vectors(tmp_path / "e", vectors(), card={"name": "m", "training_cutoff": "9999-12-31"})
    run = invoke("eval", "-s", str(snap), "-m", f"embeddings:{emb}", "--since", "cutoff", "-o", str(tmp_path / "r"))
    clean_error(run, "--since cutoff", "'9999-12-31' has no day after it")


def test_audit_refuses_a_negative_seed(tmp_path: Path) -> None:
    clean_error(invoke("audit", str(make_snapshot(tmp_path / "s")), "--seed", "-1"), "--seed")


def test_the_report_page_names_a_local_snapshot_by_its_folder(tmp_path: Path) -> None:
    snap = make_snapshot(tmp_path / "s")
    out = tmp_path / "r.json"
    evaluate(snap, write_vectors(tmp_path / "e", vectors()), out)
    assert json.loads(out.read_text())["snapshot"]["location"] == str(snap)
    assert invoke("report", str(out), "--out", str(tmp_path / "page")).exit_code == 0
    page = (tmp_path / "page" / "index.html").read_text()
    assert str(tmp_path) not in page and f"read from {snap.name})" in page


_PAGE_ESCAPES = """
const fs = require("fs");
const src = fs.readFileSync(process.argv[1], "utf8");
function grab(name) {
  const start = src.indexOf("  function " + name + "(");
  let depth = 0;
  for (let k = src.indexOf("{", start); k < src.length; k++) {
    if (src[k] === "{") depth++;
    if (src[k] === "}" && --depth === 0) return src.slice(start, k + 1);
  }
}
const D = { paper: { latex: JSON.parse(process.argv[2]) } };
const f = new Function("D", ["markdownCell", "oneLine", "csvField", "latex"].map(grab).join("\\n")
  + "\\nreturn [markdownCell, csvField, latex];")(D);
const names = JSON.parse(process.argv[3]);
console.log(JSON.stringify(names.map((n) => f.map((g) => g(n)))));
"""


def test_the_page_exports_escape_names_as_tables_does() -> None:
    """The leaderboard's LaTeX, CSV and Markdown exports (site.js) escape a name exactly as `tables --format`."""
    import shutil
    import subprocess

    import lookbench.publish.reports
    from lookbench._util.safetext import LATEX, csv_cell, latex_escape, markdown_cell

    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    names = [*NAMES.values(), "-2.5", "\tx", "a `c` \\ <s>&", "sharp [since 2026-01-01]", 'q"uote,comma', "plain"]
    script = Path(lookbench.publish.reports.__file__).parent / "static" / "site.js"
    done = subprocess.run(
        [node, "-e", _PAGE_ESCAPES, str(script), json.dumps(LATEX), json.dumps(names)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    for name, (markdown, csv_text, latex) in zip(names, json.loads(done.stdout), strict=True):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow([csv_cell(name)])
        assert (markdown, csv_text, latex) == (markdown_cell(name), buf.getvalue()[:-1], latex_escape(name)), name
