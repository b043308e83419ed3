"""Measure the labelling loop on LookBench-Synth: the probe's true accuracy beside a judge's estimate.

    python benchmarks/labelling_accuracy.py --size small --judge-error 0.1 [--model efficientnet-lite0]

Builds two Synth releases (one to fit the probe on, one to label), runs collect -> dedup -> crop (true
boxes) -> annotate (probe) -> audit, and prints true and judged accuracy. The judge here is simulated from the
Synth truth with a known per-check error rate, so the audit's estimator is tested against a judge of known
quality; the annotator's true accuracy is the honest number.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import yaml
from measure import results_file

from lookbench.datasets.synth.generate import generate_snapshot
from lookbench.release.config import load_config
from lookbench.release.judge.judge import Verdict
from lookbench.release.judge.sampling import Check
from lookbench.release.pipeline import run_stages, stages_for
from lookbench.release.records import read_samples


class SimulatedJudge:
    """Knows each crop's true labels; flips a seeded `error_rate` share of its verdicts."""

    def __init__(self, truth: dict[str, set[str]], error_rate: float, seed: int = 0) -> None:
        self.truth = truth
        self.error_rate = error_rate
        self.seed = seed

    def _flip(self, sha: str, attribute: str) -> bool:
        digest = hashlib.sha256(f"{self.seed}\0{sha}\0{attribute}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.error_rate

    def judge(self, checks: list[tuple[Check, bytes, str]]) -> list[Verdict]:
        """Correct iff the value is among the crop's true labels, unless flipped."""
        out = []
        for check, _, sha in checks:
            right = check.attribute in self.truth[sha]
            out.append(Verdict("correct" if right != self._flip(sha, check.attribute) else "incorrect"))
        return out

    def describe(self) -> dict[str, Any]:
        """What judged."""
        return {"model": f"simulated (error rate {self.error_rate})", "prompt_version": "n/a"}


def measure(
    size: str, judge_error: float, margin: float, folder: Path, model: str = "features:colour-gradient"
) -> dict[str, Any]:
    """Run the loop and return the audit report."""
    train = generate_snapshot(folder / "train", date(2026, 4, 1), size, seed=1)
    labelled = generate_snapshot(folder / "synth", date(2026, 5, 1), size, seed=0)
    data = {
        "release_date": "2026-06-01",
        "output": str(folder / "out"),
        "sources": [{"kind": "synth", "name": "synth", "path": str(labelled)}],
        "crop": {"detector": "truth"},
        "annotate": {"backend": "probe", "probe": {"train": str(train), "model": model}},
        "audit": {"margin": margin, "canary_fraction": 0.1},
    }
    path = folder / "release.yaml"
    path.write_text(yaml.safe_dump(data))
    config = load_config(path)
    run_stages(config, stages_for(config)[:4])
    rows = read_samples(config.work / "annotate" / "samples.parquet")
    truth = {r.image_sha256: {r.source_main_attribute or "", *(r.source_other_attributes or [])} for r in rows}
    run = run_stages(config, stages_for(config, SimulatedJudge(truth, judge_error))[:5])
    return {entry.stage: entry.stats.model_dump(mode="json") for entry in run.log if entry.stage != "collect"}


def main() -> None:
    """CLI entry point: print the report as JSON."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="small")
    parser.add_argument("--judge-error", type=float, default=0.1)
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--model", default="features:colour-gradient", help="the probe's embedding model spec")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(args.size, args.judge_error, args.margin, Path(tmp), args.model)
    result["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    with results_file("labelling_accuracy"):
        main()
