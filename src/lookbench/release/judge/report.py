"""The audit report: accuracy per attribute and group with Wilson intervals, clustered bootstrap, canaries, truth."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any

from lookbench.errors import ReleaseError
from lookbench.release.config import AuditConfig
from lookbench.release.judge.stats import clustered_bootstrap, cohen_kappa, gwet_ac1, wilson
from lookbench.release.records import Sample
from lookbench.taxonomy import Taxonomy


def rate(correct: int, n: int) -> dict[str, Any]:
    """n, correct, accuracy and its Wilson 95% interval."""
    low, high = wilson(correct, n)
    return {
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 4) if n else None,
        "wilson95": [round(low, 4), round(high, 4)],
    }


def _table(judged: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for j in judged:
        counts[j[key]][0] += j["verdict"] == "correct"
        counts[j[key]][1] += 1
    return {name: rate(k, n) for name, (k, n) in sorted(counts.items())}


def truth_of(row: Sample) -> set[str]:
    """The source's labels of a row (exact truth for LookBench-Synth)."""
    return {row.source_main_attribute or "", *(row.source_other_attributes or [])}


def true_accuracy(rows: list[Sample]) -> dict[str, Any]:
    """Share of annotated attributes present in the source's labels (exact truth for LookBench-Synth)."""
    correct = total = 0
    for row in rows:
        truth = truth_of(row)
        values = [row.main_attribute, *row.other_attributes]
        correct += sum(v in truth for v in values)
        total += len(values)
    return rate(correct, total)


def human_agreement(path: Path, judged: list[dict[str, Any]]) -> dict[str, Any]:
    """Cohen's kappa and Gwet's AC1 between the judge and people on the (sample_id, attribute) pairs both rated."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            human = {
                (r["sample_id"], r["attribute"]): str(r["verdict"]).strip().lower() for r in csv.DictReader(handle)
            }
    except (OSError, ValueError, KeyError, csv.Error) as exc:
        raise ReleaseError(
            f"audit.human_labels {path}: expected a CSV with sample_id, attribute, verdict ({exc!r})"
        ) from exc
    pairs = [
        (j["verdict"], human[(j["sample_id"], j["attribute"])])
        for j in judged
        if (j["sample_id"], j["attribute"]) in human
    ]
    if not pairs:
        return {"pairs": 0}
    judge, people = [p[0] for p in pairs], [p[1] for p in pairs]
    return {
        "pairs": len(pairs),
        "observed_agreement": round(sum(a == b for a, b in pairs) / len(pairs), 4),
        "cohen_kappa": round(cohen_kappa(judge, people), 4),
        "gwet_ac1": round(gwet_ac1(judge, people), 4),
    }


def better_values(judged: list[dict[str, Any]], rows: list[Sample]) -> dict[str, Any]:
    """How often the judge offered a better value for a label it called incorrect (and, with truth, how often right)."""
    offered = [j for j in judged if j["verdict"] == "incorrect" and j.get("better_value")]
    out: dict[str, Any] = {"incorrect": sum(j["verdict"] == "incorrect" for j in judged), "offered": len(offered)}
    truth = {r.sample_id: truth_of(r) for r in rows if r.source_kind == "synth"}
    known = [j for j in offered if j["sample_id"] in truth]
    if known:
        out["offered_and_true"] = rate(sum(j["better_value"] in truth[j["sample_id"]] for j in known), len(known))
    return out


def build_report(
    config: AuditConfig, judgements: list[dict[str, Any]], rows: list[Sample], taxonomy: Taxonomy
) -> dict[str, Any]:
    """Everything the card shows; `judgements` carry sample_id, attribute, group, canary, verdict, truth."""
    real = [j for j in judgements if not j["canary"] and j["verdict"] in ("correct", "incorrect")]
    canary = [j for j in judgements if j["canary"] and j["verdict"] in ("correct", "incorrect", "ambiguous")]
    per_crop: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for j in real:
        per_crop[j["sample_id"]][0] += j["verdict"] == "correct"
        per_crop[j["sample_id"]][1] += 1
    overall = rate(sum(k for k, _ in per_crop.values()), sum(n for _, n in per_crop.values()))
    boot = clustered_bootstrap(
        [k for k, _ in per_crop.values()], [n for _, n in per_crop.values()], config.bootstrap, config.seed
    )
    overall["bootstrap95_by_crop"] = [round(boot[0], 4), round(boot[1], 4)]
    attributes = _table(real, "attribute")
    flagged = sorted(
        a
        for a, r in attributes.items()
        if r["n"] >= config.min_judged and r["accuracy"] is not None and r["accuracy"] < config.floor
    )
    report: dict[str, Any] = {
        "population_crops": len(rows),
        "sampled_crops": len({j["sample_id"] for j in judgements if not j["canary"]}),
        "judged_attributes": len(real),
        "ambiguous": sum(1 for j in judgements if not j["canary"] and j["verdict"] == "ambiguous"),
        "invalid": sum(1 for j in judgements if j["verdict"] == "invalid"),
        "margin": config.margin,
        "expected_accuracy": config.expected_accuracy,
        "overall": overall,
        "groups": _table(real, "group"),
        "attributes": attributes,
        "canaries": {
            **rate(sum(j["verdict"] == "incorrect" for j in canary), len(canary)),
            "meaning": "judge sensitivity",
        },
        "floor": config.floor,
        "below_floor": flagged,
        "excluded": flagged if config.exclude_below_floor else [],
        "better_values": better_values(real, rows),
    }
    with_truth = [j for j in real if j["truth"] is not None]
    if with_truth:
        report["true_accuracy_sampled"] = rate(sum(bool(j["truth"]) for j in with_truth), len(with_truth))
        report["judge_agrees_with_truth"] = rate(
            sum((j["verdict"] == "correct") == j["truth"] for j in with_truth), len(with_truth)
        )
    truth_rows = [r for r in rows if r.source_kind == "synth"]
    if truth_rows:
        report["true_accuracy_all"] = true_accuracy(truth_rows)
        report["true_accuracy_groups"] = _truth_groups(truth_rows, taxonomy)
    if config.human_labels is not None:
        report["human_agreement"] = human_agreement(config.human_labels, [j for j in judgements if not j["canary"]])
    return report


def _truth_groups(rows: list[Sample], taxonomy: Taxonomy) -> dict[str, dict[str, Any]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        truth = truth_of(row)
        for value in [row.main_attribute, *row.other_attributes]:
            counts[taxonomy.group_of(value)][0] += value in truth
            counts[taxonomy.group_of(value)][1] += 1
    return {g: rate(k, n) for g, (k, n) in sorted(counts.items())}
