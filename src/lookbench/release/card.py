"""Dataset cards: one per version (`vX/README.md`, with the labelling stages' sections) and the Hugging Face card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from lookbench._util.jsontext import loads
from lookbench.results.audit_io import AUDIT_NAME, audit_markdown
from lookbench.results.audit_schema import AuditReport
from lookbench.search.duplicates.alignment import MIN_OVERLAP
from lookbench.search.duplicates.history import VERSION_RE
from lookbench.snapshot.manifest import MANIFEST_NAME
from lookbench.snapshot.schema import NOISE, SPLITS, SUBSETS, TRAIN, is_composed_subset


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
    if audit.get("true_accuracy_all"):
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
    """Sections for whichever labelling stages (crop, annotate, audit, distractors, compose) ran."""
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
    composed = labelling.get("compose")
    if composed:
        lines += ["", "## Composed queries", "", *compose_lines(composed)]
    return lines


def compose_lines(compose: dict[str, Any]) -> list[str]:
    """How the composed queries were made, how their texts were worded and the judge's audit table."""
    changes = ", ".join(f"{n} change{'s' if n != '1' else ''}: {c}" for n, c in compose["by_changes"].items())
    lines = [
        f"{compose['queries']} scored and {compose.get('validation_queries', 0)} validation queries "
        f"({changes or 'none'}) from {compose['items']} gallery items: pairs of one "
        f"category with cosine similarity in {compose['band']} under `{compose['model']}` whose labels differ in one "
        "or two attribute groups; texts from templates per kind of change and attribute group.",
        "Changed groups: " + (", ".join(f"{g} {n}" for g, n in compose["by_group"].items()) or "none") + ".",
    ]
    who = compose.get("paraphraser")
    if who:
        kept = ", ".join(f"{reason} ({n})" for reason, n in compose["templates_kept"].items()) or "none"
        lines.append(
            f"Paraphrased by `{who['model']}` ({who['prompt_version']}): {compose['paraphrased']} of "
            f"{compose['queries'] + compose.get('validation_queries', 0)} texts; template kept where the paraphrase "
            f"was unusable: {kept}."
        )
    audit = compose.get("audit")
    if audit:
        overall = audit["overall"]
        lines += [
            "",
            f"Judge `{audit['judge']['model']}` ({audit['judge']['prompt_version']}) checked {overall['judged']} of "
            f"{audit['population']} queries, stratified by changed group(s) ({overall['unsure']} with an unsure "
            f"answer, {overall['invalid']} without a usable answer). Rates are shares of 'yes' among decided answers.",
            "",
            "| stratum | judged | text describes the change | target is right |",
            "| --- | --- | --- | --- |",
            f"| all | {overall['judged']} | {_pct(overall['text'])} | {_pct(overall['target'])} |",
            *(
                f"| {name} | {row['judged']} | {_pct(row['text'])} | {_pct(row['target'])} |"
                for name, row in audit["strata"].items()
            ),
        ]
    return lines


PROVENANCE = (
    "`source`, `source_url`, `image_url`, `first_seen_at`, `source_published_at`, `published_at_origin`, "
    "`license`, `image_sha256`, `generated`, `generation` (JSON record of generated images), `product_id`"
)


def _counts(text: dict[str, int]) -> str:
    return ", ".join(f"{tier} {n}" for tier, n in sorted(text.items())) or "none"


def version_card(release: dict[str, Any], log: list[dict[str, Any]], audit: AuditReport | None = None) -> str:
    """Markdown card of one version: subsets, sources, date window, dedup counts, source audit, provenance, build
    log."""
    lines = [f"# {release['title']} {release['version']}", "", f"Release date: {release['release_date']}.", ""]
    lines += ["## Subsets", "", "| subset | queries | gallery | train |", "|---|---|---|---|"]
    lines += [
        f"| {s} | {c.get('query', 0)} | {c.get('gallery', 0)} | {c.get(TRAIN, 0)} |"
        for s, c in release["subsets"].items()
    ]
    lines += ["", "## Sources", "", "| source | kind | samples | problems | license |", "|---|---|---|---|---|"]
    for src in release["sources"]:
        lines.append(f"| {src['name']} | {src['kind']} | {src['samples']} | {src['problems']} | {src['license']} |")
    window = release["window"]
    lines += ["", "## Date window", ""]
    lines.append(f"- source_published_at: {window['published_from']} .. {window['published_to']}")
    lines.append(f"- first_seen_at: {window['first_seen_from']} .. {window['first_seen_to']}")
    dedup = release["dedup"]
    lines += ["", "## De-duplication", ""]
    lines.append(f"- excluded as duplicates of earlier versions ({', '.join(dedup['earlier_versions']) or 'none'}): ")
    lines[-1] += _counts(dedup["excluded_as_duplicates_of_earlier_versions"])
    lines.append(f"- merged within this batch (earliest first_seen_at kept): {_counts(dedup['merged_within_batch'])}")
    lines.append(f"- perceptual threshold: {dedup['phash_threshold']} of 256 pHash bits, mirror-robust")
    if "colour_threshold" in dedup:
        lines.append(
            f"- colour check: perceptual matches differing in colour on more than {dedup['colour_threshold']:.1%} of "
            f"their pixels are kept apart ({dedup['kept_apart_by_colour']} candidate pairs kept apart)"
        )
    if dedup.get("crops"):
        lines.append(
            f"- cropped copies (keeping at least {MIN_OVERLAP:.0%} of each side of the image): found by window hashes "
            f"and aligned; the overlaps' pHashes differ by at most {dedup.get('crop_phash_threshold')} bits and "
            "pass the colour check"
        )
        if dedup.get("crop_pairs") == "full-frame":
            lines[-1] += " (`dedup.crop_pairs: full-frame`: two different crops of one photo are not looked for)"
    elif "crops" in dedup:
        lines.append("- cropped copies: not looked for (`dedup.crops: false`)")
    lines += labelling_lines(release.get("labelling", {}))
    if audit is not None:
        lines += ["", "## Source audit: distractors against galleries", "", *audit_markdown(audit)]
        lines += ["", f"The full report is `{AUDIT_NAME}` (schema and method: lookbench's docs/audit.md)."]
    lines += ["", "## Provenance columns", "", PROVENANCE, "", "## Build log", ""]
    lines += ["| stage | status | seconds |", "|---|---|---|"]
    lines += [f"| {e['stage']} | {e['status']} | {e['seconds']} |" for e in log]
    lines += ["", "```json", json.dumps(log, indent=1, default=str), "```", ""]
    return "\n".join(lines)


def _data_files(version: str, subset: str, files: dict[str, Any]) -> list[dict[str, str]]:
    splits = ["gallery"] if subset == NOISE else [*SPLITS, "validation", TRAIN]  # composed subsets may hold one
    return [
        {"split": sp, "path": f"{version}/{subset}/{sp}.parquet"} for sp in splits if f"{subset}/{sp}.parquet" in files
    ]


def root_card(output: Path, title: str) -> str:
    """The Hugging Face card of the output folder: configs for the latest version, pinned configs for older ones."""
    manifests = []
    for folder in sorted(p for p in output.iterdir() if p.is_dir() and VERSION_RE.match(p.name)):
        if (folder / MANIFEST_NAME).is_file():
            manifests.append(loads((folder / MANIFEST_NAME).read_text(encoding="utf-8")))
    configs: list[dict[str, Any]] = []
    for position, manifest in enumerate(reversed(manifests)):
        version = manifest["release"]["version"]
        composed = sorted(s for s in manifest["release"].get("subsets", {}) if is_composed_subset(s))
        for subset in (*SUBSETS, *composed, NOISE):
            files = _data_files(version, subset, manifest["files"])
            if files:
                name = subset if position == 0 else f"{subset}-{version}"
                configs.append({"config_name": name, "data_files": files})
    header = yaml.safe_dump({"pretty_name": title, "license": "other", "configs": configs}, sort_keys=False)
    lines = ["---", header.rstrip(), "---", "", f"# {title}", ""]
    if manifests:
        latest = manifests[-1]["release"]
        lines.append(f"Latest version: `{latest['version']}`; older versions stay loadable as `<subset>-vYYYYMMDD`.")
    lines += ["", "## Versions", ""]
    for manifest in reversed(manifests):
        rel = manifest["release"]
        window = rel["window"]
        excluded = _counts(rel["dedup"]["excluded_as_duplicates_of_earlier_versions"])
        lines.append(f"### {rel['version']}")
        lines.append("")
        sources = ", ".join(f"{s['name']} ({s['kind']})" for s in rel["sources"])
        subsets = ", ".join(f"{k} {v.get('query', 0)}q/{v.get('gallery', 0)}g" for k, v in rel["subsets"].items())
        lines.append(f"- sources: {sources}")
        lines.append(f"- date window (source_published_at): {window['published_from']} .. {window['published_to']}")
        lines.append(f"- duplicates of earlier versions excluded: {excluded}")
        lines.append(f"- subsets: {subsets}")
        lines.append(f"- card: [{rel['version']}/README.md]({rel['version']}/README.md)")
        lines.append("")
    lines += ["## Changelog", ""]
    for manifest in reversed(manifests):
        rel = manifest["release"]
        lines.append(f"- {rel['version']} ({rel['release_date']}): {rel.get('changelog') or 'new release'}")
    return "\n".join(lines) + "\n"
