"""`lookbench audit`: can a snapshot's distractors be told from its galleries by their source?"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench.cli.common import console, err_console, reports_errors
from lookbench.cli.needs import needs
from lookbench.errors import LookBenchError
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.features import FASHION_BLIND
from lookbench.release.audit.calibration import ALPHA, PERMUTATIONS
from lookbench.release.audit.run import AuditSettings, audit_snapshot, check_settings
from lookbench.release.audit.shortcuts import reference_from_results
from lookbench.results.audit_io import TOP_SHOWN, check_audit_target, separation_line, write_audit
from lookbench.results.audit_schema import AuditReport, QueryShortcuts
from lookbench.snapshot.named import open_location


def _auc_cell(value: float | None, ci: tuple[float, float] | None) -> str:
    return "-" if value is None or ci is None else f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


FASHION_BLIND_NAME = "fashion-blind"


def baseline_specs(text: str) -> list[str]:
    """The specs `--baselines` names: the fashion-blind set, none, or a comma-separated list."""
    if text == FASHION_BLIND_NAME:
        return list(FASHION_BLIND)
    if text == "none":
        return []
    specs = [part.strip() for part in text.split(",")]
    if not all(specs):
        raise LookBenchError(f"--baselines {text!r}: an empty spec in the list")
    return specs


def print_shortcuts(shortcuts: QueryShortcuts) -> None:
    """The query-side table: each baseline's score per scope and its ratio to the reference model."""
    reference = f" / {escape(shortcuts.reference)}" if shortcuts.reference else ""
    table = Table(title=f"Query side: trivial baselines, {shortcuts.metric} (%){reference}")
    scopes = list(shortcuts.baselines[0].scores) if shortcuts.baselines else []
    table.add_column("baseline")
    for scope in scopes:
        table.add_column(escape(scope), justify="right")
    if shortcuts.reference_scores is not None:
        table.add_row(escape(shortcuts.reference or ""), *[_share(shortcuts.reference_scores[s].value) for s in scopes])
    for baseline in shortcuts.baselines:
        cells = []
        for scope in scopes:
            score = baseline.scores[scope]
            ratio = "" if score.ratio is None else f" ({score.ratio:.2f})"
            cell = f"{_share(score.value.value)}{ratio}"
            cells.append(f"[red]{cell}[/red]" if score.flagged else cell)
        table.add_row(escape(baseline.model), *cells)
    console.print(table)
    if shortcuts.flagged:
        console.print(
            f"[red]{len(shortcuts.flagged)} score(s)[/red] of a fashion-blind baseline reach "
            f"{shortcuts.share_flagged:g} of the model's: {escape('; '.join(shortcuts.flagged))}"
        )


def print_report(report: AuditReport) -> None:
    """The audit as rich tables."""
    sep = Table(title=escape(f"Distractors vs galleries on {report.snapshot.name}: cross-validated AUC (0.5: none)"))
    for col in ("probe", "AUC [95% CI]", "note"):
        sep.add_column(col)
    stats = report.separability.image_statistics
    sep.add_row("image statistics", _auc_cell(stats.auc, stats.ci), escape(stats.reason or ""))
    for s in stats.top_statistics[:TOP_SHOWN]:
        sep.add_row(f"  {escape(s.name)}", f"{s.auc:.3f}", "")
    probe = report.separability.embedding_probe
    if probe is not None:
        sep.add_row(f"embeddings: {escape(probe.model)}", _auc_cell(probe.auc, probe.ci), escape(probe.reason or ""))
    console.print(sep)
    if stats.test is not None:
        colour = "red" if stats.test.separable else "green"
        console.print(f"[{colour}]calibrated test[/{colour}]: {escape(separation_line(stats.test))}")
    queries = Table(title="Queries placed on the noise side (%)")
    for col in ("subset", "queries", "statistics", "embeddings"):
        queries.add_column(col, justify="left" if col == "subset" else "right")
    for name, q in report.queries.items():
        queries.add_row(escape(name), str(q.queries), _share(q.image_statistics), _share(q.embedding_probe))
    console.print(queries)
    if report.noise_effect:
        effect = Table(title="Noise effect (%)")
        for col in ("scope", "Fine R@1 with noise", "without noise", "distractor share@1"):
            effect.add_column(col, justify="left" if col == "scope" else "right")
        for scope, e in report.noise_effect.items():
            fine = e.fine_recall_at_1
            effect.add_row(
                escape(scope),
                _share(fine.with_noise.value),
                _share(fine.without_noise.value),
                _share(e.distractor_share_at_1.value),
            )
        console.print(effect)
    if report.shortcuts is not None:
        print_shortcuts(report.shortcuts)
    labels = Table(title="Label-rule consistency (queries)")
    for col in ("subset", "queries", "gallery fine match", "noise: category+main", "noise: all attributes"):
        labels.add_column(col, justify="left" if col == "subset" else "right")
    for name, c in report.label_consistency.items():
        labels.add_row(
            escape(name), str(c.queries), str(c.with_gallery_fine_match), str(c.noise_carries_main),
            str(c.noise_carries_all),
        )  # fmt: skip
    console.print(labels)
    if report.skipped_images:
        first = report.skipped_images[0]
        console.print(
            f"[yellow]{len(report.skipped_images)} image(s) did not decode[/yellow] and were left out, e.g. "
            f"{escape(first.subset)}/{escape(first.split)} row {first.row}: {escape(first.error)}"
        )


@needs("default", "scipy")
@reports_errors
def audit_command(
    snapshot: str = typer.Argument(..., help="Snapshot folder, hub location, `default` or `validation`."),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Also probe this model's embeddings and measure the noise effect on its scores."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the audit JSON here."),
    seed: int = typer.Option(0, "--seed", min=0, help="Sampling, fold and bootstrap seed."),
    per_side: int = typer.Option(2000, "--per-side", min=1, help="Images sampled from the galleries and the noise."),
    queries: int = typer.Option(500, "--queries", min=1, help="Queries sampled per subset."),
    resamples: int = typer.Option(1000, "--resamples", min=0, help="Bootstrap resamples for the intervals."),
    permutations: int = typer.Option(
        PERMUTATIONS, "--permutations", min=1, help="Label shuffles of the calibrated gallery-vs-noise test."
    ),
    alpha: float = typer.Option(ALPHA, "--alpha", help="Significance level of the calibrated test."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Embedding cache folder."),
    baselines: str = typer.Option(
        FASHION_BLIND_NAME,
        "--baselines",
        help=f"Trivial baselines scored on the query side: `{FASHION_BLIND_NAME}`, `none` or SPEC,SPEC,...",
    ),
    reference_results: Path | None = typer.Option(
        None, "--reference-results", help="A `lookbench eval` result file of this snapshot: the baselines' reference."
    ),
) -> None:
    """Separability of distractors from galleries, queries on the noise side, the noise effect, label consistency."""
    from lookbench.models.registry import resolve_model

    settings = AuditSettings(
        seed=seed,
        per_side=per_side,
        queries_per_subset=queries,
        resamples=resamples,
        permutations=permutations,
        alpha=alpha,
    )
    check_settings(settings)
    if output is not None:
        check_audit_target(output)  # before the work: a user's file there is refused, never replaced
    snap = open_location(snapshot)
    options = EmbedOptions(cache_dir=cache_dir, on_bad_image="skip")  # left out and listed, as the statistics do
    provider = resolve_model(model, options) if model else None
    trivial = [resolve_model(spec, options) for spec in baseline_specs(baselines)]
    subsets = snap.subsets_of_kind("image")
    reference = reference_from_results(reference_results, snap, subsets) if reference_results else None
    report = audit_snapshot(
        snap,
        provider,
        settings,
        progress=lambda msg: err_console.print(f"[dim]{escape(msg)}[/dim]"),
        baselines=trivial,
        reference=reference,
    )
    print_report(report)
    console.print(f"[dim]{report.timings['total_s']:.1f} s[/dim]")
    if output is not None:
        write_audit(report, output)
        console.print(f"wrote {escape(str(output))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `audit`."""
    app.command("audit")(audit_command)
