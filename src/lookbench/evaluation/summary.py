"""A run's metrics, per-category means and composed breakdowns, from its per-query table (a full run, a
re-windowed one or a verified submission alike)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from threadpoolctl import threadpool_limits

from lookbench.errors import EmbeddingError
from lookbench.evaluation.protocols import average_scope, protocol_columns
from lookbench.metrics.aggregate import AVERAGE, COMPOSED_OVERALL, Estimate, per_category, summarise
from lookbench.results.per_query import subset_values
from lookbench.results.schema import BootstrapConfig, CategoryValue, MetricValue
from lookbench.snapshot.reader import Snapshot

if TYPE_CHECKING:
    from lookbench.evaluation.plan import Plan


@dataclass(frozen=True)
class Summary:
    """A run's metrics, per-category means and composed breakdowns (the `ResultFile` fields of the same names)."""

    metrics: dict[str, dict[str, MetricValue]]
    per_category: dict[str, dict[str, dict[str, CategoryValue]]]
    breakdowns: dict[str, dict[str, dict[str, dict[str, MetricValue]]]]

    def fields(self) -> dict[str, dict[str, Any]]:
        """The three as `ResultFile` fields, for a result's constructor or `model_copy(update=...)`."""
        return {"metrics": self.metrics, "per_category": self.per_category, "breakdowns": self.breakdowns}


def _metric_values(estimates: dict[str, dict[str, Estimate]]) -> dict[str, dict[str, MetricValue]]:
    return {
        scope: {name: MetricValue(value=e.value, ci_low=e.ci_low, ci_high=e.ci_high, n=e.n) for name, e in ms.items()}
        for scope, ms in estimates.items()
    }


def summarise_run(
    snapshot: Snapshot, per_query: pa.Table, plan: Plan, boot: BootstrapConfig
) -> tuple[pa.Table, Summary]:
    """The per-query table with the planned protocol's columns added (a legacy benchmark's official recall@K),
    and the run's metrics, per-category means and breakdowns from it (its protocol's average included)."""
    ks, protocol = plan.ks, plan.protocol
    if protocol is not None:
        per_query = protocol_columns(protocol, snapshot, per_query, ks, plan.composed)
    result = summarise_table(per_query, boot, plan.composed)
    if protocol is not None and protocol.average_of:
        average = average_scope(protocol, per_query, ks, boot.resamples, boot.seed, boot.confidence)
        if average:
            result.metrics[AVERAGE] = average
    return per_query, result


def summarise_table(per_query: pa.Table, boot: BootstrapConfig, composed_subsets: Collection[str]) -> Summary:
    """Subset and overall estimates, per-category means and composed breakdowns, from a per-query table.

    Overall covers the image subsets; the composed ones (`composed_subsets`) have their own metrics and, when there
    are several, their own `composed_overall`.
    """
    from lookbench.metrics.composed_breakdown import composed_breakdowns

    values = subset_values(per_query)
    if not values:
        raise EmbeddingError("the per-query table is empty")
    draws = (boot.resamples, boot.seed, boot.confidence)
    image = [v for v in values if v.name not in composed_subsets]
    composed = [v for v in values if v.name in composed_subsets]
    # the bootstrap's products are small (resamples x clusters x metrics): a second BLAS thread cost more CPU than
    # it saved (0.3 s against 0.2 s of CPU at real scale); the result files came out byte-identical either way
    with threadpool_limits(limits=1, user_api="blas"):
        estimates = summarise(image, *draws)
        estimates.update(summarise(composed, *draws, overall=COMPOSED_OVERALL if len(composed) > 1 else None))
    categories = {
        v.name: {
            cat: {name: CategoryValue(value=mean, n=n) for name, (mean, n) in metrics.items()}
            for cat, metrics in per_category(v).items()
        }
        for v in values
    }
    breakdowns = {
        subset: {name: _metric_values(keys) for name, keys in by.items()}
        for subset, by in composed_breakdowns(per_query, composed, *draws).items()
    }
    return Summary(_metric_values(estimates), categories, breakdowns)
