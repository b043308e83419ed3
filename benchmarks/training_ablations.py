"""The training ablations and the small scaling curve of docs/training.md, with intervals and paired tests.

    python benchmarks/training_ablations.py --data data --out runs/ablations

Trains the example config (`examples/train-synth-effnet.yaml`, training data from `--data`) and its ablations, one
change each, in this order: plain softmax instead of ArcFace, four more frozen layers (`freeze-16`), no attribute
heads, PartialFC sampling at rate 0.3; scores each fine-tuned model alone (`trained:DIR?trained_share=1`) on
`--snapshot` (default: the embedded validation release, never the snapshot the recipe is reported on) with and
without its noise pool, next to the frozen pretrained model, and, when the config exports an output-space mix, under
that mix too (composed from the cached vectors of both models); compares them pairwise (`lookbench compare`'s paired
bootstrap); then runs a scaling study over `--fractions` of the training items. `--reuse NAME=DIR` takes a finished
run of the same recipe as variant NAME instead of training it. Writes `OUT/ablations.md` (the tables, the commands,
wall and CPU time and the machine load per run) and `OUT/ablations.json`. Re-running skips what is done;
`--variants` trains only those named.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from measure import results_file
from training_eval import Memo, Mixed

from lookbench._util.atomic import write_text_atomic
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.evaluation.headline import NO_NOISE
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.evaluation.scaling_report import to_markdown, write_report
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.results.compare import compare_results
from lookbench.results.io import load_result, save_run
from lookbench.snapshot.named import open_location
from lookbench.train.config import load_config
from lookbench.train.loop import Trainer
from lookbench.train.scaling import Evaluation, Grid, ScalingConfig, run_study

VARIANTS = {
    "fine-tuned": [],
    "softmax": ["loss.identity.kind=softmax"],
    "freeze-16": ["model.freeze_layers=16"],
    "no-attributes": ["loss.attributes.weight=0"],
    "partialfc-0.3": ["loss.identity.sample_rate=0.3"],
}
COMPARISONS = [
    ("fine-tuned", "frozen", "fine-tuned vs frozen"),
    ("fine-tuned", "softmax", "ArcFace vs plain softmax"),
    ("fine-tuned", "no-attributes", "with vs without attribute heads"),
    ("partialfc-0.3", "fine-tuned", "PartialFC sampling (rate 0.3) vs every centre"),
    ("fine-tuned", "freeze-16", "freeze 12 vs freeze 16"),
]
METRICS = ("fine_recall@1", "coarse_recall@1", "ndcg@5", DISTRACTOR_METRIC)
MIX = "__mix"
"""Suffix of a variant scored under the config's output-space mix with the frozen model."""
TRAINING_SECTIONS = ("seed", "model", "loss", "optim", "schedule", "batch", "augment")
"""The config sections that change the trained weights: a reused run must match the variant in each."""


@dataclass
class Cost:
    """Wall and CPU seconds (this process and its finished children, e.g. DataLoader workers)."""

    wall: float
    cpu: float
    load_start: float
    load_end: float


def measured(action: object) -> tuple[object, Cost]:
    """Run `action()` and time it."""
    wall, cpu, load = time.perf_counter(), time.process_time(), os.getloadavg()[0]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    value = action()  # type: ignore[operator]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    return value, Cost(time.perf_counter() - wall, time.process_time() - cpu + child_cpu, load, os.getloadavg()[0])


def refuse(message: str) -> NoReturn:
    """A one-line user error, exit 2."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def reused_runs(pairs: list[str]) -> dict[str, Path]:
    """`NAME=DIR` pairs: each NAME a variant, each DIR a finished `lookbench train` run (model.json, weights)."""
    runs = {}
    for pair in pairs:
        name, _, folder = pair.partition("=")
        if name not in VARIANTS or not folder:
            refuse(f"--reuse {pair}: expected NAME=DIR with NAME one of {', '.join(VARIANTS)}")
        missing = [f for f in ("config.json", "model.json", "model.safetensors") if not (Path(folder) / f).is_file()]
        if missing:
            refuse(f"--reuse {pair}: {folder} is not a finished lookbench train run (no {', '.join(missing)})")
        runs[name] = Path(folder)
    return runs


def check_recipe(name: str, folder: Path, expected: dict[str, object]) -> None:
    """Refuse a reused run whose training sections differ from the variant's config."""
    try:
        recorded = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        refuse(f"--reuse {name}={folder}: config.json unreadable ({error})")
    if not isinstance(recorded, dict):
        refuse(f"--reuse {name}={folder}: config.json is not a training config (not a JSON object)")
    for section in TRAINING_SECTIONS:
        if recorded.get(section) != expected[section]:
            refuse(f"--reuse {name}={folder}: its config.json {section} differs from the variant's; train it instead")


def score(provider: EmbeddingProvider, snapshot_location: str, target: Path, resamples: int) -> None:
    """Evaluate like `lookbench eval` into `target`, and without the noise pool into its `__noise-none` sibling."""
    snapshot = open_location(snapshot_location)
    for noise, path in [(NoisePool.ALL, target), (NoisePool.NONE, quiet(target))]:
        if noise is NoisePool.NONE and not snapshot.has_noise:
            continue
        output = evaluate(snapshot, provider, EvalSettings(resamples=resamples, noise=noise))
        save_run(output.result, output.per_query, path)


def quiet(target: Path) -> Path:
    """The result file scored without the noise pool."""
    return target.with_name(f"{target.stem}{NO_NOISE}{target.suffix}")


def percent(result_path: Path, metric: str) -> str:
    value = load_result(result_path).metrics["overall"].get(metric)
    if value is None:
        return "-"
    return f"{100 * value.value:.2f} [{100 * value.ci_low:.2f}, {100 * value.ci_high:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=Path("examples/train-synth-effnet.yaml"))
    parser.add_argument("--data", default="data", help="Training snapshot location (overrides data.train).")
    parser.add_argument(
        "--snapshot",
        default="validation",
        help="Snapshot every variant is scored on (default: the embedded validation release; choosing a recipe on "
        "the evaluation snapshot would be tuning on the test set, so score that once, at the end).",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/ablations"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="Extra KEY.PATH=VALUE.")
    parser.add_argument("--fractions", default="0.125,0.25,0.5,1.0")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="Variants to train, comma-separated (others are reported if done).",
    )
    parser.add_argument(
        "--reuse",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="Take the finished run DIR (same recipe) as variant NAME instead of training it (repeatable).",
    )
    args = parser.parse_args()
    reused = reused_runs(args.reuse)
    # the script scores every variant on --snapshot itself; validating inside each run would repeat that
    base = [f"data.train.snapshot={args.data}", "data.validation=null", *args.overrides]
    for name, folder in reused.items():
        check_recipe(name, folder, load_config(args.config, [*base, *VARIANTS[name]]).model_dump(mode="json"))
    mix = load_config(args.config, base).export.pretrained_mix
    share = mix.trained_share if mix is not None and mix.space == "outputs" else None
    results, costs, commands = args.out / "results", {}, []
    results.mkdir(parents=True, exist_ok=True)
    frozen_model = Memo(resolve_model(DEFAULT_MODEL, EmbedOptions()))
    frozen = results / "frozen.json"
    if not frozen.is_file():
        _, costs["frozen"] = measured(lambda: score(frozen_model.provider, args.snapshot, frozen, args.resamples))
    commands.append(f"lookbench eval -s {args.snapshot} -m {DEFAULT_MODEL}  (and --noise none)")
    wanted = set(args.variants.split(","))
    for name, overrides in VARIANTS.items():
        folder, target = reused.get(name, args.out / name), results / f"{name}.json"
        sets = [*base, *overrides]
        cost_file = results / f"{name}.cost.json"
        if name in reused:
            commands.append(f"{name}: the finished run {folder} (--reuse)")
        else:
            commands.append(f"lookbench train {args.config} --out {folder} " + " ".join(f"--set {s}" for s in sets))
        if target.is_file() or name not in wanted:
            continue
        if name not in reused:
            cfg = load_config(args.config, sets)
            _, cost = measured(lambda cfg=cfg, folder=folder: Trainer(cfg, folder, progress=False).run())
            write_text_atomic(cost_file, json.dumps(vars(cost)) + "\n")
        trained = Memo(resolve_model(f"trained:{folder}?trained_share=1", EmbedOptions()))
        if share is not None:
            score(Mixed(trained, frozen_model, share), args.snapshot, results / f"{name}{MIX}.json", args.resamples)
        score(trained.provider, args.snapshot, target, args.resamples)
    for name in VARIANTS:
        if (results / f"{name}.cost.json").is_file():
            costs[name] = Cost(**json.loads((results / f"{name}.cost.json").read_text(encoding="utf-8")))
    done = [name for name in ["frozen", *VARIANTS] if (results / f"{name}.json").is_file()]
    scorings = [("", "with the noise pool"), (NO_NOISE, "without it (`--noise none`)")]
    if share is not None:
        scorings += [(f"{MIX}{s}", f"{label}, output-space mix, fine-tuned share {share:g}") for s, label in scorings]
    rows, tests, records = [], [], []
    for suffix, label in scorings:

        def result(name: str, suffix: str = suffix) -> Path:
            # the frozen model mixed with itself is the frozen model
            return results / f"{name}{suffix.replace(MIX, '') if name == 'frozen' else suffix}.json"

        # without the noise pool no distractor can be retrieved: its share is 0 by construction
        metrics = [m for m in METRICS if not (NO_NOISE in suffix and m == DISTRACTOR_METRIC)]

        rows += [
            f"\n### {args.snapshot}, {label}\n",
            "| model | " + " | ".join(f"{m} % [95% CI]" for m in metrics) + " | train wall / CPU s, load |",
            "| --- |" + " --- |" * (len(metrics) + 1),
        ]
        for name in done:
            if not result(name).is_file():
                continue
            cost = costs.get(name)
            spent = (
                f"{cost.wall:.0f} / {cost.cpu:.0f}, {cost.load_start:.1f} -> {cost.load_end:.1f}"
                if cost
                else ("reused run" if name in reused else "-")
            )
            rows.append(f"| {name} | " + " | ".join(percent(result(name), m) for m in metrics) + f" | {spent} |")
        tests += [
            f"\n### {args.snapshot}, {label}\n",
            "| comparison | metric | A % | B % | A-B pts [95% CI] | p |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for a, b, title in COMPARISONS:
            if not (result(a).is_file() and result(b).is_file()):
                continue
            _, _, paired = compare_results(result(a), result(b), metrics, args.resamples)
            for t in paired:
                tests.append(
                    f"| {title} | {t.metric} | {100 * t.mean_a:.2f} | {100 * t.mean_b:.2f} | "
                    f"{100 * t.diff:+.2f} [{100 * t.ci_low:+.2f}, {100 * t.ci_high:+.2f}] | {t.p_value:.4f} |"
                )
                records.append({"comparison": title, "scoring": suffix, "a": a, "b": b, **vars(t)})
    scaling_text = ""
    if not args.skip_scaling:
        study = ScalingConfig(
            train=args.config,
            set=base,
            grid=Grid(fractions=[float(f) for f in args.fractions.split(",")]),
            evaluate=Evaluation(snapshot=args.snapshot, resamples=args.resamples),
        )
        cells = run_study(study, load_config(args.config, base), args.out / "scaling", False, print)
        write_report(cells, args.out / "scaling")
        scaling_text = "\n## Scaling\n\n" + to_markdown(cells) + f"\nPlot: {args.out / 'scaling' / 'scaling.png'}\n"
    load = os.getloadavg()
    text = (
        "# Training ablations\n"
        + "\n".join(rows)
        + "\n\n## Paired tests (A - B, paired bootstrap over queries, outfits kept whole)\n"
        + "\n".join(tests)
        + "\n"
        + scaling_text
        + "\n## Commands\n\n```\n"
        + "\n".join(commands)
        + "\n```\n\n"
        + f"Machine: {os.cpu_count()} CPUs, load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}.\n"
    )
    (args.out / "ablations.md").write_text(text, encoding="utf-8")
    (args.out / "ablations.json").write_text(
        json.dumps({"tests": records, "costs": {k: vars(v) for k, v in costs.items()}}, indent=2) + "\n"
    )
    print(text)


if __name__ == "__main__":
    with results_file("training_ablations"):
        main()
