"""Rank runs on one metric, grouping neighbours a paired bootstrap cannot tell apart."""

from __future__ import annotations

from collections.abc import Callable, Sequence

TIE_P = 0.05
"""Rows whose difference to the row above has p >= TIE_P share its rank."""


def tie_ranks(
    values: Sequence[float], p_above: Callable[[int, int], float | None]
) -> list[tuple[int, int, float | None]]:
    """For rows sorted best first: (rank, group id, p-value against the row above) per row.

    `p_above(i, j)` gives the paired p-value of rows i and j, or None when they cannot be paired.
    """
    out: list[tuple[int, int, float | None]] = []
    for i in range(len(values)):
        p = p_above(i, i - 1) if i else None
        if i and p is not None and p >= TIE_P:
            rank, group, _ = out[-1]
            out.append((rank, group, p))
        else:
            out.append((i + 1, (out[-1][1] + 1) if out else 0, p))
    return out


def rank_labels(ranks: list[tuple[int, int, float | None]]) -> list[str]:
    """'1', or '1=' for every member of a tied group."""
    sizes: dict[int, int] = {}
    for _, group, _ in ranks:
        sizes[group] = sizes.get(group, 0) + 1
    return [f"{rank}=" if sizes[group] > 1 else str(rank) for rank, group, _ in ranks]
