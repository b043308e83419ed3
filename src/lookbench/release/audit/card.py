"""Card sections of the part-2 stages: crops, annotation, the audit table and distractor mining."""

from __future__ import annotations

from typing import Any


def _pct(rate: dict[str, Any]) -> str:
    if not rate.get("n"):
        return "n/a (0 judged)"
    low, high = rate["wilson95"]
    return f"{100 * rate['accuracy']:.1f}% [{100 * low:.1f}, {100 * high:.1f}] (n={rate['n']})"


def audit_lines(audit: dict[str, Any]) -> list[str]:
    """The audit table: overall, per group, per attribute, canaries, truth and human agreement."""
    overall = audit["overall"]
    boot = overall["bootstrap95_by_crop"]
    lines = [
        f"Judge `{audit['judge']['model']}` ({audit['judge']['prompt_version']}) checked {audit['judged_attributes']} "
        f"attributes of {audit['sampled_crops']} of {audit['population_crops']} images, sampled by subset and category "
        f"for a ±{audit['margin']} margin at expected accuracy {audit['expected_accuracy']} "
        f"({audit['ambiguous']} ambiguous, {audit['invalid']} without a usable answer).",
        "",
        f"- overall accuracy (judged): {_pct(overall)}; bootstrap 95% clustered by image: "
        f"[{100 * boot[0]:.1f}, {100 * boot[1]:.1f}]",
        f"- judge sensitivity on canaries (wrong labels caught): {_pct(audit['canaries'])}",
    ]
    if "true_accuracy_all" in audit:
        lines.append(f"- true accuracy of the annotator, all images (known labels): {_pct(audit['true_accuracy_all'])}")
        lines.append(f"- true accuracy on the sampled attributes: {_pct(audit['true_accuracy_sampled'])}")
        lines.append(f"- judge verdict agrees with the truth: {_pct(audit['judge_agrees_with_truth'])}")
    better = audit.get("better_values", {})
    if better.get("offered"):
        lines.append(
            f"- the judge offered a better value for {better['offered']} of {better['incorrect']} incorrect labels"
        )
    human = audit.get("human_agreement")
    if human and human.get("pairs"):
        lines.append(
            f"- agreement with people on {human['pairs']} pairs: observed {human['observed_agreement']}, "
            f"Cohen's kappa {human['cohen_kappa']}, Gwet's AC1 {human['gwet_ac1']}"
        )
    lines.append(
        f"- floor {audit['floor']}: below it {', '.join(audit['below_floor']) or 'none'}; "
        f"excluded from fine relevance: {', '.join(audit['excluded']) or 'none'}"
    )
    lines += ["", "| group | judged accuracy (Wilson 95%) |", "|---|---|"]
    lines += [f"| {g} | {_pct(r)} |" for g, r in audit["groups"].items()]
    lines += ["", "| attribute | judged accuracy (Wilson 95%) |", "|---|---|"]
    lines += [f"| {a} | {_pct(r)} |" for a, r in audit["attributes"].items()]
    return lines


def labelling_lines(labelling: dict[str, Any]) -> list[str]:
    """Sections for whichever part-2 stages ran."""
    lines: list[str] = []
    crop = labelling.get("crop")
    if crop:
        lines += ["", "## Garment crops", ""]
        lines.append(
            f"Detector `{crop['detector']['backend']}`: {crop['crops']} crops from {crop['photos']} photos "
            f"({crop['photos_rejected']} refused by the detector's server); "
            f"dropped: {crop['rows_without_box']} rows without a usable box, {crop['boxes_tiny']} tiny and "
            f"{crop['boxes_degenerate']} degenerate boxes; {crop['boxes_unmatched']} boxes matched no row."
        )
    annotate = labelling.get("annotate")
    if annotate:
        who = annotate["annotator"]
        lines += ["", "## Attribute labels", ""]
        lines.append(
            f"Labelled by `{who['backend']}` ({who.get('model')}): {annotate['labelled']} of {annotate['rows']} rows; "
            f"{annotate['flagged']} flagged and left out"
            + "".join(f"; {reason}: {count}" for reason, count in annotate["flag_reasons"].items())
            + "."
        )
        if "requests" in who:
            lines.append(
                f"Requests {who['requests']} (retries {who['retries']}, cache hits {who['cache_hits']}), "
                f"tokens {who['prompt_tokens']} in / {who['completion_tokens']} out, cost {who['cost']}."
            )
    audit = labelling.get("audit")
    if audit:
        lines += ["", "## Label audit", "", *audit_lines(audit)]
    mined = labelling.get("distractors")
    if mined:
        lines += ["", "## Distractor mining", ""]
        lines.append(
            f"Model `{mined['model']}`, band {mined['band']} of cosine similarity to the nearest benchmark item: "
            f"kept {mined['kept']} of {mined['candidates']} candidates ({mined['near_duplicates']} near-duplicates, "
            f"{mined['unrelated']} unrelated dropped)."
        )
    return lines
