"""Dataset cards: one per version (`vX/README.md`) and the Hugging Face card with `configs:` for the output root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from lookbench.release.audit.card import labelling_lines
from lookbench.release.dedup.history import VERSION_RE
from lookbench.snapshot.manifest import MANIFEST_NAME
from lookbench.snapshot.schema import NOISE, SPLITS, SUBSETS

PROVENANCE = (
    "`source`, `source_url`, `image_url`, `first_seen_at`, `source_published_at`, `published_at_origin`, "
    "`license`, `image_sha256`, `generated`, `generation` (JSON record of generated images), `product_id`"
)


def _counts(text: dict[str, int]) -> str:
    return ", ".join(f"{tier} {n}" for tier, n in sorted(text.items())) or "none"


def version_card(release: dict[str, Any], log: list[dict[str, Any]]) -> str:
    """Markdown card of one version: subsets, sources, date window, dedup counts, provenance, build log."""
    lines = [f"# {release['title']} {release['version']}", "", f"Release date: {release['release_date']}.", ""]
    lines += ["## Subsets", "", "| subset | queries | gallery |", "|---|---|---|"]
    lines += [f"| {s} | {c.get('query', 0)} | {c.get('gallery', 0)} |" for s, c in release["subsets"].items()]
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
    lines += labelling_lines(release.get("labelling", {}))
    lines += ["", "## Provenance columns", "", PROVENANCE, "", "## Build log", ""]
    lines += ["| stage | status | seconds |", "|---|---|---|"]
    lines += [f"| {e['stage']} | {e['status']} | {e['seconds']} |" for e in log]
    lines += ["", "```json", json.dumps(log, indent=1, default=str), "```", ""]
    return "\n".join(lines)


def _data_files(version: str, subset: str, files: dict[str, Any]) -> list[dict[str, str]]:
    splits = ["gallery"] if subset == NOISE else list(SPLITS)
    return [
        {"split": sp, "path": f"{version}/{subset}/{sp}.parquet"} for sp in splits if f"{subset}/{sp}.parquet" in files
    ]


def root_card(output: Path, title: str) -> str:
    """The Hugging Face card of the output folder: configs for the latest version, pinned configs for older ones."""
    manifests = []
    for folder in sorted(p for p in output.iterdir() if p.is_dir() and VERSION_RE.match(p.name)):
        if (folder / MANIFEST_NAME).is_file():
            manifests.append(json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8")))
    configs: list[dict[str, Any]] = []
    for position, manifest in enumerate(reversed(manifests)):
        version = manifest["release"]["version"]
        for subset in (*SUBSETS, NOISE):
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
