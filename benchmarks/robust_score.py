"""Score a chosen output-space mix once, on the snapshots a run is reported on, from each model's cached vectors.

    python benchmarks/robust_score.py --trained runs/demo --share 0.5 --out runs/final \\
        --snapshot default --snapshot ood/fashion-mnist

Writes `OUT/<snapshot name>-<noise>.json` (+ per-query parquet) for each `--snapshot`, with and without its noise
pool where it has one: what `lookbench eval -m "trained:DIR?trained_share=A"` scores, computed as
`benchmarks/robust_sweep.py` does (the fine-tuned vectors and the frozen `efficientnet-lite0` vectors, each embedded
once and cached, concatenated with weights sqrt(A) and sqrt(1 - A)), so a model scored before costs no embedding.
Compare each with the frozen model's result file by `lookbench compare`. The share is chosen on validation first
(`robust_sweep.py`); this script never chooses anything.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from robust_sweep import Memo, Mixed

from lookbench.embeddings.options import EmbedOptions
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.runner import EvalSettings, evaluate
from lookbench.models.registry import DEFAULT_MODEL, resolve_model
from lookbench.results.io import save_run
from lookbench.synth.embedded import open_location


def main() -> None:
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


if __name__ == "__main__":
    main()
