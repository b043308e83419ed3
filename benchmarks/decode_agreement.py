"""What decoding on the device changes against the CPU reference: pixels, vectors, rankings and metrics.

    python benchmarks/decode_agreement.py [--model builtin:efficientnet-lite0-torch] [--pixel-images 512]

Pixels: every sampled image of the snapshot (default: the embedded Synth default, JPEGs) is decoded and
preprocessed both ways for the model's own preprocessing; the report gives the largest and mean difference in 8-bit
levels and the share of values that differ. Then the whole snapshot is embedded and evaluated with `--decode cpu`
and `--decode device` at fp32 and compared like precision_agreement.py does. The device is the model's: CUDA
where present (nvJPEG), else torch on the CPU (libjpeg-turbo inside torchvision).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from agreement import (
    add_common_arguments,
    chosen_snapshot,
    metric_deltas,
    ranking_agreement,
    run,
    splits,
    vector_agreement,
    write,
)

from lookbench.embeddings.device_decode import DeviceDecoder
from lookbench.embeddings.machine import encoder_device
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.options import EmbedOptions
from lookbench.embeddings.reader import decode_image
from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import Snapshot


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


def main() -> None:
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


if __name__ == "__main__":
    main()
