"""Reading and writing audit reports, and their Markdown form (dataset cards, reports)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from lookbench._util.atomic import write_text_atomic
from lookbench._util.outfolder import refuse_blocked_parent
from lookbench._util.safetext import markdown_cell
from lookbench.errors import LookBenchError, first_problem
from lookbench.results.audit_schema import AuditReport, BaselineScore, QueryShortcuts, SeparationTest

AUDIT_NAME = "AUDIT.json"
"""The audit's file name inside a built release's version folder."""
TOP_SHOWN = 5


def read_audit(path: Path) -> AuditReport:
    """A validated audit report; a missing, unreadable or foreign file is a one-line error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LookBenchError(f"{path}: cannot read the audit report ({exc})") from exc
    try:
        return AuditReport.model_validate_json(text)
    except ValidationError as exc:
        raise LookBenchError(f"{path}: not a lookbench audit report ({first_problem(exc, 'the file')})") from exc


def snapshot_audit(root: Path, given: Path | None = None) -> AuditReport | None:
    """The audit passed as `given`, else the one inside the snapshot folder `root` (a built release's), else None."""
    if given is not None:
        return read_audit(given)
    beside = root / AUDIT_NAME
    return read_audit(beside) if beside.is_file() else None


def check_audit_target(path: Path) -> None:
    """Refuse an output path that holds anything but an earlier audit report (the only file ever replaced)."""
    refuse_blocked_parent(path)
    if path.is_dir():
        raise LookBenchError(f"{path}: a folder; --output names the audit JSON file to write")
    if path.exists():
        read_audit(path)


def write_audit(report: AuditReport, path: Path) -> None:
    """Write the report atomically; an existing file is replaced only when it is an audit report itself."""
    check_audit_target(path)
    write_text_atomic(path, report.to_json())


def _auc(value: float | None, ci: tuple[float, float] | None, reason: str | None) -> str:
    if value is None or ci is None:
        return f"not measured: {reason}"
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def separation_line(test: SeparationTest) -> str:
    """The calibrated test in one sentence."""
    verdict = "separable" if test.separable else "not separable"
    planted = (
        f"x{test.smallest_detected_brightness:g}"
        if test.smallest_detected_brightness is not None
        else "none of those tried"
    )
    return (
        f"{verdict} at alpha {test.alpha:g}: largest AUC {test.statistic:.3f} ({test.statistic_group}), null "
        f"{100 * (1 - test.alpha):g}% quantile {test.null_quantile:.3f}, p = {test.p_value:.3g} ({test.permutations} "
        f"permutations); smallest planted brightness shift detected: {planted}"
    )


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def _ratio(score: BaselineScore) -> str:
    if score.ratio is None:
        return ""
    if score.ratio_ci_low is None or score.ratio_ci_high is None:
        return f" ({score.ratio:.2f})"
    return f" ({score.ratio:.2f}, {score.ratio_ci_low:.2f}-{score.ratio_ci_high:.2f})"


def shortcuts_markdown(shortcuts: QueryShortcuts) -> list[str]:
    """The query-side table: the reference model's score, then each baseline's with its ratio (flagged in bold)."""
    scopes = list(shortcuts.baselines[0].scores) if shortcuts.baselines else []
    lines = [
        "",
        f"Query side: trivial fashion-blind baselines, {shortcuts.metric} (ratio to the reference model and its 95% "
        f"paired bootstrap interval; in bold where it reaches {shortcuts.share_flagged:g}).",
        "",
        "| model | " + " | ".join(markdown_cell(s) for s in scopes) + " |",
        "|---|" + "---|" * len(scopes),
    ]
    if shortcuts.reference_scores is not None:
        scored = " | ".join(_pct(shortcuts.reference_scores[s].value) for s in scopes)
        lines.append(f"| reference: {markdown_cell(shortcuts.reference or '')} | {scored} |")
    for baseline in shortcuts.baselines:
        cells = []
        for scope in scopes:
            score = baseline.scores[scope]
            cell = _pct(score.value.value) + _ratio(score)
            cells.append(f"**{cell}**" if score.flagged else cell)
        lines.append(f"| {markdown_cell(baseline.model)} | {' | '.join(cells)} |")
    return lines


def audit_markdown(report: AuditReport) -> list[str]:
    """Markdown lines: separability, queries on the noise side, noise effect, label consistency."""
    stats = report.separability.image_statistics
    sampling = report.sampling
    lines = [
        f"Distractors (noise) against gallery images, {sampling.gallery_sampled} of {sampling.gallery_images} "
        f"gallery and {sampling.noise_sampled} of {sampling.noise_images} noise images sampled (seed "
        f"{sampling.seed}); cross-validated AUC ({sampling.folds} folds) with a 95% bootstrap interval; 0.5 means "
        "the two cannot be told apart.",
        "",
        f"- model-free image statistics: {_auc(stats.auc, stats.ci, stats.reason)}",
    ]
    if stats.top_statistics:
        shown = ", ".join(f"{s.name} {s.auc:.3f}" for s in stats.top_statistics[:TOP_SHOWN])
        lines.append(f"- statistics that separate most: {shown}")
    if stats.test is not None:
        lines.append(f"- calibrated test: {separation_line(stats.test)}")
    probe = report.separability.embedding_probe
    if probe is not None:
        lines.append(
            f"- linear probe on {markdown_cell(probe.model)} embeddings: {_auc(probe.auc, probe.ci, probe.reason)}"
        )
    lines += [
        "",
        "| subset | queries | on the noise side (statistics) | on the noise side (embeddings) |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {markdown_cell(s)} | {q.queries} | {_pct(q.image_statistics)} | {_pct(q.embedding_probe)} |"
        for s, q in report.queries.items()
    ]
    if report.noise_effect:
        lines += [
            "",
            "| scope | Fine R@1 with noise | Fine R@1 without noise | distractor share@1 |",
            "|---|---|---|---|",
        ]
        for scope, effect in report.noise_effect.items():
            fine = effect.fine_recall_at_1
            lines.append(
                f"| {markdown_cell(scope)} | {_pct(fine.with_noise.value)} | {_pct(fine.without_noise.value)} | "
                f"{_pct(effect.distractor_share_at_1.value)} |"
            )
    if report.shortcuts is not None:
        lines += shortcuts_markdown(report.shortcuts)
    lines += [
        "",
        "| subset | queries | with a gallery fine match | a distractor has category and main attribute "
        "| a distractor has every attribute |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {markdown_cell(s)} | {c.queries} | {c.with_gallery_fine_match} | {c.noise_carries_main} | "
        f"{c.noise_carries_all} |"
        for s, c in report.label_consistency.items()
    ]
    if report.skipped_images:
        lines += ["", f"{len(report.skipped_images)} image(s) did not decode and were left out of the statistics."]
    return lines
