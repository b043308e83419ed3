"""Everything the leaderboard page shows, as one JSON-ready dict."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lookbench.evaluation.contamination.assess import assess
from lookbench.evaluation.contamination.sources import local_snapshot, snapshot_sources
from lookbench.metrics.aggregate import COMPOSED_OVERALL, OVERALL
from lookbench.publish.reports.attributes import main_attributes
from lookbench.publish.reports.comparable import comparable_groups, identity_labels, run_ids
from lookbench.publish.reports.encode import NDCG_SCALE, Vocab, encode_queries, ks_of, share_query_columns
from lookbench.publish.reports.labels import METRICS, metric_infos, run_title, run_window
from lookbench.publish.reports.paper import page_spec
from lookbench.publish.reports.published import published_block
from lookbench.publish.reports.runs import LoadedRun, load_runs, query_set_groups
from lookbench.publish.reports.series import bound_entry, series_data
from lookbench.publish.reports.throughput import machine_text, throughput
from lookbench.publish.reports.ties import rank_labels, tie_ranks
from lookbench.publish.reports.tiestats import PairTester
from lookbench.results.schema import ResultFile
from lookbench.results.tables import composed_scopes, ordered_scopes, run_label
from lookbench.snapshot.schema import STREETLOOK_SUBSETS, SUBSET_TITLES, SUBSETS


def _metric_dict(result: ResultFile) -> dict[str, dict[str, dict[str, float | int]]]:
    return {
        scope: {m: {"v": v.value, "lo": v.ci_low, "hi": v.ci_high, "n": v.n} for m, v in ms.items()}
        for scope, ms in result.metrics.items()
    }


def _default_ties(runs: list[LoadedRun], metrics: list[str], scopes: list[str]) -> dict[str, dict[str, list[Any]]]:
    """Python paired-bootstrap ranks for the runs' own windows, per query-set group.

    {metric: {scope: [[run, rank label, p vs the row above, group], ...]}}
    """
    tester = PairTester([r.per_query for r in runs], seed=runs[0].result.config.bootstrap.seed)
    out: dict[str, dict[str, list[Any]]] = {}
    for scope in scopes:
        groups = query_set_groups(runs, scope)
        for metric in metrics:
            rows: list[Any] = []
            for group, members in enumerate(groups):
                present = [i for i in members if runs[i].result.metrics[scope].get(metric) is not None]
                order = sorted(present, key=lambda i: -runs[i].result.metrics[scope][metric].value)

                def p_above(
                    a: int, b: int, order: list[int] = order, metric: str = metric, scope: str = scope
                ) -> float | None:
                    return tester.p(order[a], order[b], metric, scope)

                ranks = tie_ranks([runs[i].result.metrics[scope][metric].value for i in order], p_above)
                rows.extend(
                    [run, label, None if p is None else round(p, 4), group]
                    for run, label, (_, _, p) in zip(order, rank_labels(ranks), ranks, strict=True)
                )
            if rows:
                out.setdefault(metric, {})[scope] = rows
    return out


@dataclass
class SnapshotFacts:
    """What the page needs from a run's snapshot, read once per location: main attributes and sources."""

    attributes: dict[tuple[str, int], str] | None
    sources: set[str]

    @classmethod
    def read(cls, location: str) -> SnapshotFacts:
        """Read a local snapshot's query labels and sources; nothing when it is not reachable."""
        snapshot = local_snapshot(location)
        present = set(snapshot.subsets) if snapshot is not None else set()
        return cls(main_attributes(snapshot, present), snapshot_sources(snapshot))


def _run_entry(
    run: LoadedRun,
    facts: SnapshotFacts,
    group: int,
    vocabs: tuple[Vocab, Vocab, Vocab],
    checked: tuple[str, str] | None = None,
) -> dict[str, Any]:
    result = run.result
    meta = result.model.meta
    sheet = meta.fact_sheet()
    flags = assess(result, run.per_query, facts.sources)
    rate, throughput_note = throughput(result)
    window = result.config.window
    return {
        "label": run_label(result),
        "title": run_title(result),
        "windowText": run_window(result),
        "file": run.path.name,
        "snapshot": result.snapshot.id,
        "contentHash": result.snapshot.content_hash[:12],
        "group": group,
        "spec": result.model.spec,
        "card": None if sheet is None else {k: v for k, v in sheet.items() if v is not None},
        "release": None if meta.release_day is None else meta.release_day.isoformat(),
        "cutoff": None if meta.cutoff_day is None else meta.cutoff_day.isoformat(),
        "releaseText": meta.release_text,
        "cutoffText": meta.cutoff_text,
        "bound": bound_entry(meta.cutoff_bound()),
        "params": meta.parameters,
        "embedDim": str(meta.embed_dim) if isinstance(meta.embed_dim, int) else None,  # not 'unknown'
        "license": meta.license,
        "openWeights": str(meta.open_weights).lower() if isinstance(meta.open_weights, bool) else None,
        "weightsUrl": meta.weights_source if web_link(meta.weights_source) else None,
        "throughput": rate,
        "throughputNote": throughput_note,
        "machine": machine_text(result),
        "flags": [f.to_dict() for f in flags],
        "verification": None if checked is None else {"status": checked[0], "note": checked[1]},
        "staticFlags": [f.to_dict() for f in flags if f.kind != "date"],
        "window": None if window is None else window.model_dump(),
        "boot": result.config.bootstrap.model_dump(),
        "metrics": _metric_dict(result),
        "q": encode_queries(run.per_query, result.snapshot.id, *vocabs, facts.attributes),
    }


def web_link(text: str | None) -> bool:
    """Whether a card's text is an http(s) URL the page may link to."""
    return text is not None and text.lower().startswith(("https://", "http://"))


def build_site_data(
    paths: list[Path],
    published: bool = True,
    verification: dict[Path, tuple[str, str]] | None = None,
    reports: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runs, per-query arrays, default tie groups, flags and published numbers for the page; `verification` maps a
    result path to its submission status and note (results-repository rows), `reports` a run id to its report."""
    runs = load_runs(paths)
    subsets, categories, attributes = Vocab(), Vocab(), Vocab()
    for name in SUBSETS:
        subsets.code(name)
    snapshots: dict[str, SnapshotFacts] = {}
    hashes: dict[str, int] = {}
    entries = []
    ids = run_ids([r.path for r in runs])
    names = identity_labels([r.result for r in runs], ids)
    for n, run in enumerate(runs):
        location = run.result.snapshot.location
        if location not in snapshots:
            snapshots[location] = SnapshotFacts.read(location)
        facts = snapshots[location]
        group = hashes.setdefault(run.result.snapshot.content_hash, len(hashes))
        checked = (verification or {}).get(run.path)
        entry = _run_entry(run, facts, group, (subsets, categories, attributes), checked)
        extra = names[n][len(entry["title"]) :].strip()
        report = (reports or {}).get(ids[n])
        entries.append({**entry, "id": ids[n], "name": names[n], "nameExtra": extra, "report": report})
    shared = share_query_columns([entry["q"] for entry in entries])
    shown = {s for r in runs for s in r.per_query["subset"].to_pylist()} | {OVERALL, COMPOSED_OVERALL}
    scopes = [s for s in ordered_scopes(s for r in runs for s in r.result.metrics) if s in shown]  # no `average`
    metrics = sorted({m for r in runs for s in r.result.metrics.values() for m in s})
    return {
        "generated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "subsets": subsets.values,
        "titles": {**SUBSET_TITLES, OVERALL: "Overall", COMPOSED_OVERALL: "Composed overall"},
        "composed": composed_scopes(s for r in runs for s in r.per_query["subset"].to_pylist()),
        "scopes": scopes,
        "ks": sorted({k for r in runs for k in ks_of(r.per_query)}),
        "families": [f for f in METRICS if any(m.startswith(f + "@") for m in metrics)],
        "streetlook": sorted(STREETLOOK_SUBSETS),
        "ndcgScale": NDCG_SCALE,
        "categories": categories.values,
        "attributes": attributes.values,
        "attributesKnown": all(f.attributes is not None for f in snapshots.values()),
        "runs": entries,
        "groups": [{"title": g.title, "runs": g.members} for g in comparable_groups([r.result for r in runs])],
        "queries": shared,
        "ties": _default_ties(runs, metrics, scopes),
        "tieSeed": runs[0].result.config.bootstrap.seed,
        "paper": page_spec(runs),
        "series": series_data(runs),
        "metricInfo": metric_infos(),
        "published": published_block([r.result for r in runs]) if published else None,
    }
