"""Choosing and scoring trained models: `sweep` (choose the pretrained-mix share on validation), `score` (score a
chosen mix once from cached vectors), `overlap` (the ablations' paired tests with and without the overlapping
queries).

    python benchmarks/training_eval.py sweep|score|overlap [options]     # --help after the subcommand

`sweep`:
Choose the share of the fine-tuned model in an output-space ensemble with its pretrained backbone, on validation.

    python benchmarks/training_eval.py sweep --trained runs/demo --fmnist ood/fashion-mnist-validation --out runs/sweep

Each image is embedded once by the fine-tuned model alone (`trained:DIR?trained_share=1`, whatever mix DIR records)
and once by the frozen pretrained model (`efficientnet-lite0`, the same checkpoint as the recipe's backbone, whose
cached vectors earlier runs reuse); the
ensemble at share `a` is the concatenation `[sqrt(a) * trained, sqrt(1 - a) * frozen]` of the two unit vectors,
whose dot products are `a * cos_trained + (1 - a) * cos_frozen` (what `export.pretrained_mix: {space: outputs,
trained_share: a}` makes `trained:DIR` compute). Every share is scored on validation only: the embedded Synth
`validation` release with and without its noise pool, and Fashion-MNIST's validation protocol
(`lookbench legacy import fashion-mnist-validation`); never on the default snapshot or the Fashion-MNIST test.

The rule, fixed before any number was seen: choose the largest share in the grid whose Fashion-MNIST-validation
Fine R@1 and nDCG@5 paired 95% intervals against the frozen model (share 0) are not wholly below 0, while the Synth
validation Fine R@1 gain over frozen stays at least +3 points both with and without noise. Writes `OUT/sweep.md`
(the table, the choice, the commands and the machine load) and `OUT/sweep.json`; finished evaluations are reused.

`score`:
Score a chosen output-space mix once, on the snapshots a run is reported on, from each model's cached vectors.

    python benchmarks/training_eval.py score --trained runs/demo --share 0.5 --out runs/final \
        --snapshot default --snapshot ood/fashion-mnist

Writes `OUT/<snapshot name>-<noise>.json` (+ per-query parquet) for each `--snapshot`, with and without its noise
pool where it has one: what `lookbench eval -m "trained:DIR?trained_share=A"` scores, computed as
`training_eval.py sweep` does (the fine-tuned vectors and the frozen `efficientnet-lite0` vectors, each embedded
once and cached, concatenated with weights sqrt(A) and sqrt(1 - A)), so a model scored before costs no embedding.
Compare each with the frozen model's result file by `lookbench compare`. The share is chosen on validation first
(`training_eval.py sweep`); this script never chooses anything.

`overlap`:
The validation ablations' paired tests on every query and again without the queries the training release reaches
by design (`lookbench compare --exclude-queries overlap_queries.json`), as one markdown table.

    python benchmarks/training_eval.py overlap --overlap OUT/overlap_queries.json --results DIR [--results DIR2]  \\
        --out table.md

Each comparison is the docs' (docs/training.md, "Ablations on validation"): A and B are result files named
`NAME[__mix][__noise-none].json` in the first `--results` folder that holds them.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from measure import run_subcommand

from lookbench._util.atomic import write_text_atomic
from lookbench.embeddings.provider import EmbeddingProvider, ProviderBase
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.metrics.bootstrap import PairedTest
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.meta import ModelMeta, ModelRun
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.results.compare import compare_results
from lookbench.results.io import save_run
from lookbench.results.query_sets import QuerySelection
from lookbench.snapshot.named import open_location
from lookbench.snapshot.reader import Snapshot

SHARES = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


METRICS_sweep = ["fine_recall@1", "ndcg@5"]


SYNTH_GAIN = 0.03


class Memo(ProviderBase):
    """Embeds each split once per model and normalises it."""

    def __init__(self, provider: EmbeddingProvider) -> None:
        self.provider = provider
        self.spec = provider.spec
        self.done: dict[tuple[str, str, str], np.ndarray] = {}

    def unit(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """The split's L2-normalised vectors."""
        key = (str(snapshot.root), subset, split)
        if key not in self.done:
            vectors = np.asarray(self.provider.embed_split(snapshot, subset, split), dtype=np.float32)
            self.done[key] = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return self.done[key]


@dataclass
class Mixed(ProviderBase):
    """The ensemble at one share, from the two memoised models."""

    trained: Memo
    frozen: Memo
    share: float
    returns_new_arrays = True

    @property
    def spec(self) -> str:  # type: ignore[override]
        return f"{self.trained.spec.partition('?')[0]}?trained_share={self.share:g}"

    def embed_split(self, snapshot: Snapshot, subset: str, split: str) -> np.ndarray:
        """`[sqrt(a) * trained, sqrt(1 - a) * frozen]`."""
        a = self.share
        return np.concatenate(
            [np.sqrt(a) * self.trained.unit(snapshot, subset, split),
             np.sqrt(1 - a) * self.frozen.unit(snapshot, subset, split)], axis=1,
        )  # fmt: skip

    def describe(self) -> ModelRun:
        """What the result file records."""
        name = f"{self.trained.spec} + {self.frozen.spec}, outputs, fine-tuned share {self.share:g}"
        details = {"trained_share": self.share, "space": "outputs"}
        return ModelMeta(spec=self.spec, kind="pretrained_mix").result_record(name, details=details)


def interval(test: Any) -> str:
    return f"{100 * test.diff:+.2f} [{100 * test.ci_low:+.2f}, {100 * test.ci_high:+.2f}]"


def main_sweep() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trained", type=Path, required=True, help="A `lookbench train` model folder.")
    parser.add_argument("--synth", default="validation", help="Synth validation snapshot (default: embedded).")
    parser.add_argument("--fmnist", required=True, help="The fashion-mnist-validation snapshot folder.")
    parser.add_argument("--frozen", default=DEFAULT_MODEL, help="The pretrained model (the recipe's backbone).")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    started, load_start = time.perf_counter(), os.getloadavg()
    results = args.out / "results"
    results.mkdir(parents=True, exist_ok=True)
    trained = Memo(resolve_model(f"trained:{args.trained}?trained_share=1", EmbedOptions()))
    frozen = Memo(resolve_model(args.frozen, EmbedOptions()))
    settings = {
        "synth-noise": (args.synth, NoisePool.ALL),
        "synth-clean": (args.synth, NoisePool.NONE),
        "fmnist-val": (args.fmnist, NoisePool.ALL),
    }
    snapshots = {location: open_location(location) for location in {args.synth, args.fmnist}}
    for name, (location, noise) in settings.items():
        for share in SHARES:
            target = results / f"{name}-{share:.1f}.json"
            if not target.is_file():
                provider = Mixed(trained, frozen, share)
                output = evaluate(snapshots[location], provider, EvalSettings(resamples=args.resamples, noise=noise))
                save_run(output.result, output.per_query, target)
    rows, records, chosen = [], [], None
    for share in SHARES:
        tests = {}
        for name in settings:
            _, _, found = compare_results(
                results / f"{name}-{share:.1f}.json", results / f"{name}-0.0.json", METRICS_sweep, args.resamples
            )
            tests[name] = {t.metric: t for t in found}
        synth_ok = all(tests[n]["fine_recall@1"].diff >= SYNTH_GAIN for n in ("synth-noise", "synth-clean"))
        ood_ok = all(tests["fmnist-val"][m].ci_high >= 0 for m in METRICS_sweep)
        if synth_ok and ood_ok:
            chosen = share
        noise, clean, ood = tests["synth-noise"], tests["synth-clean"], tests["fmnist-val"]
        rows.append(
            f"| {share:.1f} | {100 * noise['fine_recall@1'].mean_a:.2f} | {interval(noise['fine_recall@1'])} | "
            f"{interval(clean['fine_recall@1'])} | {100 * ood['fine_recall@1'].mean_a:.2f} | "
            f"{interval(ood['fine_recall@1'])} | {interval(ood['ndcg@5'])} | {'yes' if synth_ok and ood_ok else 'no'} |"
        )
        records.append({"share": share, **{n: {m: vars(t) for m, t in ts.items()} for n, ts in tests.items()}})
    load_end = os.getloadavg()
    text = "\n".join(
        [
            "# Output-space ensemble share, chosen on validation",
            "",
            "Differences are paired (`lookbench compare`'s bootstrap, 95%) against share 0 (the frozen backbone), in "
            "points.",
            "",
            "| trained share | Synth val Fine R@1 (noise) | vs frozen, noise | vs frozen, no noise | FMNIST-val Fine "
            "R@1 | vs frozen | FMNIST-val nDCG@5 vs frozen | meets the rule |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
            *rows,
            "",
            f"Chosen by the rule (largest share meeting it): {chosen if chosen is not None else 'none'}",
            "",
            f"Command: python benchmarks/training_eval.py sweep --trained {args.trained} --synth {args.synth} "
            f"--fmnist {args.fmnist} --out {args.out}",
            f"Machine: {os.cpu_count()} CPUs; load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f} "
            f"at the start, {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f} at the end; "
            f"{time.perf_counter() - started:.0f} s wall.",
            "",
        ]
    )
    (args.out / "sweep.md").write_text(text, encoding="utf-8")
    (args.out / "sweep.json").write_text(json.dumps({"chosen": chosen, "shares": records}, indent=2) + "\n")
    print(text)


def main_score() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trained", type=Path, required=True, help="A `lookbench train` model folder.")
    parser.add_argument("--share", type=float, required=True, help="The fine-tuned share chosen on validation.")
    parser.add_argument("--snapshot", action="append", required=True, help="A snapshot location (repeatable).")
    parser.add_argument("--frozen", default=DEFAULT_MODEL, help="The pretrained model (the recipe's backbone).")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    if not 0 <= args.share <= 1:
        parser.error(f"--share {args.share}: expected a number in [0, 1]")
    args.out.mkdir(parents=True, exist_ok=True)
    provider = Mixed(
        Memo(resolve_model(f"trained:{args.trained}?trained_share=1", EmbedOptions())),
        Memo(resolve_model(args.frozen, EmbedOptions())),
        args.share,
    )
    for location in args.snapshot:
        snapshot = open_location(location)
        name = Path(location).name if location != "default" else "default"
        pools = (NoisePool.ALL, NoisePool.NONE) if snapshot.has_noise else (NoisePool.ALL,)
        for noise in pools:
            target = args.out / f"{name}-{noise.value}.json"
            if target.exists():
                print(f"{target}: exists, kept")
                continue
            load = os.getloadavg()
            output = evaluate(snapshot, provider, EvalSettings(resamples=args.resamples, noise=noise))
            save_run(output.result, output.per_query, target)
            print(f"{target}: written (load at the start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")


COMPARISONS = [
    ("fine-tuned", "frozen", "fine-tuned vs frozen", ("",)),
    ("softmax", "frozen", "plain softmax vs frozen", ("",)),
    ("fine-tuned", "softmax", "ArcFace vs plain softmax", ("", "__mix")),
    ("fine-tuned", "freeze-16", "freeze 12 vs freeze 16", ("", "__mix")),
    ("fine-tuned", "no-attributes", "with vs without attribute heads", ("", "__mix")),
    ("fine-tuned", "partialfc-0.3", "every centre vs PartialFC sampling (rate 0.3)", ("", "__mix")),
]


"""(A, B, title, scorings): `__mix` is each model under the recipe's output-space mix (share 0.8)."""


METRICS_overlap = ["fine_recall@1", "coarse_recall@1", "ndcg@5"]


DESIGN_CLASSES = ("identical", "same_design_other_colour", "strict_fine_match")


"""The queries left out: a training product with the same design (any colour) or a strict fine match."""


def locate(name: str, folders: list[Path]) -> Path:
    """The first folder's `name.json`."""
    for folder in folders:
        if (folder / f"{name}.json").is_file():
            return folder / f"{name}.json"
    raise SystemExit(f"{name}.json is in none of {', '.join(map(str, folders))}")


def cell(t: PairedTest) -> str:
    """`+d [lo, hi] (p)` in points."""
    p = "< 0.001" if t.p_value < 0.001 else f"{t.p_value:.3f}"
    return f"{100 * t.diff:+.2f} [{100 * t.ci_low:+.2f}, {100 * t.ci_high:+.2f}] ({p})"


def main_overlap() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--overlap", type=Path, required=True, help="overlap_queries.json of the training release")
    parser.add_argument("--results", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    without = QuerySelection(exclude=args.overlap, classes=DESIGN_CLASSES)
    lines = [
        "| comparison | scored | queries | Fine R@1 | Coarse R@1 | nDCG@5 | distractor share@1 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for a, b, title, scorings in COMPARISONS:
        for mix in scorings:
            for noise in ("", "__noise-none"):
                metrics = METRICS_overlap + ([DISTRACTOR_METRIC] if not noise else [])
                paths = [locate(f"{name}{mix}{noise}", args.results) for name in (a, b)]
                label = f"{title}{', both mixed (share 0.8)' if mix else ''}"
                scored = "`--noise none`" if noise else "noise"
                for selection in (None, without):
                    tests = compare_results(paths[0], paths[1], metrics, args.resamples, 0, selection)[2]
                    cells = [cell(t) for t in tests] + ([] if not noise else ["-"])
                    which = "all" if selection is None else "no design overlap"
                    lines.append(f"| {label} | {scored} | {which} ({tests[0].n}) | " + " | ".join(cells) + " |")
    load_end = os.getloadavg()[0]
    lines.append(f"\n(1-minute load {load_start:.1f} at the start, {load_end:.1f} at the end)")
    write_text_atomic(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))


SUBCOMMANDS = {
    "sweep": main_sweep,
    "score": main_score,
    "overlap": main_overlap,
}


def main() -> None:
    run_subcommand("training_eval", SUBCOMMANDS)


if __name__ == "__main__":
    main()
