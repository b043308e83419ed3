"""The leaderboard site's training-data scaling section, from a `lookbench scaling` study folder."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from lookbench._util.jsontext import loads
from lookbench.errors import LookBenchError
from lookbench.publish.reports.labels import metric_title

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _human(title: str, keys: tuple[str, ...]) -> str:
    """A column title with a metric key (`fine_recall@1 % [95% CI]`) under the metric's human name."""
    from lookbench.evaluation.headline import NO_NOISE

    key = title.split(" ", 1)[0]
    if key not in keys:
        return title
    base, quiet, _ = key.partition(NO_NOISE)
    return title.replace(key, metric_title(base) + (" without noise" if quiet else ""), 1)


def scaling_section(path: Path) -> dict[str, Any]:
    """Header, rows and the inlined plot of a study: `path` is its `scaling.json` or the study folder."""
    from lookbench.evaluation.headline import REPORTED
    from lookbench.evaluation.scaling_report import table_header, table_rows
    from lookbench.results.scaling_schema import parse_cell_results

    raw = path / "scaling.json" if path.is_dir() else path
    try:
        results = parse_cell_results(loads(raw.read_text(encoding="utf-8")), str(raw))
    except FileNotFoundError as exc:
        raise LookBenchError(f"--scaling {path}: no scaling.json (run `lookbench scaling` first)") from exc
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
        raise LookBenchError(f"{raw}: not a scaling.json written by `lookbench scaling` ({exc})") from exc
    plot = raw.with_name("scaling.png")
    png = plot.read_bytes() if plot.is_file() else b""
    return {
        "header": [_human(title, REPORTED) for title in table_header()],
        "rows": table_rows(results),
        "png": base64.b64encode(png).decode("ascii") if png.startswith(PNG_SIGNATURE) else None,
        "source": raw.parent.name,
    }
