"""Leaderboard-style tables (rows: runs; columns: subsets and Overall) from result files."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field

from lookbench._util.safetext import csv_row, markdown_cell
from lookbench.metrics.aggregate import AVERAGE, COMPOSED_OVERALL, OVERALL
from lookbench.metrics.exact import edge_interval
from lookbench.results.references import references_for
from lookbench.results.schema import MetricValue, ResultFile
from lookbench.snapshot.schema import SUBSET_TITLES, SUBSETS, is_composed_subset

DEFAULT_TABLE_METRICS: tuple[str, ...] = (
    "recall@1",
    "recall@10",
    "fine_recall@1",
    "coarse_recall@1",
    "ndcg@5",
    "mrr@10",
    "item_recall@1",
)


@dataclass(frozen=True)
class MetricTable:
    """One metric across runs: `rows[i]` holds (run label, {scope: value or None})."""

    metric: str
    scopes: list[str]
    rows: list[tuple[str, dict[str, MetricValue | None]]]
    references: list[tuple[str, dict[str, float | None]]] = field(default_factory=list)
    """Published numbers (fractions) for the same metric and scopes, labelled `reference: MODEL (SOURCE)`."""
    releases: list[str] = field(default_factory=list)
    """Each row's snapshot id (the release it was scored on), in row order."""
    run_ids: list[str] = field(default_factory=list)
    """Each row's run id, in row order (empty when the caller gave none)."""

    def header(self) -> list[str]:
        """Column titles."""
        return ["model", *[scope_title(s) for s in self.scopes]]


def scope_title(scope: str) -> str:
    """A column or row title for a subset or aggregate scope."""
    titles = {**SUBSET_TITLES, OVERALL: "Overall", COMPOSED_OVERALL: "Composed overall", AVERAGE: "Average"}
    return titles.get(scope, scope)


def composed_scopes(names: Iterable[str]) -> list[str]:
    """The composed subsets among a result's scopes or subsets, by name: a result read back keeps no run plan."""
    return sorted({s for s in names if is_composed_subset(s)})


def ordered_scopes(present: Iterable[str]) -> list[str]:
    """Scopes in display order: LookBench's image subsets, other image subsets (a legacy benchmark's, in the order
    given), Overall, composed subsets by name, their overall, then a legacy protocol's unweighted average."""
    names = list(dict.fromkeys(present))
    aggregates = (OVERALL, COMPOSED_OVERALL, AVERAGE)
    composed = composed_scopes(names)
    others = [s for s in names if s not in (*SUBSETS, *aggregates, *composed)]
    return [s for s in (*SUBSETS, *others, OVERALL, *composed, COMPOSED_OVERALL, AVERAGE) if s in names]


_SHORT = {
    "coarse_recall": "Coarse R",
    "fine_recall": "Fine R",
    "item_recall": "Item R",
    "outfit_recall": "Outfit R",
    "mrr": "MRR",
    "ndcg": "nDCG",
    "recall": "R",
    "map": "mAP",
    "hard_negative": "HardNeg",
    "distractor_share": "Distractor",
}


def short_metric(key: str) -> str:
    """A compact column title, e.g. `fine_recall@1` -> `Fine R@1`."""
    name, _, k = key.partition("@")
    return f"{_SHORT.get(name, name)}@{k}" if k else _SHORT.get(name, name)


def run_label(result: ResultFile) -> str:
    """A row label: the model name, with the fine rule and the noise pool when they are not the defaults."""
    suffix = f" [{result.config.fine_rule}]" if result.config.fine_rule != "main" else ""
    suffix += " [no noise]" if result.config.noise == "none" else ""
    return f"{result.model_name}{suffix}"


def build_tables(
    results: list[ResultFile],
    metrics: tuple[str, ...] = DEFAULT_TABLE_METRICS,
    labels: list[str] | None = None,
    ids: list[str] | None = None,
) -> list[MetricTable]:
    """One table per metric; columns are the subsets any run has, then Overall; rows labelled `labels` if given."""
    names = labels if labels is not None else [run_label(r) for r in results]
    releases = [r.snapshot.id for r in results]
    scopes = ordered_scopes(s for r in results for s in r.metrics)
    published = references_for({r.config.protocol for r in results if r.config.protocol})
    tables = []
    for metric in metrics:
        rows = [(n, {s: r.metrics.get(s, {}).get(metric) for s in scopes}) for n, r in zip(names, results, strict=True)]
        refs = [
            (ref.label, {s: ref.fraction(metric) if s == ref.scope else None for s in scopes})
            for ref in published
            if ref.scope in scopes and ref.fraction(metric) is not None
        ]
        if any(v is not None for _, cells in rows for v in cells.values()):
            tables.append(MetricTable(metric, scopes, rows, refs, releases, list(ids or [])))
    return tables


def percent(value: MetricValue | None, with_ci: bool = False, half_width: bool = False, metric: str = "") -> str:
    """A fraction as a percentage with 2 decimals; with its interval (`[low, high]`) or half-width (`±4.6`); a
    `metric` of outfit recall whose bootstrap interval is one point (no outfit scored, or every one) shows the outfit
    count and the exact (Clopper-Pearson) 95% interval instead."""
    if value is None:
        return "-"
    text = f"{100 * value.value:.2f}"
    outfits = metric.startswith("outfit_recall") and value.ci_low == value.ci_high
    exact = edge_interval(value.value, value.n) if outfits else None
    if exact is not None and (with_ci or half_width):
        hits = round(value.value * value.n)
        return f"{text} ({hits}/{value.n} outfits; exact 95% [{100 * exact[0]:.2f}, {100 * exact[1]:.2f}])"
    if with_ci:
        return f"{text} [{100 * value.ci_low:.2f}, {100 * value.ci_high:.2f}]"
    if half_width:
        return f"{text} ±{50 * (value.ci_high - value.ci_low):.1f}"
    return text


def to_markdown(table: MetricTable, with_ci: bool = True) -> str:
    """A GitHub-flavoured Markdown table, values in percent."""
    header = table.header()
    lines = [f"### {table.metric} (%)", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, cells in table.rows:
        values = [percent(cells[s], with_ci, metric=table.metric) for s in table.scopes]
        lines.append("| " + " | ".join([markdown_cell(label), *values]) + " |")
    for label, numbers in table.references:
        shown = ["-" if v is None else f"{100 * v:.2f}" for v in (numbers[s] for s in table.scopes)]
        lines.append("| " + " | ".join([f"*{markdown_cell(label)}*", *shown]) + " |")
    return "\n".join(lines) + "\n"


def to_csv(tables: list[MetricTable]) -> str:
    """Long-format CSV: one line per (run, metric, scope) with value, interval and n (fractions), then the release
    (snapshot id) the run was scored on and its run id."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["model", "metric", "subset", "value", "ci_low", "ci_high", "n", "release", "run_id"])
    for table in tables:
        for i, (label, cells) in enumerate(table.rows):
            release = table.releases[i] if i < len(table.releases) else ""
            run_id = table.run_ids[i] if i < len(table.run_ids) else ""
            for scope in table.scopes:
                v = cells[scope]
                if v is not None:
                    row = [label, table.metric, scope, v.value, v.ci_low, v.ci_high, v.n, release, run_id]
                    writer.writerow(csv_row(row))
        for label, numbers in table.references:  # published: no interval, no query count, no release
            for scope in table.scopes:
                if numbers[scope] is not None:
                    writer.writerow(csv_row([label, table.metric, scope, numbers[scope], "", "", "", "", ""]))
    return buf.getvalue()
