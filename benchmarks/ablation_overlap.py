"""The validation ablations' paired tests on every query and again without the queries the training release reaches
by design (`lookbench compare --exclude-queries overlap_queries.json`), as one markdown table.

    python benchmarks/ablation_overlap.py --overlap OUT/overlap_queries.json --results DIR [--results DIR2] \
        --out table.md

Each comparison is the docs' (docs/training.md, "Ablations on validation"): A and B are result files named
`NAME[__mix][__noise-none].json` in the first `--results` folder that holds them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from lookbench.atomic import write_text_atomic
from lookbench.metrics.bootstrap import PairedTest
from lookbench.metrics.definitions import DISTRACTOR_METRIC
from lookbench.results.compare import compare_results
from lookbench.results.query_sets import QuerySelection

COMPARISONS = [
    ("fine-tuned", "frozen", "fine-tuned vs frozen", ("",)),
    ("softmax", "frozen", "plain softmax vs frozen", ("",)),
    ("fine-tuned", "softmax", "ArcFace vs plain softmax", ("", "__mix")),
    ("fine-tuned", "freeze-16", "freeze 12 vs freeze 16", ("", "__mix")),
    ("fine-tuned", "no-attributes", "with vs without attribute heads", ("", "__mix")),
    ("fine-tuned", "partialfc-0.3", "every centre vs PartialFC sampling (rate 0.3)", ("", "__mix")),
]
"""(A, B, title, scorings): `__mix` is each model under the recipe's output-space mix (share 0.8)."""
METRICS = ["fine_recall@1", "coarse_recall@1", "ndcg@5"]
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


def main() -> None:
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
                metrics = METRICS + ([DISTRACTOR_METRIC] if not noise else [])
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


if __name__ == "__main__":
    main()
