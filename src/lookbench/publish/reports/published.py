"""The authors' published LookBench v2601 numbers, shipped as package data, as the leaderboard shows them."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from lookbench._util.jsontext import loads
from lookbench.metrics.aggregate import OVERALL
from lookbench.metrics.definitions import metric_name
from lookbench.models.card import find_card, load_cards
from lookbench.results.schema import ResultFile

SOURCE = "SerendipityOneInc/look-bench-page, configs/release_v2601/benchmark.json"
TABS = {
    "Real Studio": "real_studio_flat",
    "AI-Gen Studio": "aigen_studio",
    "Real StreetLook": "real_streetlook",
    "AI-Gen StreetLook": "aigen_streetlook",
}
"""Leaderboard tabs of the image-retrieval subsets; text-to-image tabs are skipped."""
METRICS = {"Coarse Recall": "coarse_recall", "Fine Recall": "fine_recall", "nDCG": "ndcg"}
RELEASE = "v20251201"
"""The real snapshot the published numbers were measured on."""
RELEASE_QUERIES = {"real_studio_flat": 1011, "aigen_studio": 193, "real_streetlook": 981, "aigen_streetlook": 160}
"""Query counts of that release: the weights of its Overall (the query-weighted mean, as in docs/metrics.md)."""


def load_published() -> dict[str, dict[str, dict[str, float]]]:
    """{subset: {model: {metric@k: fraction}}} from the shipped leaderboard file."""
    text = (
        resources.files("lookbench.publish.reports")
        .joinpath("data/lookbench_leaderboard_v2601.json")
        .read_text("utf-8")
    )
    raw = loads(text)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for tab, subset in TABS.items():
        for model, families in raw.get(tab, {}).items():
            values = out.setdefault(subset, {}).setdefault(model, {})
            for family, at_k in families.items():
                if family in METRICS:
                    for k, value in at_k.items():
                        values[metric_name(METRICS[family], int(k.lstrip("@")))] = float(value) / 100.0
    return out


def registry_id(name: str) -> str | None:
    """The registry id (`lookbench models`) of a published model name, e.g. `CLIP-B/32` -> `clip-b32`."""
    for meta in load_cards().values():
        if meta.reported is not None and meta.reported.leaderboard_name == name:
            return meta.id
    found = find_card(name)
    return None if found is None else found.id


def with_overall(published: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Add an Overall scope: per model and metric, the mean weighted by the release's query counts.

    Only where the model has the metric on every subset of the release, so no Overall mixes fewer subsets.
    """
    models = {name for scope in published.values() for name in scope}
    total = sum(RELEASE_QUERIES.values())
    overall: dict[str, dict[str, float]] = {}
    for name in sorted(models):
        rows = {s: published[s][name] for s in RELEASE_QUERIES if name in published.get(s, {})}
        if len(rows) < len(RELEASE_QUERIES):
            continue
        shared = set.intersection(*(set(values) for values in rows.values()))
        overall[name] = {
            metric: sum(RELEASE_QUERIES[s] * values[metric] for s, values in rows.items()) / total
            for metric in sorted(shared)
        }
    return {**published, OVERALL: overall} if overall else dict(published)


def is_release(result: ResultFile) -> bool:
    """True when a run was scored on the real release: its id, and not a LookBench-Synth folder of that name."""
    from lookbench.snapshot.synth_manifest import MANIFEST

    if result.snapshot.id != RELEASE:
        return False
    location = result.snapshot.location
    return "://" in location or not (Path(location) / MANIFEST).exists()


def published_block(results: list[ResultFile]) -> dict[str, Any]:
    """The page's published block: values by scope and registry id, the names, and whether it starts open."""
    by_name = with_overall(load_published())
    names = sorted({name for scope in by_name.values() for name in scope})
    ids = {name: registry_id(name) or name for name in names}
    return {
        "release": RELEASE,
        "source": SOURCE,
        "open": any(is_release(r) for r in results),
        "weights": RELEASE_QUERIES,
        "names": {ids[name]: name for name in names},
        "scopes": {scope: {ids[name]: values for name, values in models.items()} for scope, models in by_name.items()},
        "metrics": sorted({m for scope in by_name.values() for values in scope.values() for m in values}),
        "references": legacy_references(results),
    }


def legacy_references(results: list[ResultFile]) -> dict[str, list[dict[str, Any]]]:
    """Published numbers of the legacy benchmarks the runs were scored on: {scope: [{label, url, metrics}]}."""
    from lookbench.results.references import references_for

    out: dict[str, list[dict[str, Any]]] = {}
    for ref in references_for({r.config.protocol for r in results if r.config.protocol}):
        metrics = {m: ref.fraction(m) for m in ref.metrics}
        out.setdefault(ref.scope, []).append({"label": ref.label, "url": ref.url, "metrics": metrics})
    return out
