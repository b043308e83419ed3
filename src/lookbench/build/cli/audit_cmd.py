"""`lookbench audit`: can a snapshot's distractors be told from its galleries by their source?"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench.build.audit.calibration import ALPHA, PERMUTATIONS
from lookbench.build.audit.io import TOP_SHOWN, check_audit_target, separation_line, write_audit
from lookbench.build.audit.run import AuditSettings, audit_snapshot, check_settings
from lookbench.build.audit.schema import AuditReport
from lookbench.cli.common import console, err_console, reports_errors
from lookbench.embeddings.options import EmbedOptions
from lookbench.snapshot.named import open_location


def _auc_cell(value: float | None, ci: tuple[float, float] | None) -> str:
    return "-" if value is None or ci is None else f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


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
    provider = resolve_model(model, EmbedOptions(cache_dir=cache_dir)) if model else None
    report = audit_snapshot(
        snap, provider, settings, progress=lambda msg: err_console.print(f"[dim]{escape(msg)}[/dim]")
    )
    print_report(report)
    console.print(f"[dim]{report.timings['total_s']:.1f} s[/dim]")
    if output is not None:
        write_audit(report, output)
        console.print(f"wrote {escape(str(output))}", highlight=False)


def register(app: typer.Typer) -> None:
    """Attach `audit`."""
    app.command("audit")(audit_command)
