"""The training ablations and the small scaling curve of docs/training.md, with intervals and paired tests.

    python benchmarks/training_ablations.py --data data --out runs/ablations

Trains the example config (`examples/train-synth-effnet.yaml`, training data from `--data`) and its ablations:
plain softmax instead of ArcFace, no attribute heads, PartialFC sampling at rate 0.3; scores each on `--snapshot`
(default: the embedded validation release, never the snapshot the recipe is reported on) next to the frozen
pretrained model; compares them pairwise (`lookbench
compare`'s paired bootstrap); then runs a scaling study over `--fractions` of the training items. Writes
`OUT/ablations.md` (both tables, the commands, wall and CPU time per run and the machine load) and
`OUT/ablations.json`. Re-running skips what is done; `--variants` trains only those named.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from lookbench.embeddings.options import EmbedOptions
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.results.compare import compare_results
from lookbench.results.io import load_result, save_run
from lookbench.train.config import load_config
from lookbench.train.data import open_location
from lookbench.train.loop import Trainer
from lookbench.train.scaling import Evaluation, Grid, ScalingConfig, run_study
from lookbench.train.scaling_report import to_markdown, write_report

VARIANTS = {
    "fine-tuned": [],
    "softmax": ["loss.identity.kind=softmax"],
    "no-attributes": ["loss.attributes.weight=0"],
    "partialfc-0.3": ["loss.identity.sample_rate=0.3"],
}
COMPARISONS = [
    ("fine-tuned", "frozen", "fine-tuned vs frozen"),
    ("fine-tuned", "softmax", "ArcFace vs plain softmax"),
    ("fine-tuned", "no-attributes", "with vs without attribute heads"),
    ("partialfc-0.3", "fine-tuned", "PartialFC sampling (rate 0.3) vs every centre"),
]
METRICS = ("fine_recall@1", "coarse_recall@1", "item_recall@1")


@dataclass
class Cost:
    """Wall and CPU seconds (this process and its finished children, e.g. DataLoader workers)."""

    wall: float
    cpu: float


def measured(action: object) -> tuple[object, Cost]:
    """Run `action()` and time it."""
    wall, cpu = time.perf_counter(), time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    value = action()  # type: ignore[operator]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    return value, Cost(time.perf_counter() - wall, time.process_time() - cpu + child_cpu)


def score(spec: str, snapshot_location: str, target: Path, resamples: int) -> None:
    """Evaluate a model spec like `lookbench eval` into `target` (+ per-query parquet)."""
    output = evaluate(
        open_location(snapshot_location), resolve_model(spec, EmbedOptions()), EvalSettings(resamples=resamples)
    )
    save_run(output.result, output.per_query, target)


def percent(result_path: Path, metric: str) -> str:
    value = load_result(result_path).metrics["overall"][metric]
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
    args = parser.parse_args()
    # the script scores every variant on --snapshot itself; validating inside each run would repeat that
    base = [f"data.train.snapshot={args.data}", "data.validation=null", *args.overrides]
    results, costs, commands = args.out / "results", {}, []
    results.mkdir(parents=True, exist_ok=True)
    frozen = results / "frozen.json"
    if not frozen.is_file():
        _, costs["frozen"] = measured(lambda: score(DEFAULT_MODEL, args.snapshot, frozen, args.resamples))
    commands.append(f"lookbench eval -s {args.snapshot} -m {DEFAULT_MODEL}")
    wanted = set(args.variants.split(","))
    for name, overrides in VARIANTS.items():
        folder, target = args.out / name, results / f"{name}.json"
        sets = [*base, *overrides]
        commands.append(f"lookbench train {args.config} --out {folder} " + " ".join(f"--set {s}" for s in sets))
        if target.is_file() or name not in wanted:
            continue
        cfg = load_config(args.config, sets)
        _, costs[name] = measured(lambda cfg=cfg, folder=folder: Trainer(cfg, folder, progress=False).run())
        score(f"trained:{folder}", args.snapshot, target, args.resamples)
    rows = [
        "| model | " + " | ".join(f"{m} % [95% CI]" for m in METRICS) + " | train wall / CPU s |",
        "| --- |" + " --- |" * (len(METRICS) + 1),
    ]
    done = [name for name in ["frozen", *VARIANTS] if (results / f"{name}.json").is_file()]
    for name in done:
        cost = costs.get(name)
        spent = f"{cost.wall:.0f} / {cost.cpu:.0f}" if cost else "(earlier run)"
        rows.append(
            f"| {name} | " + " | ".join(percent(results / f"{name}.json", m) for m in METRICS) + f" | {spent} |"
        )
    tests = ["| comparison | metric | A % | B % | A-B pts [95% CI] | p |", "| --- | --- | --- | --- | --- | --- |"]
    records = []
    for a, b, label in COMPARISONS:
        if a not in done or b not in done:
            continue
        _, _, paired = compare_results(results / f"{a}.json", results / f"{b}.json", list(METRICS), args.resamples)
        for t in paired:
            tests.append(
                f"| {label} | {t.metric} | {100 * t.mean_a:.2f} | {100 * t.mean_b:.2f} | "
                f"{100 * t.diff:+.2f} [{100 * t.ci_low:+.2f}, {100 * t.ci_high:+.2f}] | {t.p_value:.4f} |"
            )
            records.append({"comparison": label, "a": a, "b": b, **vars(t)})
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
        "# Training ablations\n\n"
        + "\n".join(rows)
        + "\n\n## Paired tests (A - B, paired bootstrap over queries, outfits kept whole)\n\n"
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
    main()
