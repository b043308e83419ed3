"""Upper bounds of every count a user types or a file declares (docs/reliability.md#limits), and their one check."""

from __future__ import annotations

from lookbench.errors import LookBenchError

MAX_RESAMPLES = 100_000
"""Bootstrap resamples (eval, audit, tables, a result's `config.bootstrap.resamples`)."""
MAX_PERMUTATIONS = 100_000
"""Label shuffles of audit's calibrated test."""
MAX_K = 100
"""Retrieval cut-offs (`--k`, a result's `config.ks`)."""
MAX_SAMPLE = 1_000_000
"""Rows audit samples per side or per subset, and report's sampled queries."""
MAX_PROCESSES = 1_024
"""Worker processes or threads (`--processes`, `--workers`)."""
MAX_SHARDS = 1_000_000
"""Shards per input (`--shards`)."""
MAX_BATCH = 65_536
"""Images per model call or training batch."""
MAX_ALLOCATION = 4 * 2**30
"""Bytes one array sized by such counts may take (bootstrap draws, permutation labels)."""


class LimitError(LookBenchError):
    """A count over its documented bound, or one whose array would exceed `MAX_ALLOCATION`."""


def check_count(what: str, value: int, limit: int, low: int = 0) -> int:
    """`value` if it lies in `low..limit`, else a one-line refusal naming `what`."""
    if isinstance(value, bool) or not low <= value <= limit:
        raise LimitError(f"{what}: {value:,} is outside {low:,}..{limit:,} (docs/reliability.md#limits)")
    return value


def check_allocation(what: str, nbytes: int, advice: str) -> None:
    """Refuse, before allocating, an array of `nbytes` over `MAX_ALLOCATION`."""
    if nbytes > MAX_ALLOCATION:
        raise LimitError(
            f"{what} would take {nbytes / 2**30:,.1f} GiB, over the {MAX_ALLOCATION / 2**30:g} GiB limit "
            f"(docs/reliability.md#limits); {advice}"
        )
