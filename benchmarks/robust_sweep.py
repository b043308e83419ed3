"""Choose the share of the fine-tuned model in an output-space ensemble with its pretrained backbone, on validation.

    python benchmarks/robust_sweep.py --trained runs/demo --fmnist ood/fashion-mnist-validation --out runs/sweep

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

from lookbench.embeddings.meta import ModelMeta, ModelRun
from lookbench.embeddings.options import EmbedOptions
from lookbench.embeddings.provider import EmbeddingProvider, ProviderBase
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.results.compare import compare_results
from lookbench.results.io import save_run
from lookbench.snapshot.reader import Snapshot
from lookbench.synth.embedded import open_location

SHARES = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
METRICS = ["fine_recall@1", "ndcg@5"]
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


def main() -> None:
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
                results / f"{name}-{share:.1f}.json", results / f"{name}-0.0.json", METRICS, args.resamples
            )
            tests[name] = {t.metric: t for t in found}
        synth_ok = all(tests[n]["fine_recall@1"].diff >= SYNTH_GAIN for n in ("synth-noise", "synth-clean"))
        ood_ok = all(tests["fmnist-val"][m].ci_high >= 0 for m in METRICS)
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
            f"Command: python benchmarks/robust_sweep.py --trained {args.trained} --synth {args.synth} "
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


if __name__ == "__main__":
    main()
