"""LookBench as a live series: each model's runs across dated releases, and its score before and after its training
cutoff (or the release date that bounds it)."""

from __future__ import annotations

import datetime as dt
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench._util.dates import version_date
from lookbench.evaluation.window import query_dates
from lookbench.metrics.bootstrap import ClusterSums, percentile_interval, replicate_totals, resample_counts
from lookbench.publish.reports.encode import scope_mask
from lookbench.publish.reports.labels import run_title
from lookbench.publish.reports.runs import LoadedRun
from lookbench.publish.reports.tiestats import two_sided_p

SERIES_METRIC = "fine_recall@1"


@dataclass(frozen=True)
class CutoffSplit:
    """A model's Fine R@1 on queries first seen after its cutoff bound minus on those seen on or before it."""

    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    before: int
    after: int


def _side(values: np.ndarray, clusters: list[str], seed: int, side: str, resamples: int) -> np.ndarray:
    """(B,) resampled means of one side, whole outfits drawn (unpaired: the two sides are different queries)."""
    _, dense = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    sums = ClusterSums.of(values[:, None], dense)
    rng = np.random.default_rng([seed, zlib.crc32(side.encode())])
    totals, sizes = replicate_totals(resample_counts(rng, len(sums.sizes), resamples), sums)
    return totals[:, 0] / np.maximum(sizes, 1)


def cutoff_split(runs: list[LoadedRun], bound: dt.date) -> CutoffSplit | str:
    """Pool a model's image queries over its runs and split them at the bound; a reason when a side is empty."""
    values, clusters, after = [], [], []
    for run in runs:
        table = run.per_query
        image = pa.array(scope_mask(table["subset"].to_pylist(), "overall"))
        table = table.filter(image)
        days = query_dates(table, run.result.snapshot.id).astype("datetime64[D]")
        known = ~np.isnat(days)
        values.append(table[SERIES_METRIC].to_numpy(zero_copy_only=False)[known].astype(np.float64))
        prefix = run.result.snapshot.content_hash[:12]
        keys = zip(table["subset"].to_pylist(), table["cluster"].to_pylist(), known, strict=True)
        clusters += [f"{prefix}/{s}/{c}" for s, c, k in keys if k]
        after.append(days[known] > np.datetime64(bound, "D"))
    v, late = np.concatenate(values), np.concatenate(after)
    if not late.any() or late.all():
        return "every dated query is " + ("on or before" if not late.any() else "after") + " it"
    boot = runs[0].result.config.bootstrap
    outfits = np.asarray(clusters, dtype=object)
    reps = _side(v[late], list(outfits[late]), boot.seed, "after", boot.resamples)
    reps = reps - _side(v[~late], list(outfits[~late]), boot.seed, "before", boot.resamples)
    diff = float(v[late].mean() - v[~late].mean())
    low, high = percentile_interval(reps[:, None], boot.confidence, np.array([diff]))
    return CutoffSplit(
        diff=diff,
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        p_value=float(two_sided_p(reps[:, None])[0]),
        before=int((~late).sum()),
        after=int(late.sum()),
    )


def bound_entry(bound: tuple[dt.date, str, bool] | None) -> dict[str, Any] | None:
    """A cutoff bound for the page: its day, the date as the card gives it, and whether it is the release date."""
    return None if bound is None else {"day": bound[0].isoformat(), "text": bound[1], "release": bound[2]}


def series_data(runs: list[LoadedRun]) -> dict[str, Any] | None:
    """Releases (dated snapshot ids, oldest first) and per model its run on each; None for fewer than two."""
    releases: dict[str, dict[str, Any]] = {}
    for run in runs:
        day = version_date(run.result.snapshot.id)
        if day is not None:
            info = releases.setdefault(run.result.snapshot.id, {"id": run.result.snapshot.id, "date": day.isoformat()})
            info.setdefault("hashes", []).append(run.result.snapshot.content_hash[:12])
    if len(releases) < 2:
        return None
    ordered = sorted(releases.values(), key=lambda r: r["date"])
    for info in ordered:
        info["hashes"] = sorted(set(info["hashes"]))
    models: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        if run.result.snapshot.id in releases:
            models.setdefault(run_title(run.result), []).append(i)
    rows = []
    for title, members in models.items():
        bound = runs[members[0]].result.model.meta.cutoff_bound()
        split: CutoffSplit | str = "the card declares no training cutoff and no release date"
        if bound is not None:
            split = cutoff_split([runs[i] for i in members], bound[0])
        rows.append(
            {
                "model": title,
                "runs": {sid: i for i, sid in reversed([(i, runs[i].result.snapshot.id) for i in members])},
                "bound": None
                if bound is None
                else {"day": bound[0].isoformat(), "text": bound[1], "release": bound[2]},
                "split": split.__dict__ if isinstance(split, CutoffSplit) else None,
                "splitNote": split if isinstance(split, str) else None,
            }
        )
    return {"releases": ordered, "models": rows, "metric": SERIES_METRIC}
