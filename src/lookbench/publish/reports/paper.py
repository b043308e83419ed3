"""The paper's table: models as rows; each subset's Fine R@1, Coarse R@1 and nDCG@5, then Overall Fine R@1, with the
best and the runs a paired bootstrap cannot tell from it marked, and a difference against a baseline run."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookbench._util.safetext import LATEX, csv_row, latex_escape, markdown_cell
from lookbench.errors import ResultError
from lookbench.evaluation.contamination.flags import marks
from lookbench.evaluation.contamination.tables import WindowedRun
from lookbench.metrics.aggregate import OVERALL
from lookbench.metrics.bootstrap import PairedTest
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.publish.reports.comparable import comparable_groups, identity_labels, pick_run, run_ids
from lookbench.publish.reports.runs import LoadedRun, query_set_groups
from lookbench.publish.reports.ties import TIE_P
from lookbench.publish.reports.tiestats import TIE_CONFIDENCE, TIE_RESAMPLES, PairTester
from lookbench.results.schema import MetricValue
from lookbench.results.tables import composed_scopes, ordered_scopes, percent, scope_title, short_metric

SUBSET_METRICS = ("fine_recall@1", "coarse_recall@1", "ndcg@5")
OVERALL_METRIC = "fine_recall@1"
"""The paper's Overall column: Fine Recall@1 over every query of the image subsets."""
FORMATS = ("latex", "csv", "markdown")


@dataclass(frozen=True)
class PaperCell:
    """One value; `mark` is 'best', 'tied' (paired p >= 0.05 against the best, same queries) or ''."""

    value: MetricValue | None
    mark: str


@dataclass(frozen=True)
class PaperRow:
    """A run: its cells in column order and its Overall Fine R@1 difference against the baseline."""

    run: str
    """The run's identity label (what --baseline names, as does `run_id`)."""
    label: str
    """The label with the run's contamination flags."""
    cells: list[PaperCell]
    difference: PairedTest | None
    run_id: str = ""
    group: int = 0
    """Its block: the index of its release-window-noise group in `PaperTable.groups`."""
    rank: int = 0
    """1 for the highest Overall Fine R@1 of its block."""
    release: str = ""
    """The snapshot id it was scored on."""


@dataclass(frozen=True)
class PaperTable:
    """Rows block by block (newest release first), ranked by Overall Fine R@1 within a block; columns (scope,
    metric)."""

    columns: list[tuple[str, str]]
    rows: list[PaperRow]
    baseline: str | None
    resamples: int
    confidence: float
    groups: list[str] | None = None
    """Each block's title: the release, window and noise setting its runs share."""

    def caption(self, tied: str = "underlined") -> str:
        """What the values, marks and difference mean (the interval convention); `tied`: how ties are shown."""
        text = caption_text(self.resamples, self.confidence, tied)
        if (OVERALL, DISTRACTOR_METRIC) in self.columns:
            text += DISTRACTOR_CAPTION
        return text if self.baseline is None else text + difference_caption(self.baseline)


def caption_text(resamples: int, confidence: float, tied: str) -> str:
    """The caption's interval convention and marks."""
    return (
        f"LookBench retrieval, in %: value ± half the width of its {confidence:.0%} bootstrap percentile "
        f"interval ({resamples:,} resamples of queries within each subset, a street photo's garments "
        f"resampled together). Rows are ranked by Overall Fine R@1 within a block of runs on the same release, window "
        f"and noise setting; marks compare only such runs. Bold: best of its column in its block; {tied}: a paired "
        f"bootstrap on the same queries cannot tell it from the best (p ≥ {TIE_P}). Overall: Fine R@1 over every "
        "query."
    )


def difference_caption(baseline: str) -> str:
    """The caption's sentence on the difference column."""
    return (
        f" Δ: Overall Fine R@1 minus {baseline}'s, in points, with its paired {TIE_CONFIDENCE:.0%} "
        f"interval ({TIE_RESAMPLES:,} resamples); – where the runs scored different queries."
    )


DISTRACTOR_CAPTION = (
    " Distractor share@1: the share of queries whose top-1 result is a distractor; lower is better, so its bold marks"
    " the lowest."
)


def column_title(scope: str, metric: str) -> str:
    """A column's title in Markdown and CSV, e.g. 'RealStreetLook Fine R@1'."""
    return f"{scope_title(scope)} {short_metric(metric)}"


def page_spec(runs: list[LoadedRun]) -> dict[str, Any]:
    """What the leaderboard page needs to build the same table: columns, titles and the caption's wording."""
    boot = runs[0].result.config.bootstrap
    return {
        "columns": [
            {"scope": s, "metric": m, "title": column_title(s, m), "group": scope_title(s), "short": short_metric(m)}
            for s, m in paper_columns(runs)
        ],
        "caption": {tied: caption_text(boot.resamples, boot.confidence, tied) for tied in ("underlined", "italics")},
        "difference": difference_caption("{baseline}"),
        "overallMetric": OVERALL_METRIC,
        "distractor": {
            "column": {
                "scope": OVERALL,
                "metric": DISTRACTOR_METRIC,
                "title": column_title(OVERALL, DISTRACTOR_METRIC),
                "group": scope_title(OVERALL),
                "short": short_metric(DISTRACTOR_METRIC),
            },
            "caption": DISTRACTOR_CAPTION,
        },
        "tieP": TIE_P,
        "tieResamples": TIE_RESAMPLES,
        "tieConfidence": TIE_CONFIDENCE,
        "latex": LATEX,
    }


def paper_columns(runs: list[LoadedRun]) -> list[tuple[str, str]]:
    """Each image subset any run scored (LookBench's order) with the subset metrics, then Overall."""
    scopes = ordered_scopes(s for r in runs for s in r.result.metrics)
    left_out = {OVERALL, "composed_overall", "average", *composed_scopes(scopes)}
    subsets = [s for s in scopes if s not in left_out]
    return [(s, m) for s in subsets for m in SUBSET_METRICS] + [(OVERALL, OVERALL_METRIC)]


def _value(run: LoadedRun, scope: str, metric: str) -> MetricValue | None:
    return run.result.metrics.get(scope, {}).get(metric)


def _marks(runs: list[LoadedRun], tester: PairTester, scope: str, metric: str, block: list[int]) -> dict[int, str]:
    """Best and tied-with-best among a block's runs of its largest query set of a scope (none for a lone run); the
    lowest is best for the distractor share."""
    groups = query_set_groups([runs[i] for i in block], scope)
    members = [block[i] for i in (groups[0] if groups else []) if _value(runs[block[i]], scope, metric) is not None]
    if len(members) < 2:
        return {}
    sign = -1.0 if metric == DISTRACTOR_METRIC else 1.0
    best = max(members, key=lambda i: (sign * _value(runs[i], scope, metric).value, -i))  # type: ignore[union-attr]
    out = {best: "best"}
    for i in members:
        if i != best:
            p = tester.p(i, best, metric, scope)
            if p is not None and p >= TIE_P:
                out[i] = "tied"
    return out


def _same_queries(runs: list[LoadedRun], a: int, b: int) -> bool:
    return any(a in group and b in group for group in query_set_groups(runs, OVERALL))


def ranked(runs: list[LoadedRun], block: list[int]) -> list[int]:
    """A block's runs by Overall Fine R@1, highest first (runs without it last, in their order)."""

    def key(i: int) -> tuple[bool, float, int]:
        value = _value(runs[i], OVERALL, OVERALL_METRIC)
        return (value is None, -(value.value if value is not None else 0.0), i)

    return sorted(block, key=key)


def _loaded(windowed: list[WindowedRun]) -> list[LoadedRun]:
    runs: list[LoadedRun] = []
    for w in windowed:
        if w.per_query is None:
            raise ResultError(f"{w.path}: the paper table needs the run's per-query file (rerun `lookbench eval`)")
        runs.append(LoadedRun(w.path, w.result, w.per_query))
    if not runs:
        raise ResultError("no result files given")
    return runs


def build_paper_table(
    windowed: list[WindowedRun], baseline: str | None = None, distractors: bool = False
) -> PaperTable:
    """The table for runs (each already cut to its window), one block per release, window and noise setting;
    `baseline` is a run id or label; `distractors` adds Overall distractor share@1."""
    runs = _loaded(windowed)
    ids = run_ids([w.path for w in windowed])
    labels = identity_labels([w.evaluated for w in windowed], ids)
    base = None if baseline is None else pick_run(baseline, ids, labels)
    tester = PairTester([r.per_query for r in runs], seed=runs[0].result.config.bootstrap.seed)
    columns = paper_columns(runs) + ([(OVERALL, DISTRACTOR_METRIC)] if distractors else [])
    blocks = comparable_groups([w.evaluated for w in windowed])
    rows = []
    for g, block in enumerate(blocks):
        marks_by_column = [_marks(runs, tester, scope, metric, block.members) for scope, metric in columns]
        for rank, i in enumerate(ranked(runs, block.members), 1):
            cells = [
                PaperCell(_value(runs[i], scope, metric), marks_by_column[j].get(i, ""))
                for j, (scope, metric) in enumerate(columns)
            ]
            difference = None
            if base is not None and i != base and base in block.members and _same_queries(runs, i, base):
                difference = tester.test(i, base, OVERALL_METRIC, OVERALL)
            label = f"{labels[i]} {marks(windowed[i].flags)}".rstrip()
            rows.append(
                PaperRow(labels[i], label, cells, difference, ids[i], g, rank, windowed[i].evaluated.snapshot.id)
            )
    boot = runs[0].result.config.bootstrap
    shown_base = None if base is None else labels[base]
    return PaperTable(columns, rows, shown_base, boot.resamples, boot.confidence, [b.title for b in blocks])


def _cell_text(cell: PaperCell) -> str:
    return percent(cell.value, half_width=True)


def _difference_text(row: PaperRow, label: str, baseline: str | None) -> str:
    if baseline is None:
        return ""
    if label == baseline:
        return "baseline"
    d = row.difference
    if d is None:
        return "–"
    return f"{100 * d.diff:+.2f} [{100 * d.ci_low:+.2f}, {100 * d.ci_high:+.2f}]"


def _header(table: PaperTable) -> list[str]:
    titles = [column_title(scope, metric) for scope, metric in table.columns]
    return ["#", "model", *titles, *([f"Δ vs {table.baseline} (pts)"] if table.baseline is not None else [])]


def _blocks(table: PaperTable) -> list[tuple[str, list[PaperRow]]]:
    """Each block's title and rows."""
    return [(title, [r for r in table.rows if r.group == g]) for g, title in enumerate(table.groups or [""])]


def _mark_markdown(cell: PaperCell) -> str:
    text = _cell_text(cell)
    return f"**{text}**" if cell.mark == "best" else f"_{text}_" if cell.mark == "tied" else text


def to_markdown(table: PaperTable) -> str:
    """A Markdown table per block under its title: best in bold, tied with the best in italics; the caption last."""
    head = _header(table)
    parts = []
    for title, rows in _blocks(table):
        lines = [
            f"**{markdown_cell(title)}**",
            "",
            "| " + " | ".join(head) + " |",
            "|---:|---|" + "---:|" * (len(head) - 2),
        ]
        for row in rows:
            extra = [_difference_text(row, row.run, table.baseline)] if table.baseline is not None else []
            cells = [str(row.rank), markdown_cell(row.label), *map(_mark_markdown, row.cells), *extra]
            lines.append("| " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n\n" + table.caption("italics") + "\n"


def _csv_cells(row: PaperRow, baseline: str | None) -> list[str]:
    line = [row.label]
    for cell in row.cells:
        v = cell.value
        if v is None:
            line += ["", "", "", "", ""]
        else:
            line += [f"{100 * v.value:.2f}", f"{100 * v.ci_low:.2f}", f"{100 * v.ci_high:.2f}", str(v.n), cell.mark]
    if baseline is not None:
        d = row.difference
        line += (
            ["", "", "", ""]
            if d is None
            else [f"{100 * d.diff:.2f}", f"{100 * d.ci_low:.2f}", f"{100 * d.ci_high:.2f}", f"{d.p_value:.4f}"]
        )
    return line


def to_csv(table: PaperTable) -> str:
    """Wide CSV in percent: the block, rank, run id and release, then per column its value, interval, n and mark
    (marks compare a block's runs only); the difference and its p last."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    head = ["block", "rank", "run", "release", "model"]
    for scope, metric in table.columns:
        title = column_title(scope, metric)
        head += [title, f"{title} ci_low", f"{title} ci_high", f"{title} n", f"{title} mark"]
    if table.baseline is not None:
        head += ["diff vs baseline", "diff ci_low", "diff ci_high", "diff p"]
    writer.writerow(csv_row(head))
    for title, rows in _blocks(table):
        for row in rows:
            writer.writerow(csv_row([title, str(row.rank), row.run_id, row.release, *_csv_cells(row, table.baseline)]))
    return buf.getvalue()


def _latex_cell(cell: PaperCell) -> str:
    if cell.value is None:
        return "--"
    value = f"{100 * cell.value.value:.2f}"
    value = rf"\textbf{{{value}}}" if cell.mark == "best" else rf"\underline{{{value}}}" if cell.mark else value
    return value + rf"{{\scriptsize$\pm${50 * (cell.value.ci_high - cell.value.ci_low):.1f}}}"


def _latex_head(table: PaperTable) -> list[str]:
    scopes = list(dict.fromkeys(scope for scope, _ in table.columns))
    spans = [(s, sum(1 for c, _ in table.columns if c == s)) for s in scopes]
    diff = table.baseline is not None
    spec = "rl" + "".join(" " + "r" * n for _, n in spans) + (" r" if diff else "")
    top, rules, col = ["", ""], [], 3
    for scope, n in spans:
        top.append(rf"\multicolumn{{{n}}}{{c}}{{{latex_escape(scope_title(scope))}}}")
        rules.append(rf"\cmidrule(lr){{{col}-{col + n - 1}}}")
        col += n
    if diff:
        top.append(latex_escape(f"Δ vs {table.baseline}"))
    sub = [r"\#", "Model", *[latex_escape(short_metric(m)) for _, m in table.columns]]
    sub += ["pts [95\\% CI]"] if diff else []
    return [
        r"\begin{tabular}{" + spec + "}",
        r"\toprule",
        " & ".join(top) + r" \\",
        " ".join(rules),
        " & ".join(sub) + r" \\",
    ]


def to_latex(table: PaperTable) -> str:
    """A booktabs table (needs booktabs and graphicx), shrunk to the text width when wider: a header row of
    subsets over their metrics, then a titled block per release; best in bold, tied with the best underlined."""
    width = len(table.columns) + 2 + (table.baseline is not None)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\caption{" + latex_escape(table.caption()) + "}",
        r"\label{tab:lookbench}",
        r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",
        *_latex_head(table),
    ]
    for title, rows in _blocks(table):
        lines += [r"\midrule", rf"\multicolumn{{{width}}}{{l}}{{\textit{{{latex_escape(title)}}}}} \\"]
        for row in rows:
            cells = [str(row.rank), latex_escape(row.label), *map(_latex_cell, row.cells)]
            if table.baseline is not None:
                cells.append(latex_escape(_difference_text(row, row.run, table.baseline)))
            lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def render(table: PaperTable, fmt: str) -> str:
    """The table in one of FORMATS."""
    return {"latex": to_latex, "csv": to_csv, "markdown": to_markdown}[fmt](table)


def paper_file(out: Path, fmt: str) -> Path:
    """Where `tables --format FMT --out DIR` writes the table."""
    return out / {"latex": "paper.tex", "csv": "paper.csv", "markdown": "paper.md"}[fmt]
