"""Paired bootstrap p-values between runs' per-query tables, every metric of a scope from one set of resamples."""

from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lookbench.errors import ResultError
from lookbench.metrics.bootstrap import (
    ClusterSums,
    PairedTest,
    paired_bootstrap,
    percentile_interval,
    replicate_totals,
    resample_counts,
)
from lookbench.metrics.definitions import OUTFIT_METRIC
from lookbench.metrics.outfits import outfit_recall
from lookbench.publish.reports.encode import fine_at_1, scope_mask
from lookbench.results.compare import pair_queries
from lookbench.results.per_query import metric_columns
from lookbench.snapshot.schema import STREETLOOK_SUBSETS

TIE_RESAMPLES = 1000
TIE_CONFIDENCE = 0.95


def two_sided_p(replicates: np.ndarray) -> np.ndarray:
    """Per column of (B, M) resampled mean differences: 2 * min(P(<= 0), P(>= 0)), capped at 1."""
    return np.minimum(1.0, 2.0 * np.minimum((replicates <= 0).mean(axis=0), (replicates >= 0).mean(axis=0)))


def outfit_values(table: pa.Table) -> dict[str, float]:
    """{subset/cluster: outfit recall@1} over the street-look subsets of a per-query table."""
    out: dict[str, float] = {}
    for subset in sorted(STREETLOOK_SUBSETS):
        part = table.filter(pc.equal(table["subset"], subset))
        if part.num_rows:
            ids, dense = np.unique(part["cluster"].to_numpy(), return_inverse=True)
            out.update(
                {f"{subset}/{c}": float(v) for c, v in zip(ids, outfit_recall(fine_at_1(part), dense), strict=True)}
            )
    return out


class PairTester:
    """p-values of run A - run B on one scope; resample draws are shared by every pair with the same cluster count."""

    def __init__(self, tables: list[pa.Table], seed: int = 0, resamples: int = TIE_RESAMPLES) -> None:
        self.tables = tables
        self.seed = seed
        self.resamples = resamples
        self._scoped: dict[tuple[int, str], pa.Table] = {}
        self._counts: dict[tuple[str, int], np.ndarray] = {}
        self._memo: dict[tuple[int, int, str], dict[str, PairedTest]] = {}

    def _scope(self, run: int, scope: str) -> pa.Table:
        key = (run, scope)
        if key not in self._scoped:
            table = self.tables[run]
            self._scoped[key] = table.filter(pa.array(scope_mask(table["subset"].to_pylist(), scope)))
        return self._scoped[key]

    def _draws(self, scope: str, clusters: int) -> np.ndarray:
        key = (scope, clusters)
        if key not in self._counts:
            rng = np.random.default_rng([self.seed, zlib.crc32(scope.encode()), clusters])
            self._counts[key] = resample_counts(rng, clusters, self.resamples)
        return self._counts[key]

    def _query_metrics(self, a: int, b: int, scope: str) -> dict[str, PairedTest]:
        ta, tb = self._scope(a, scope), self._scope(b, scope)
        names = [m for m in metric_columns(ta) if m in set(metric_columns(tb)) and not ta[m].null_count]
        if not ta.num_rows or not tb.num_rows or not names:
            return {}
        try:
            ia, ib, clusters = pair_queries(ta, tb)
        except ResultError:
            return {}
        values_a = np.column_stack([ta[m].to_numpy()[ia] for m in names])
        values_b = np.column_stack([tb[m].to_numpy()[ib] for m in names])
        sums = ClusterSums.of(values_a - values_b, clusters)
        totals, sizes = replicate_totals(self._draws(scope, len(sums.sizes)), sums)
        reps = totals / np.maximum(sizes, 1)[:, None]
        low, high = percentile_interval(reps, TIE_CONFIDENCE, (values_a - values_b).mean(axis=0))
        p = two_sided_p(reps)
        return {
            m: PairedTest(
                metric=m,
                mean_a=float(values_a[:, j].mean()),
                mean_b=float(values_b[:, j].mean()),
                diff=float((values_a[:, j] - values_b[:, j]).mean()),
                ci_low=float(low[j]),
                ci_high=float(high[j]),
                p_value=float(p[j]),
                n=len(ia),
            )
            for j, m in enumerate(names)
        }

    def test(self, a: int, b: int, metric: str, scope: str) -> PairedTest | None:
        """Run a - run b on `metric` over the units both scored (95% interval, two-sided p); None if none."""
        if metric == OUTFIT_METRIC:
            oa, ob = outfit_values(self._scope(a, scope)), outfit_values(self._scope(b, scope))
            keys = sorted(set(oa) & set(ob))
            if not keys:
                return None
            va, vb = np.array([oa[k] for k in keys]), np.array([ob[k] for k in keys])
            return paired_bootstrap(va, vb, np.arange(len(keys)), metric, self.resamples, self.seed, TIE_CONFIDENCE)
        key = (a, b, scope)
        if key not in self._memo:
            self._memo[key] = self._query_metrics(a, b, scope)
        return self._memo[key].get(metric)

    def p(self, a: int, b: int, metric: str, scope: str) -> float | None:
        """Two-sided p of run a - run b on `metric` over the units both scored; None if they share none."""
        test = self.test(a, b, metric, scope)
        return None if test is None else test.p_value
