"""Outfit recall with no outfit scored (or every one): the outfit count and the exact Clopper-Pearson interval."""

from __future__ import annotations

import pytest
from scipy.stats import beta

from lookbench.metrics.exact import edge_interval
from lookbench.results.schema import MetricValue
from lookbench.results.tables import percent


@pytest.mark.parametrize("n", [1, 2, 7, 12, 400])
def test_edges_match_the_beta_quantiles(n: int) -> None:
    zero, full = edge_interval(0.0, n), edge_interval(1.0, n)
    assert zero == pytest.approx((0.0, beta.ppf(0.975, 1, n)))  # Clopper-Pearson, k = 0
    assert full == pytest.approx((beta.ppf(0.025, n, 1), 1.0))  # k = n
    assert edge_interval(0.5, n) is None and edge_interval(0.0, 0) is None


def test_outfit_recall_at_zero_shows_its_count_and_exact_interval() -> None:
    none_scored = MetricValue(value=0.0, ci_low=0.0, ci_high=0.0, n=12)
    upper = 100 * beta.ppf(0.975, 1, 12)
    assert percent(none_scored, half_width=True, metric="outfit_recall@1") == (
        f"0.00 (0/12 outfits; exact 95% [0.00, {upper:.2f}])"
    )
    assert percent(none_scored, with_ci=True, metric="outfit_recall@1").startswith("0.00 (0/12 outfits; exact")
    assert percent(none_scored, half_width=True, metric="fine_recall@1") == "0.00 ±0.0"  # queries: unchanged
    some = MetricValue(value=0.25, ci_low=0.1, ci_high=0.4, n=12)
    assert percent(some, half_width=True, metric="outfit_recall@1") == "25.00 ±15.0"
