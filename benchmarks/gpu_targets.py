"""The GPU targets in one run (about 3-6 minutes on one H200 with 16 cores); every number in one JSON file.

    PYTHONPATH=src python3 benchmarks/gpu_targets.py --out $OUT/gpu_targets.json

What it runs, each in its own process with a time limit, and the targets it checks:

1. `embedding_throughput.py` with a random-initialised `timm:vit_large_patch16_224?pretrained=0` on 400x600 JPEGs
   at bf16 (batch size and workers chosen from the machine, decoding on the GPU): model only, end to end, their
   ratio and the device decoder's images/s. Targets: end to end >= 2,500 img/s and >= 80% of model only.
2. The same at fp32 and with CPU decoding, for the table in docs/models.md (the issue measured 367 img/s model only
   at fp32 and 266 end to end).
3. `scale.py scoring --search torch --eval` at real scale (2,345 queries, ~60k corpora, 1024-d, every metric and
   1,000-resample intervals). Targets: <= 0.5 s, rankings and scores identical to `exact`.
4. `agreement.py decode --pixels-only` on 400x600 JPEGs: nvJPEG + GPU resize against the CPU reference, in 8-bit
   levels.

Needs torch with CUDA, torchvision, timm, pyarrow, Pillow, pydantic, typer and rich (benchmarks/README.md says how
to bring the ones the machine lacks). A step that fails or runs out of time is recorded with its error and the
others still run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import results_file

HERE = Path(__file__).resolve().parent
VIT_L = "timm:vit_large_patch16_224?pretrained=0"
NEEDED = ("torch", "torchvision", "timm", "pyarrow", "PIL", "pydantic", "typer", "rich", "numpy")


def step(name: str, script: str, args: list[str], timeout: int, work: Path) -> dict[str, Any]:
    """Run one benchmark script with `--json`; its numbers, or what went wrong."""
    out = work / f"{name}.json"
    file, *subcommand = script.split()
    command = [sys.executable, str(HERE / file), *subcommand, *args, "--json", str(out)]
    started = time.perf_counter()
    print(f"[gpu_targets] {name}: {' '.join(command[1:])}", flush=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    wall = round(time.perf_counter() - started, 1)
    if done.returncode != 0 or not out.is_file():
        return {"error": f"exit {done.returncode}", "stderr_tail": done.stderr[-3000:], "wall_s": wall}
    return {**json.loads(out.read_text()), "step_wall_s": wall}


def machine() -> dict[str, Any]:
    """GPU, driver, library versions and cores."""
    import torch

    info: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__, "cpus": os.cpu_count()}
    if torch.cuda.is_available():
        info |= {"gpu": torch.cuda.get_device_name(0), "cuda": torch.version.cuda}
        info["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    for name in ("torchvision", "timm", "numpy", "pyarrow"):
        module = __import__(name)
        info[name] = getattr(module, "__version__", "?")
    return info


def verdicts(report: dict[str, Any]) -> dict[str, Any]:
    """Each target with the measured figure and whether it is met."""
    out: dict[str, Any] = {}
    vit = report.get("vit_l_bf16_gpu_decode", {})
    if "end_to_end_img_s" in vit:
        out["end_to_end_at_least_2500_img_s"] = {
            "measured": vit["end_to_end_img_s"],
            "met": vit["end_to_end_img_s"] >= 2500,
        }
        out["end_to_end_at_least_80pct_of_model_only"] = {"measured": vit["ratio"], "met": vit["ratio"] >= 0.8}
    scoring = report.get("scoring_torch", {})
    if "total_s" in scoring:
        out["scoring_at_most_0_5_s"] = {"measured": scoring["total_s"], "met": scoring["total_s"] <= 0.5}
        out["scoring_identical_to_exact"] = {
            "measured": scoring.get("identical_to_exact"),
            "met": bool(scoring.get("identical_to_exact")),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "gpu_targets.json")
    parser.add_argument("--images", type=int, default=4096, help="images for the bf16 end-to-end runs")
    parser.add_argument("--model", default=VIT_L, help="another model for a quick try of the script itself")
    args = parser.parse_args()
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        raise SystemExit(f"missing Python packages: {', '.join(missing)} (benchmarks/README.md: GPU targets)")
    started = time.perf_counter()
    report: dict[str, Any] = {"machine": machine()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ.setdefault("LOOKBENCH_CACHE", str(work / "cache"))
        common = ["--model", args.model, "--width", "400", "--height", "600"]
        throughput = (  # name, images, precision, decoding, repeats, time limit
            ("vit_l_bf16_gpu_decode", args.images, "bf16", "device", 3, 240),
            ("vit_l_bf16_cpu_decode", args.images // 2, "bf16", "cpu", 1, 150),
            ("vit_l_fp32", args.images // 4, "fp32", "device", 1, 150),
        )
        for name, images, precision, decode, repeats, limit in throughput:
            options = ["--images", str(images), "--precision", precision, "--decode", decode, "--repeats", str(repeats)]
            report[name] = step(name, "embedding_throughput.py", [*common, *options], limit, work)
        report["scoring_torch"] = step("scoring_torch", "scale.py scoring", ["--search", "torch", "--eval"], 240, work)
        sys.path.insert(0, str(HERE))
        from embedding_throughput import make_snapshot

        photos = make_snapshot(work / "photos", 512, 400, 600)
        pixels = ["--model", args.model, "--snapshot", str(photos), "--pixels-only", "--pixel-images", "512"]
        report["decode_pixels"] = step("decode_pixels", "agreement.py decode", pixels, 150, work)
    report["targets"] = verdicts(report)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["targets"], indent=1))
    print(f"[gpu_targets] wrote {args.out} in {report['wall_s']} s")


if __name__ == "__main__":
    with results_file("gpu_targets"):
        main()
