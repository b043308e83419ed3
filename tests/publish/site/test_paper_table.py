"""`lookbench tables --format latex|csv|markdown`: the paper's table, its marks, its difference, hostile names."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from site_fixtures import synth_data_fixture, synth_runs_fixture, windowed_run_fixture  # noqa: F401
from synth_runs import NASTY_NAME, copy_run, older_release
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.evaluation.contamination.tables import windowed_runs
from lookbench.publish.reports.paper import SUBSET_METRICS, PaperRow, PaperTable, build_paper_table, latex_escape
from lookbench.results.io import load_result


def _tables(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["tables", *args])
    return result.exit_code, result.output


def _rows(table: PaperTable) -> dict[str, PaperRow]:
    return {row.run_id: row for row in table.rows}


def test_columns_marks_and_difference(synth_runs: tuple[Path, list[Path]], windowed_run: Path) -> None:
    _, paths = synth_runs
    table = build_paper_table(windowed_runs([*paths, windowed_run], None, None), baseline=None)
    scopes = [s for s, _ in table.columns]
    assert [m for _, m in table.columns] == [*SUBSET_METRICS, *SUBSET_METRICS, "fine_recall@1"]
    assert scopes == ["real_studio_flat"] * 3 + ["real_streetlook"] * 3 + ["overall"]
    results = [load_result(p) for p in paths]
    rows = _rows(table)
    # the windowed run is a block of its own: alone, it is marked nothing
    assert rows["sharp-since"].group != rows["sharp"].group and table.groups is not None and len(table.groups) == 2
    for j, (scope, metric) in enumerate(table.columns):
        values = [r.metrics[scope][metric].value for r in results]
        best = int(np.argmax(values))  # the first of equal maxima
        assert rows[paths[best].stem].cells[j].mark == "best"
        assert rows["sharp-since"].cells[j].mark == ""
        assert rows["blurry"].cells[j].mark == ""  # blurry is far behind


def test_rows_are_ranked_by_overall_fine_recall_within_a_block(synth_runs: tuple[Path, list[Path]]) -> None:
    _, paths = synth_runs
    table = build_paper_table(windowed_runs(list(reversed(paths)), None, None))
    overall = {p.stem: load_result(p).metrics["overall"]["fine_recall@1"].value for p in paths}
    by_hand = sorted(overall, key=lambda stem: -overall[stem])
    assert [row.run_id for row in table.rows] == by_hand and [row.rank for row in table.rows] == [1, 2, 3]


def test_difference_against_a_baseline_is_the_paired_mean_difference(
    synth_runs: tuple[Path, list[Path]], windowed_run: Path
) -> None:
    _, paths = synth_runs
    table = build_paper_table(windowed_runs([*paths, windowed_run], None, None), baseline="twin")
    results = [load_result(p) for p in paths]
    overall = [r.metrics["overall"]["fine_recall@1"].value for r in results]
    rows = _rows(table)
    sharp = rows["sharp"].difference
    assert sharp is not None and sharp.diff == pytest.approx(overall[0] - overall[1])
    assert sharp.ci_low <= sharp.diff <= sharp.ci_high
    assert rows["twin"].difference is None  # the baseline itself
    assert rows["sharp-since"].difference is None  # other queries: no paired difference
    assert "Δ: Overall Fine R@1 minus twin's" in table.caption()


def test_formats(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    files = list(map(str, paths))
    code, latex = _tables(*files, "--format", "latex", "--baseline", "sharp")
    assert code == 0, latex
    lines = latex.splitlines()
    assert lines[0] == r"\begin{table}[t]" and lines[-1] == r"\end{table}"
    assert [ln for ln in lines if ln in (r"\toprule", r"\midrule", r"\bottomrule")] == [
        r"\toprule",
        r"\midrule",
        r"\bottomrule",
    ]
    assert (
        lines[lines.index(r"\midrule") + 1]
        == r"\multicolumn{10}{l}{\textit{v20260201, every date, with the noise pool}} \\"
    )
    assert r"\caption{LookBench retrieval, in \%: value $\pm$ half the width of its 95\% bootstrap" in latex
    spec = next(ln for ln in lines if ln.startswith(r"\begin{tabular}"))
    width = sum(ch in "lr" for ch in spec.split("{")[2])
    body = lines[lines.index(r"\midrule") + 2 : lines.index(r"\bottomrule")]
    assert len(body) == 3 and all(row.count(" & ") == width - 1 for row in body)
    assert latex_escape(NASTY_NAME) in latex and "\\&amp;" in latex and "&amp;" not in latex.replace("\\&amp;", "")
    assert r"\textless{}" in latex_escape(NASTY_NAME) and "<" not in latex
    sharp = next(row for row in body if " & sharp & " in row)
    assert r"\textbf{" in latex and sharp.endswith(" & baseline \\\\")

    code, text = _tables(*files, "--format", "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert code == 0 and {len(r) for r in rows} == {5 + 5 * 7}
    assert rows[0][:5] == ["block", "rank", "run", "release", "model"]
    assert rows[0][5:10] == [
        "RealStudioFlat Fine R@1",
        "RealStudioFlat Fine R@1 ci_low",
        "RealStudioFlat Fine R@1 ci_high",
        "RealStudioFlat Fine R@1 n",
        "RealStudioFlat Fine R@1 mark",
    ]
    result = load_result(paths[0])
    sharp = next(r for r in rows if r[2] == "sharp")
    assert sharp[3] == "v20260201" and sharp[-5:-1] == [
        f"{100 * result.metrics['overall']['fine_recall@1'].value:.2f}",
        f"{100 * result.metrics['overall']['fine_recall@1'].ci_low:.2f}",
        f"{100 * result.metrics['overall']['fine_recall@1'].ci_high:.2f}",
        str(result.metrics["overall"]["fine_recall@1"].n),
    ]
    assert next(r for r in rows if r[2] == "blurry")[4].startswith(NASTY_NAME)

    code, md = _tables(*files, "--format", "markdown", "--out", str(tmp_path))
    assert code == 0 and (tmp_path / "paper.md").is_file()
    text = (tmp_path / "paper.md").read_text()
    assert "<script" not in text and "&lt;/script&gt;" in text
    assert "italics: a paired bootstrap on the same queries cannot tell it from the best" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "pdf"], "--format 'pdf': choose one of latex, csv, markdown"),
        (
            ["--format", "csv", "--baseline", "nobody"],
            "--baseline 'nobody' is no run id or label; run ids: sharp, twin, blurry",
        ),
        (["--baseline", "sharp"], "--baseline needs --format"),
    ],
)
def test_bad_options_are_one_line_errors(synth_runs: tuple[Path, list[Path]], args: list[str], message: str) -> None:
    _, paths = synth_runs
    code, output = _tables(*map(str, paths), *args)
    assert code == 2 and message in output and len(output.strip().splitlines()) == 1


def test_two_runs_with_one_title_cannot_be_the_baseline(synth_runs: tuple[Path, list[Path]]) -> None:
    _, paths = synth_runs
    code, output = _tables(str(paths[0]), str(paths[0]), "--format", "csv", "--baseline", "sharp")
    assert code == 2 and "--baseline 'sharp' is no run id or label; run ids: sharp#1, sharp#2" in output
    code, output = _tables(str(paths[0]), str(paths[0]), "--format", "csv", "--baseline", "sharp#2")
    assert code == 0 and ",sharp#2,v20260201,sharp (sharp#2)," in output


def test_the_distractor_share_column_marks_the_lowest(synth_runs: tuple[Path, list[Path]]) -> None:
    _, paths = synth_runs
    table = build_paper_table(windowed_runs(paths, None, None), distractors=True)
    assert table.columns[-1] == ("overall", "distractor_share@1")
    shares = [load_result(p).metrics["overall"]["distractor_share@1"].value for p in paths]
    best = min(range(len(shares)), key=lambda i: (shares[i], i))
    assert _rows(table)[paths[best].stem].cells[-1].mark == "best"
    assert "lower is better" in table.caption()
    code, text = _tables(*map(str, paths), "--format", "markdown", "--distractor-share")
    assert code == 0 and "Overall Distractor@1" in text.splitlines()[2]


def test_plain_tables_tell_runs_of_one_model_apart(synth_runs: tuple[Path, list[Path]], tmp_path: Path) -> None:
    _, paths = synth_runs
    long_name = "efficientnet_b0_fashion_finetuned_large"

    def reseeded(result: dict[str, object]) -> None:
        result["config"]["bootstrap"]["seed"] = 7  # type: ignore[index]
        result["model"]["name"] = long_name  # type: ignore[index]

    def renamed(result: dict[str, object]) -> None:
        result["model"]["name"] = long_name  # type: ignore[index]

    runs = [copy_run(paths[0], tmp_path / "a.json", renamed), copy_run(paths[0], tmp_path / "b.json", reseeded)]
    runs.append(copy_run(paths[0], tmp_path / "c.json", lambda r: (renamed(r), older_release(r))))
    code, output = _tables(*map(str, runs), "--metrics", "fine_recall@1", "--out", str(tmp_path / "t"))
    assert code == 0, output
    assert long_name in output and "…" not in output  # the name column folds; it never cuts a name
    with (tmp_path / "t" / "tables.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    overall = {row["run_id"]: row for row in rows if row["subset"] == "overall"}
    assert {i: (r["model"], r["release"]) for i, r in overall.items()} == {
        "a": (f"{long_name} (v20260201, seed 0)", "v20260201"),
        "b": (f"{long_name} (v20260201, seed 7)", "v20260201"),
        "c": (f"{long_name} (v20251215, seed 0)", "v20251215"),
    }
    expected = load_result(paths[0]).metrics["overall"]["fine_recall@1"].value
    assert {float(r["value"]) for r in overall.values()} == {expected}
    md = (tmp_path / "t" / "tables.md").read_text()
    shown = long_name.replace("_", "\\_")  # Markdown escapes the underscores
    assert len({line.split(" | ")[0] for line in md.splitlines() if line.startswith(f"| {shown} (")}) == 3
