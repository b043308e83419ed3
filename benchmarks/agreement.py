"""Agreement of one model evaluated two ways: `precision` (fp32 against lower precisions) and `decode` (device
decoding against the CPU reference).

    python benchmarks/agreement.py precision [--model SPEC] [--precisions bf16,fp16]
    python benchmarks/agreement.py decode [--model SPEC] [--pixel-images 512] [--pixels-only]

`precision`:
What a lower precision changes: fp32 against bf16 (or others) for one real offline model on a snapshot.

    python benchmarks/agreement.py precision [--model builtin:efficientnet-lite0-torch] [--precisions bf16,fp16]

For each precision the whole snapshot (default: the embedded Synth default) is embedded and evaluated, then
compared with fp32: cosine between the two vectors of every image, top-1 agreement and top-10 overlap of every
query's ranking, and the headline metrics with their differences in points (beside the fp32 interval's half-width,
which says how large a difference the benchmark can see). Vectors are cached like any `lookbench eval` run.
Runs on CPU (bf16/fp16 autocast on CPU) or on CUDA, wherever the model runs.

`decode`:
What decoding on the device changes against the CPU reference: pixels, vectors, rankings and metrics.

    python benchmarks/agreement.py decode [--model builtin:efficientnet-lite0-torch] [--pixel-images 512]

Pixels: every sampled image of the snapshot (default: the embedded Synth default, JPEGs) is decoded and
preprocessed both ways for the model's own preprocessing; the report gives the largest and mean difference in 8-bit
levels and the share of values that differ. Then the whole snapshot is embedded and evaluated with `--decode cpu`
and `--decode device` at fp32 and compared like agreement.py precision does. The device is the model's: CUDA
where present (nvJPEG), else torch on the CPU (libjpeg-turbo inside torchvision).
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
import pyarrow as pa
from measure import run_subcommand

from lookbench._util.images import decode_image
from lookbench.embeddings.device_decode import DeviceDecoder
from lookbench.embeddings.machine import encoder_device
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.evaluation.runner import EvalOutput, EvalSettings, evaluate
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import Snapshot, open_snapshot
from lookbench.snapshot.schema import NOISE

HEADLINE = ("fine_recall@1", "coarse_recall@1", "item_recall@1", "ndcg@5", "mrr@10", "fine_recall@10")


@dataclass
class Run:
    """One way of embedding: its label, provider and evaluation."""

    label: str
    provider: ModelEmbeddings
    output: EvalOutput


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The options both agreement scripts take."""
    parser.add_argument("--model", default="builtin:efficientnet-lite0-torch")
    parser.add_argument("--snapshot", help="snapshot folder; default: the embedded Synth default")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--json", type=Path)


def chosen_snapshot(location: str | None) -> Snapshot:
    """The snapshot at `location`, or the embedded LookBench-Synth default (generated on first use)."""
    if location:
        return open_snapshot(location)
    from lookbench.datasets.synth.default import default_snapshot as default_location

    return open_snapshot(default_location())


def run(snapshot: Snapshot, model: str, label: str, resamples: int, **options: Any) -> Run:
    """Embed (or take from the cache) and evaluate the whole snapshot."""
    provider = resolve_model(model, EmbedOptions(progress=True, **options))
    assert isinstance(provider, ModelEmbeddings), "the comparison needs a model, not precomputed vectors"
    return Run(label, provider, evaluate(snapshot, provider, EvalSettings(resamples=resamples)))


def splits(snapshot: Snapshot) -> list[tuple[str, str]]:
    """Every (subset, split) with images."""
    found = [(s, split) for s in snapshot.subsets for split in ("query", "gallery")]
    return found + ([(NOISE, "gallery")] if snapshot.has_noise else [])


def vector_agreement(snapshot: Snapshot, reference: Run, other: Run) -> dict[str, float]:
    """Cosine similarity between the two runs' vectors of every image."""
    cosines = []
    for subset, split in splits(snapshot):
        a = reference.provider.embed_split(snapshot, subset, split)
        b = other.provider.embed_split(snapshot, subset, split)
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        cosines.append(np.einsum("ij,ij->i", a, b))
    cos = np.concatenate(cosines)
    return {
        "images": len(cos),
        "cosine_mean": round(float(cos.mean()), 6),
        "cosine_min": round(float(cos.min()), 6),
        "cosine_p01": round(float(np.quantile(cos, 0.01)), 6),
    }


def ranking_agreement(reference: pa.Table, other: pa.Table) -> dict[str, float]:
    """Top-1 agreement and mean top-10 overlap per query."""
    a = reference["topk_rows"].to_pylist()
    b = other["topk_rows"].to_pylist()
    top1 = np.mean([x[0] == y[0] for x, y in zip(a, b, strict=True)])
    top10 = np.mean([len(set(x[:10]) & set(y[:10])) / 10 for x, y in zip(a, b, strict=True)])
    return {"queries": len(a), "top1_agreement": round(float(top1), 4), "top10_overlap": round(float(top10), 4)}


def metric_deltas(reference: Run, other: Run) -> dict[str, dict[str, dict[str, float]]]:
    """Per scope and headline metric: both values and the difference, in percentage points."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for scope, metrics in reference.output.result.metrics.items():
        for name in HEADLINE:
            if name not in metrics:
                continue
            ref, new = metrics[name], other.output.result.metrics[scope][name]
            half_width = (ref.ci_high - ref.ci_low) / 2
            out.setdefault(scope, {})[name] = {
                reference.label: round(100 * ref.value, 2),
                other.label: round(100 * new.value, 2),
                "delta_points": round(100 * (new.value - ref.value), 2),
                "ci_half_width_points": round(100 * half_width, 2),
            }
    return out


def write(report: dict[str, Any], path: Path | None) -> None:
    """Print the report as JSON, and write it to `path` when given."""
    text = json.dumps(report, indent=1)
    print(text)
    if path is not None:
        path.write_text(text + "\n")


def main_precision() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--precisions", default="bf16", help="comma-separated, compared with fp32")
    parser.add_argument("--decode", default="cpu", help="cpu (the reference) or device")
    args = parser.parse_args()
    snapshot = chosen_snapshot(args.snapshot)
    started = time.perf_counter()
    reference = run(snapshot, args.model, "fp32", args.resamples, precision="fp32", decode=args.decode)
    report: dict[str, object] = {
        "model": args.model,
        "snapshot": snapshot.snapshot_id,
        "device": reference.provider.describe().get("device"),
        "decode": args.decode,
        "compared_with": "fp32",
    }
    for precision in args.precisions.split(","):
        other = run(snapshot, args.model, precision, args.resamples, precision=precision, decode=args.decode)
        report[precision] = {
            "vectors": vector_agreement(snapshot, reference, other),
            "rankings": ranking_agreement(reference.output.per_query, other.output.per_query),
            "metrics": metric_deltas(reference, other),
        }
    report["wall_s"] = round(time.perf_counter() - started, 1)
    report["load_average_1min"] = round(os.getloadavg()[0], 2)
    write(report, args.json)


def pixel_agreement(snapshot: Snapshot, decoder: DeviceDecoder, sample: int) -> dict[str, float]:
    """Level differences between the device decoder and the CPU path on up to `sample` images, spread over splits."""
    images: list[bytes | None] = []
    for subset, split in splits(snapshot):
        images += [data for _, batch in snapshot.iter_images(subset, split) for data in batch]
    picked = [images[i] for i in np.linspace(0, len(images) - 1, min(sample, len(images))).astype(int)]
    scale, _ = decoder.preprocess.affine()
    worst, total, differing, values = 0.0, 0.0, 0, 0
    for start in range(0, len(picked), 64):
        chunk = picked[start : start + 64]
        batch, ok, _ = decoder.decode(chunk)
        device = batch.tensor.float().cpu().numpy()
        reference = np.stack([decoder.preprocess(decode_image(chunk[i])) for i in ok])
        levels = np.abs(device - reference) / scale[None]
        worst = max(worst, float(levels.max()))
        total += float(levels.sum())
        differing += int((levels > 0.5).sum())
        values += levels.size
    return {
        "images": len(picked),
        "max_level_difference": round(worst, 3),
        "mean_level_difference": round(total / values, 4),
        "share_of_values_differing": round(differing / values, 4),
    }


def main_decode() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--pixel-images", type=int, default=512)
    parser.add_argument("--pixels-only", action="store_true", help="skip embedding and evaluating the snapshot")
    args = parser.parse_args()
    snapshot = chosen_snapshot(args.snapshot)
    started = time.perf_counter()
    reference = None
    if args.pixels_only:
        provider = resolve_model(args.model, EmbedOptions(precision="fp32", progress=False))
        assert isinstance(provider, ModelEmbeddings)
        encoder = provider.encoder
    else:
        reference = run(snapshot, args.model, "cpu", args.resamples, precision="fp32", decode="cpu")
        encoder = reference.provider.encoder
    assert encoder.preprocess is not None, "decoding on the device needs a model taking preprocessed tensors"
    device = encoder_device(encoder)
    report: dict[str, object] = {"model": args.model, "snapshot": snapshot.snapshot_id, "device": device}
    report["pixels"] = pixel_agreement(snapshot, DeviceDecoder(encoder.preprocess, device), args.pixel_images)
    if reference is not None:
        other = run(snapshot, args.model, "device", args.resamples, precision="fp32", decode="device")
        report["vectors"] = vector_agreement(snapshot, reference, other)
        report["rankings"] = ranking_agreement(reference.output.per_query, other.output.per_query)
        report["metrics"] = metric_deltas(reference, other)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    report["load_average_1min"] = round(os.getloadavg()[0], 2)
    write(report, args.json)


SUBCOMMANDS = {
    "precision": main_precision,
    "decode": main_decode,
}


def main() -> None:
    run_subcommand("agreement", SUBCOMMANDS)


if __name__ == "__main__":
    main()
