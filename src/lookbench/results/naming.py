"""File names of result pairs: safe slugs from model names, and the window a run covered."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from lookbench._util.hashing import sha1_hex
from lookbench.errors import ResultError

DEFAULT_OUTPUT = "results/{model}__{snapshot}__{rule}{window}{noise}.json"
"""`{window}` is empty for a full run and e.g. `__since-2026-01-01` for a windowed one, `{noise}` empty with the
noise pool and `__noise-none` without it, so they never collide."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SLUG = 80


def slug(text: str) -> str:
    """A safe file-name part: letters, digits, `.`, `_`, `-`; never empty, never a dotfile, never a path."""
    cleaned = _UNSAFE.sub("_", text).strip("._-")
    if len(cleaned) > _MAX_SLUG:
        digest = sha1_hex(text)[:8]
        cleaned = f"{cleaned[:_MAX_SLUG].rstrip('._-')}-{digest}"
    return cleaned or "model"


def window_tag(since: np.datetime64 | None, until: np.datetime64 | None) -> str:
    """`__since-YYYY-MM-DD[_until-YYYY-MM-DD]` for a date window; empty without one."""
    parts = []
    if since is not None:
        parts.append(f"since-{str(since)[:10]}")
    if until is not None:
        parts.append(f"until-{str(until)[:10]}")
    return "__" + "_".join(parts) if parts else ""


def window_text(since: np.datetime64 | str | None, until: np.datetime64 | str | None) -> str | None:
    """A date window for readers: 'since 2026-05-16', 'until 2026-05-31' or '2026-05-02 to 2026-05-31' (a result's
    ISO dates as recorded, a datetime64 as its day); None for a run over every date."""
    first, last = (str(d.astype("datetime64[D]")) if isinstance(d, np.datetime64) else d for d in (since, until))
    if first is None and last is None:
        return None
    if last is None:
        return f"since {first}"
    if first is None:
        return f"until {last}"
    return f"{first} to {last}"


def result_target(template: str, model: str, snapshot: str, rule: str, window: str, noise: str = "") -> Path:
    """The result JSON path from an `--output` template; placeholder values are slugged."""
    try:
        text = template.format(model=slug(model), snapshot=slug(snapshot), rule=slug(rule), window=window, noise=noise)
    except (KeyError, IndexError, ValueError) as exc:
        raise ResultError(
            f"--output {template!r}: bad template ({exc}); "
            "placeholders: {model}, {snapshot}, {rule}, {window}, {noise}"
        ) from exc
    return Path(text)


def per_query_name(result_path: Path) -> Path:
    """The per-query parquet file beside a result JSON: `NAME.per_query.parquet`."""
    return result_path.with_name(result_path.stem + ".per_query.parquet")
