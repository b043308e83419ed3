"""`lookbench eval`: evaluate a model (or precomputed embeddings) on a snapshot."""

from __future__ import annotations

import sys
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from lookbench._util.dates import parse_date
from lookbench._util.precision import PRECISIONS
from lookbench.cli.common import (
    EXECUTOR_HELP,
    PROCESSES_HELP,
    RAY_ADDRESS_HELP,
    SHARDS_HELP,
    console,
    err_console,
    reports_errors,
)
from lookbench.errors import LookBenchError
from lookbench.evaluation.noise import NoisePool, noise_tag, noise_text
from lookbench.evaluation.plan import Plan
from lookbench.evaluation.runner import EvalOutput, EvalSettings, Run, prepare
from lookbench.metrics.aggregate import AVERAGE, COMPOSED_OVERALL
from lookbench.metrics.definitions import DEFAULT_KS, OUTFIT_METRIC, FineRule
from lookbench.models.embed_options import DECODE_PLACES, EmbedOptions
from lookbench.results.io import check_result_target, save_run
from lookbench.results.naming import DEFAULT_OUTPUT, result_target, window_tag, window_text
from lookbench.results.schema import MetricValue, ResultFile
from lookbench.results.tables import DEFAULT_TABLE_METRICS, ordered_scopes, percent, scope_title, short_metric
from lookbench.search.select import make_backend
from lookbench.shards.executor import check_options
from lookbench.shards.make import make_executor
from lookbench.snapshot.named import DEFAULT_SNAPSHOT, open_location
from lookbench.snapshot.reader import Snapshot
from lookbench.snapshot.source import HUB_FORMS

SHOWN_METRICS = (*DEFAULT_TABLE_METRICS, OUTFIT_METRIC)
MIN_SHOWN_OUTFITS = 100
"""A subset with fewer outfits shows no Outfit R@1 in the printed table: an outfit scores only when all of its 2-4
garments are hit, so at a 25% garment hit rate about 3 in 100 outfits score and a few dozen tell no models apart."""
COMPOSED_SHOWN = ("recall@1", "recall@10", "recall@50", "map@10", "map@50", "fine_recall@10", "hard_negative@10")


OVERWRITE_RESULT_HELP = "Replace a file at the result path (or its per-query path) that is not a lookbench result."
DEFAULT_K_TEXT = ",".join(map(str, DEFAULT_KS))


def parse_ks(text: str) -> tuple[int, ...]:
    """Parse `1,5,10,20`."""
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError as exc:
        raise LookBenchError(f"--k: expected comma-separated integers, got {text!r}") from exc
    if not ks or ks[0] < 1 or ks[-1] > 100:
        raise LookBenchError(f"--k: cut-offs must lie in 1..100, got {text!r}")
    return ks


def _open_snapshot(snapshot: str | None) -> Snapshot:
    if not snapshot:
        console.print("[dim]no --snapshot given: using the embedded LookBench-Synth default[/dim]")
    return open_location(snapshot or DEFAULT_SNAPSHOT)


def _default_model() -> str:
    from lookbench.models.registry import DEFAULT_MODEL

    return DEFAULT_MODEL


def _print_summary(
    metrics: dict[str, dict[str, MetricValue]], composed_subsets: Collection[str], title: str, intervals: bool
) -> None:
    composed = {s for s in metrics if s in (COMPOSED_OVERALL, AVERAGE, *composed_subsets)}
    for scopes, names in (
        ([s for s in metrics if s not in composed], SHOWN_METRICS),
        ([s for s in metrics if s in composed], COMPOSED_SHOWN),
    ):
        if not scopes:
            continue
        table = Table(title=escape(title))
        table.add_column("subset", no_wrap=True, min_width=16)
        few = {s: metrics[s][OUTFIT_METRIC].n for s in scopes if _few_outfits(metrics[s])}
        shown = [m for m in names if any(m in metrics[s] and s not in few for s in scopes)]
        for name in shown:
            table.add_column(short_metric(name), justify="right")
        table.add_column("n", justify="right")
        for scope in ordered_scopes(scopes):
            values = metrics[scope]
            queries = next(v.n for key, v in values.items() if key != OUTFIT_METRIC)
            table.add_row(
                escape(scope_title(scope)),
                *[_cell(values, m, scope in few, intervals) for m in shown],
                str(queries),
            )
        console.print(table)
        if few:
            counts = ", ".join(f"{scope_title(s)} {n}" for s, n in few.items())
            console.print(
                f"[dim]Outfit R@1 not shown for subsets with fewer than {MIN_SHOWN_OUTFITS} outfits "
                f"({escape(counts)}): too few to tell models apart; the result file holds it[/dim]"
            )
    if intervals:
        console.print("[dim]± half the 95% bootstrap interval, in points[/dim]")


def _few_outfits(values: dict[str, MetricValue]) -> bool:
    """Whether a scope's Outfit R@1 rests on fewer outfits than the printed table shows."""
    outfits = values.get(OUTFIT_METRIC)
    return outfits is not None and outfits.n < MIN_SHOWN_OUTFITS


def _cell(values: dict[str, MetricValue], metric: str, few_outfits: bool, intervals: bool) -> str:
    """One printed cell; `-` for the Outfit R@1 of a scope with too few outfits."""
    value = None if metric == OUTFIT_METRIC and few_outfits else values.get(metric)
    return percent(value, half_width=intervals, metric=metric)


def _embed_options(
    cache_dir: Path | None,
    batch_size: int | None,
    workers: int | None,
    on_bad_image: str,
    fp16: bool,
    precision: str,
    decode: str,
) -> EmbedOptions:
    """The embedding options of the command line, checked."""
    if on_bad_image not in ("stop", "skip"):
        raise LookBenchError(f"--on-bad-image: expected stop or skip, got {on_bad_image!r}")
    for flag, value, allowed in (("--precision", precision, PRECISIONS), ("--decode", decode, DECODE_PLACES)):
        if value not in allowed:
            raise LookBenchError(f"{flag}: expected one of {', '.join(allowed)}, got {value!r}")
    return EmbedOptions(
        cache_dir=cache_dir,
        batch_size=batch_size,
        workers=workers,
        on_bad_image=on_bad_image,  # type: ignore[arg-type]
        storage_dtype="float16" if fp16 else "float32",
        precision=precision,  # type: ignore[arg-type]
        decode=decode,  # type: ignore[arg-type]
    )


def _report(result: ResultFile, plan: Plan, title: str, written: tuple[Path, Path]) -> None:
    """Print a saved run's warnings and metrics under its model's name (read from the result), and its files."""
    for warning in result.warnings:
        err_console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
    intervals = result.config.bootstrap.resamples > 0
    _print_summary(result.metrics, plan.composed, f"{result.model_name} {title}", intervals)
    console.print(f"wrote {escape(str(written[0]))} and {escape(str(written[1]))}", highlight=False)


def _writes(target: Path, skip_existing: bool, overwrite: bool) -> bool:
    """Whether to run into `target`: not with --skip-existing where it exists; refused where it holds another file."""
    if skip_existing and target.exists():
        console.print(f"[yellow]skip[/yellow] {escape(str(target))} exists")
        return False
    check_result_target(target, overwrite)
    return True


def _execute(run: Run, executor: str, processes: int | None, ray_address: str | None, shards: int | None) -> EvalOutput:
    """Execute a run, embedding as shards on an executor when asked to (or when several GPUs are there).

    The executor starts only now, after `--skip-existing` had its say; the run's tasks keep the unsharded provider,
    whose text tower and spec the sharded one shares.
    """
    runner = None
    provider = run.provider
    # only a model that embeds images loads `model_provider`; precomputed vectors never pay for its imports
    model_provider = sys.modules.get("lookbench.embeddings.model_provider")
    if model_provider is not None and isinstance(provider, model_provider.ModelEmbeddings):
        from lookbench.embeddings.sharded import ShardedEmbeddings, wants_shards

        if wants_shards(provider, executor, processes, shards):
            runner = make_executor(executor, processes, ray_address)
            run = replace(run, provider=ShardedEmbeddings(provider, runner, shards))
    try:
        return run.execute(progress=lambda msg: err_console.print(f"[dim]{escape(msg)}[/dim]"))
    finally:
        if runner is not None:
            runner.close()


@reports_errors
def eval_command(
    snapshot: str | None = typer.Option(
        None, "--snapshot", "-s", help=f"Snapshot folder, {HUB_FORMS}, `default` or `validation`; default: default."
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Model spec (e.g. embeddings:DIR, onnx:FILE) or name; default: offline default."
    ),
    subsets: str | None = typer.Option(None, "--subsets", help="Comma-separated subsets; default: all present."),
    k: str | None = typer.Option(
        None,
        "--k",
        help=f"Comma-separated cut-offs (1..100); default: the snapshot protocol's, else {DEFAULT_K_TEXT}.",
    ),
    fine_rule: FineRule = typer.Option(FineRule.MAIN, "--fine-rule", help="main (leaderboard) or strict (paper)."),
    noise: NoisePool = typer.Option(
        NoisePool.ALL, "--noise", help="all: search each subset with the noise pool (default); none: its gallery alone."
    ),
    resamples: int = typer.Option(1000, "--resamples", min=0, help="Bootstrap resamples for the intervals."),
    seed: int = typer.Option(0, "--seed", min=0, help="Bootstrap seed."),
    since: str | None = typer.Option(
        None, "--since", help="Keep queries first seen on or after this date; 'cutoff': after the card's cutoff."
    ),
    until: str | None = typer.Option(None, "--until", help="Keep queries first seen on or before this date."),
    output: str = typer.Option(
        DEFAULT_OUTPUT,
        "--output",
        "-o",
        help="Result path template: {model}, {snapshot}, {rule}, {window} (empty unless --since/--until), "
        "{noise} (empty unless --noise none).",
    ),
    skip_existing: bool = typer.Option(False, "--skip-existing", help="Do nothing if the result file exists."),
    overwrite: bool = typer.Option(False, "--overwrite", help=OVERWRITE_RESULT_HELP),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Embedding cache folder."),
    batch_size: int | None = typer.Option(
        None, "--batch-size", min=1, help="Images per model call; default: 32 on CPU, 64-256 on CUDA by GPU memory."
    ),
    workers: int | None = typer.Option(
        None, "--workers", min=0, help="Decode/preprocess threads; default: 2 on CPU, all cores but one with CUDA."
    ),
    on_bad_image: str = typer.Option("stop", "--on-bad-image", help="stop (default) or skip undecodable images."),
    fp16: bool = typer.Option(False, "--fp16", help="Store cached embeddings as float16."),
    precision: str = typer.Option(
        "auto",
        "--precision",
        help="Torch models: auto (bf16 on CUDA where supported, else fp32), fp32, tf32, bf16, fp16.",
    ),
    decode: str = typer.Option(
        "auto", "--decode", help="Where JPEGs are decoded: auto (the GPU for torch models on CUDA), cpu, device."
    ),
    search: str = typer.Option(
        "auto", "--search", help="auto (torch where CUDA is present, else exact), exact, torch, faiss[:flat|ivf|hnsw]."
    ),
    compose: str = typer.Option(
        "auto",
        "--compose",
        help="How composed subsets' queries are embedded: auto (sum for a two-tower model, else arithmetic), "
        "image, text, sum or arithmetic.",
    ),
    executor: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    processes: int | None = typer.Option(None, "--processes", help=PROCESSES_HELP),
    shards: int | None = typer.Option(None, "--shards", help=SHARDS_HELP),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP),
) -> None:
    """Embed, search and score a snapshot; write the result JSON and the per-query parquet file."""
    from lookbench.models.registry import resolve_model

    options = _embed_options(cache_dir, batch_size, workers, on_bad_image, fp16, precision, decode)
    check_options(executor, processes, ray_address, shards)
    snap = _open_snapshot(snapshot)
    spec = model or _default_model()
    backend = make_backend(search)
    settings = EvalSettings(
        subsets=[s.strip() for s in subsets.split(",") if s.strip()] if subsets else None,
        ks=parse_ks(k) if k else None,
        fine_rule=fine_rule,
        resamples=resamples,
        seed=seed,
        since=None if since == "cutoff" else parse_date(since, "--since"),
        until=parse_date(until, "--until"),
        backend=backend,
        compose=compose,
        noise=noise,
    )
    if noise is NoisePool.NONE and not snap.has_noise:
        err_console.print(f"[dim]{escape(snap.name)} has no noise pool: --noise none scores as --noise all would[/dim]")
    provider = resolve_model(spec, options)
    if since == "cutoff":
        from lookbench.evaluation.contamination.assess import cutoff_since

        settings.since = cutoff_since(provider.describe())
    run = prepare(snap, provider, settings)
    tags = (window_tag(settings.since, settings.until), noise_tag(noise))
    target = result_target(output, run.model_name(), snap.name, fine_rule.value, *tags)
    if not _writes(target, skip_existing, overwrite):
        return
    out = _execute(run, executor, processes, ray_address, shards)
    result, per_query = save_run(out.result, out.per_query, target)
    window = window_text(settings.since, settings.until)
    parts = (f"fine rule: {fine_rule.value}", f"window {window}" if window else "", noise_text(noise))
    _report(result, run.plan, f"on {snap.name} ({', '.join(p for p in parts if p)}), %", (target, per_query))


def register(app: typer.Typer) -> None:
    """Attach `eval`."""
    app.command("eval")(eval_command)
