"""Trivial baselines on a Synth release: what layout or colour alone scores, with and without the noise pool.

Evaluates, through `lookbench eval` itself (main fine rule, 1,000 bootstrap resamples), the weight-free
`features:thumbnail` (8 x 8 RGB thumbnail minus its mean) and `features:colour-histogram` (8 x 8 x 8 joint RGB
histogram) beside the default model EfficientNet-Lite0, each with the noise pool (`--noise all`) and without it
(`--noise none`), and prints Fine R@1 per subset and overall, Coarse R@1 and the share of queries whose top-1 is a
distractor, each with its 95% interval. A benchmark whose trivial baselines came near the model would measure
backdrops or colour, not garments; one whose noise pool they could avoid would carry a source signature.

    python benchmarks/synth_trivial_baselines.py [--size small] [--out bench-out/synth_trivial_baselines]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.synth.release import DEFAULT_RELEASE, DEFAULT_SEED, DEFAULT_SIZE

sys.path.insert(0, str(Path(__file__).parent))
from synth_validity import snapshot_for  # noqa: E402

MODELS = ("features:thumbnail", "features:colour-histogram", "efficientnet-lite0")
NOISE = ("all", "none")
SUBSETS = ("real_studio_flat", "aigen_studio", "real_streetlook", "aigen_streetlook")


def evaluate(snapshot: Path, spec: str, noise: str, target: Path) -> dict:
    """Run `lookbench eval` (or read the result a previous run of this script wrote) and return its result JSON."""
    if not target.is_file():
        args = ["eval", "-s", str(snapshot), "-m", spec, "--noise", noise, "-o", str(target), "--resamples", "1000"]
        result = CliRunner().invoke(app, args)
        if result.exit_code != 0:
            raise SystemExit(result.output)
    return json.loads(target.read_text())


def cell(metrics: dict, scope: str, name: str) -> str:
    """`value [low, high]` in percent."""
    m = metrics[scope][name]
    return f"{100 * m['value']:.2f} [{100 * m['ci_low']:.2f}, {100 * m['ci_high']:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--release", type=date.fromisoformat, default=DEFAULT_RELEASE)
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_trivial_baselines"))
    args = parser.parse_args()
    snapshot = snapshot_for(args.size, args.release, args.seed)
    print(f"snapshot: {snapshot} (size {args.size})")
    header = ["model", "noise", "Fine R@1 overall", *(f"Fine R@1 {s}" for s in SUBSETS), "Coarse R@1", "top-1 noise"]
    rows = []
    for spec in MODELS:
        for noise in NOISE:
            started = time.monotonic()
            target = args.out / args.size / f"{spec.replace(':', '_')}__noise-{noise}.json"
            metrics = evaluate(snapshot, spec, noise, target)["metrics"]
            share = cell(metrics, "overall", "distractor_share@1") if noise == "all" else "-"
            fine = [cell(metrics, s, "fine_recall@1") for s in ("overall", *SUBSETS)]
            rows.append([spec, noise, *fine, cell(metrics, "overall", "coarse_recall@1"), share])
            print(f"{spec} --noise {noise}: {time.monotonic() - started:.0f} s", flush=True)
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
