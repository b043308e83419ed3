"""The scaling study's outputs: raw results (JSON), a table (Markdown + CSV) and a plot (PNG, log-scale x)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path

from lookbench._util.atomic import atomic_path, write_text_atomic
from lookbench._util.safetext import csv_row
from lookbench.errors import TrainError
from lookbench.evaluation.headline import REPORTED as HEADLINE
from lookbench.results.scaling_schema import CellResult

COLUMNS = ("backbone", "fraction", "images", "items", "steps", *HEADLINE)


def _cell_text(result: CellResult, metric: str) -> str:
    value = result.metrics.get(metric)
    if value is None:
        return "-"
    return f"{100 * value['value']:.2f} [{100 * value['ci_low']:.2f}, {100 * value['ci_high']:.2f}]"


def table_rows(results: list[CellResult]) -> list[list[str]]:
    """One row per cell, sorted by backbone then training images (the frozen reference first)."""
    rows = []
    for r in sorted(results, key=lambda r: (r.backbone, r.fraction)):
        fraction = "frozen" if r.fraction == 0 else f"{r.fraction:g}"
        rows.append(
            [r.backbone, fraction, str(r.images), str(r.items), str(r.steps)] + [_cell_text(r, m) for m in HEADLINE]
        )
    return rows


def table_header() -> list[str]:
    """Column titles of `table_rows`."""
    return [*COLUMNS[:5], *(f"{m} % [95% CI]" for m in HEADLINE)]


def to_markdown(results: list[CellResult]) -> str:
    """The table in Markdown, metrics in percent with 95% intervals."""
    header = table_header()
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(results)]
    return "\n".join(lines) + "\n"


def to_csv(results: list[CellResult]) -> str:
    """Raw numbers (fractions of 1) with their interval bounds."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow([*COLUMNS[:5], *(f"{m}{s}" for m in HEADLINE for s in ("", "_ci_low", "_ci_high"))])
    for r in sorted(results, key=lambda r: (r.backbone, r.fraction)):
        values = []
        for m in HEADLINE:
            v = r.metrics.get(m, {})
            values += [v.get("value", ""), v.get("ci_low", ""), v.get("ci_high", "")]
        writer.writerow(csv_row([r.backbone, r.fraction, r.images, r.items, r.steps, *values]))
    return buf.getvalue()


def plot(results: list[CellResult], target: Path, metric: str = "fine_recall@1") -> Path:
    """Fine R@1 against training images (log x) with 95% intervals, one line per backbone; frozen as dashes."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError as exc:
        raise TrainError("the scaling plot needs matplotlib: pip install -e '.[train]'") from exc
    figure, axis = plt.subplots(figsize=(6.4, 4.2), dpi=150)
    for index, backbone in enumerate(sorted({r.backbone for r in results})):
        colour = f"C{index}"
        trained = sorted((r for r in results if r.backbone == backbone and r.fraction > 0), key=lambda r: r.images)
        if trained:
            xs = [r.images for r in trained]
            ys = [100 * r.metrics[metric]["value"] for r in trained]
            low = [y - 100 * r.metrics[metric]["ci_low"] for y, r in zip(ys, trained, strict=True)]
            high = [100 * r.metrics[metric]["ci_high"] - y for y, r in zip(ys, trained, strict=True)]
            axis.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, color=colour, label=f"{backbone}")
        for r in results:
            if r.backbone == backbone and r.fraction == 0:
                value = 100 * r.metrics[metric]["value"]
                axis.axhline(value, linestyle="--", color=colour, linewidth=1, label=f"{backbone}, frozen")
    axis.set_xscale("log")
    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:,.0f}"))
    axis.set_xlabel("training images (log scale)")
    axis.set_ylabel(f"{metric} (%), 95% CI")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png")
    plt.close(figure)
    return target


def write_report(results: list[CellResult], out: Path) -> list[Path]:
    """`scaling.json` (raw), `scaling.md`, `scaling.csv` and `scaling.png` in `out`."""
    raw = out / "scaling.json"
    write_text_atomic(raw, json.dumps([asdict(r) for r in results], indent=2) + "\n")
    write_text_atomic(out / "scaling.md", to_markdown(results))
    write_text_atomic(out / "scaling.csv", to_csv(results))
    return [raw, out / "scaling.md", out / "scaling.csv", plot(results, out / "scaling.png")]
