"""Exact (Clopper-Pearson) binomial intervals where a bootstrap has nothing to resample: no query or every query
succeeded."""

from __future__ import annotations


def edge_interval(value: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Clopper-Pearson interval for k = 0 or k = n successes out of n (closed form); None for any other mean."""
    if n <= 0 or value not in (0.0, 1.0):
        return None
    tail = (1.0 - confidence) / 2
    edge = 1.0 - tail ** (1.0 / n)
    return (0.0, edge) if value == 0.0 else (1.0 - edge, 1.0)
