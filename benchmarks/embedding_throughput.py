"""Embedding throughput: model only on pre-decoded tensors vs end to end from a snapshot, plus decode throughput.

    python benchmarks/embedding_throughput.py --model efficientnet-lite0 --images 384 --batch-size 32
    python benchmarks/embedding_throughput.py --model 'timm:vit_large_patch16_224?pretrained=0' --precision bf16
    python benchmarks/embedding_throughput.py --images 256 --background-load 8 --decode-priority low
    python benchmarks/embedding_throughput.py --images 64 --repeats 5 --background-load 8 --phases

`--background-load N` starts N busy-loop processes for the measured repeats only (each ends by itself after
`--background-seconds`, and all are killed when the repeats end), as a shared machine under load would.
`--decode-priority` pins the decoding threads' niceness (`low`: nice 19 as before the adaptive choice, `caller`:
the caller's), to measure each choice against the default `adaptive` one. `--phases` also times, in each repeat
and on one thread, each step of decoding and preprocessing (header, pixel decode, resize and crop, normalisation,
sha256 of the bytes) on the distinct pictures, so the CPU end to end spends beyond the model can be split.

End to end covers everything `lookbench eval` does for a split that is not cached yet: reading parquet, hashing
image bytes, decoding and preprocessing (CPU worker threads, or the model's device with `--decode device`),
inference at the chosen precision, and writing the cache. Model only feeds the same model preprocessed batches that
are already where it runs (host arrays on CPU, device tensors on CUDA), at the same precision and batch size.
Decode throughput is reported for the CPU path (one core, and the bound for every core) and, for torch models with
torchvision, for the device decoder. The CPU and the CUDA numbers come from the same script.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from measure import results_file
from PIL import Image

from lookbench._util.cores import usable_cores
from lookbench._util.images import decode_image, opened
from lookbench._util.precision import PRECISIONS
from lookbench.embeddings import pipeline
from lookbench.embeddings.machine import encoder_device
from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.models.embed_options import DECODE_PLACES, EmbedOptions
from lookbench.models.registry import resolve_model
from lookbench.snapshot.digests import DigestIndex
from lookbench.snapshot.reader import Snapshot, open_snapshot
from lookbench.snapshot.writer import image_value, rows_to_table, write_split


def photo_jpeg(seed: int, width: int, height: int) -> bytes:
    """A photo-like JPEG: smooth colour gradients plus texture noise, quality 90."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack([np.sin(x / rng.uniform(20, 80) + c) * np.cos(y / rng.uniform(20, 80)) for c in range(3)], axis=-1)
    pixels = (base * 90 + 128 + rng.normal(0, 12, size=(height, width, 3))).clip(0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def photo_row(data: bytes, name: str, item_id: str, width: int, height: int) -> dict[str, object]:
    """A split row holding the JPEG `data`, with every required column."""
    return {
        "image": image_value(data, name),
        "raw_image": None,
        "category": "top",
        "main_attribute": "red",
        "other_attributes": [],
        "bbox": [0.0, 0.0, float(width), float(height)],
        "item_ID": item_id,
        "task": "retrieval",
        "difficulty": "easy",
    }


def with_comment(jpeg: bytes, text: str) -> bytes:
    """The same JPEG with a comment segment after its start marker: other bytes (so never deduplicated), same pixels."""
    payload = text.encode()
    return jpeg[:2] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + jpeg[2:]


def make_snapshot(root: Path, count: int, width: int, height: int, distinct: int = 256) -> Path:
    """One gallery split of `count` distinct JPEG files: `distinct` pictures, later copies told apart by a comment
    segment (decoding costs the same; drawing thousands of pictures would take longer than the benchmark)."""
    pictures = [photo_jpeg(i, width, height) for i in range(min(count, distinct))]
    rows = []
    for i in range(count):
        data = pictures[i % len(pictures)]
        if i >= len(pictures):
            data = with_comment(data, f"copy {i}")
        rows.append(photo_row(data, f"{i}.jpg", f"g{i}", width, height))
    snap = root / "v20260101"
    write_split(rows_to_table(rows), snap / "real_studio_flat" / "gallery.parquet")
    write_split(rows_to_table(rows[:2]), snap / "real_studio_flat" / "query.parquet")
    return snap


class Clock:
    """Wall time that waits for queued CUDA work before reading the clock."""

    def __init__(self, torch: Any, device: str) -> None:
        self.sync = torch.cuda.synchronize if torch is not None and device.startswith("cuda") else (lambda: None)

    def now(self) -> float:
        self.sync()
        return time.perf_counter()


def model_only(provider: ModelEmbeddings, tensors: np.ndarray, clock: Clock) -> tuple[float, float]:
    """(images/s, CPU ms per image) feeding preprocessed batches that already sit where the model runs."""
    encoder = provider.encoder
    size = provider.batch_size
    device = encoder_device(encoder)
    if device.startswith("cuda"):
        from lookbench.embeddings.device_decode import DeviceBatch

        torch = encoder.torch  # type: ignore[attr-defined]
        batches: list[Any] = [
            DeviceBatch(torch.from_numpy(tensors[i : i + size]).to(device)) for i in range(0, len(tensors), size)
        ]
    else:
        batches = [tensors[i : i + size] for i in range(0, len(tensors), size)]
    submit = getattr(encoder, "submit", None)
    started, cpu = clock.now(), time.process_time()
    pending = [submit(batch) if submit is not None else encoder.encode(batch) for batch in batches]
    if submit is not None:
        for result in pending:
            result()
    elapsed = clock.now() - started
    return len(tensors) / elapsed, (time.process_time() - cpu) / len(tensors) * 1e3


def device_decode_rate(provider: ModelEmbeddings, images: list[bytes | None], clock: Clock) -> float | None:
    """Images/s of the device decoder (batch decode, resize, crop, normalise), or None where it cannot run."""
    encoder = provider.encoder
    if encoder.preprocess is None or not hasattr(encoder, "torch"):
        return None
    try:
        from lookbench.embeddings.device_decode import DeviceDecoder

        decoder = DeviceDecoder(encoder.preprocess, encoder_device(encoder))
    except Exception:  # noqa: BLE001 - no torchvision: nothing to measure
        return None
    size = provider.batch_size
    decoder.decode(images[:size])  # warm-up
    started = clock.now()
    for i in range(0, len(images), size):
        decoder.decode(images[i : i + size])
    return len(images) / (clock.now() - started)


@contextmanager
def background_load(processes: int, seconds: float) -> Iterator[None]:
    """`processes` busy-loop processes, each stopping by itself after `seconds`, all killed on exit."""
    loop = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(processes)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


def phase_times(images: list[bytes], draft: int | None, provider: ModelEmbeddings) -> dict[str, float]:
    """CPU ms per image of each decode and preprocess step on one thread, each step over all `images` in turn."""
    preprocess = provider.encoder.preprocess
    assert preprocess is not None
    out = np.empty((3, preprocess.crop, preprocess.crop), np.float32)
    decoded = [decode_image(d, draft) for d in images]
    cropped = [preprocess.resize_crop(image) for image in decoded]

    def header(data: bytes) -> None:
        with opened(data) as image:
            image.size  # noqa: B018 - parsing the markers is the step timed

    steps: dict[str, tuple[Any, list[Any]]] = {
        "sha256": (lambda d: hashlib.sha256(d).digest(), images),
        "header": (header, images),
        "decode_with_header": (lambda d: decode_image(d, draft), images),
        "resize_crop": (preprocess.resize_crop, decoded),
        "normalise": (lambda image: preprocess.normalise_into(image, out), cropped),
        "all_steps": (lambda d: preprocess.into(decode_image(d, draft), out), images),
    }
    times = {}
    for name, (step, inputs) in steps.items():
        cpu = time.process_time()
        for item in inputs:
            step(item)
        times[name] = (time.process_time() - cpu) / len(inputs) * 1e3
    return times


DECODE_PRIORITIES = {"low": pipeline.DECODE_NICE, "caller": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="efficientnet-lite0")
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--batch-size", type=int, help="default: chosen from the machine, as lookbench eval does")
    parser.add_argument("--workers", type=int, help="default: chosen from the machine, as lookbench eval does")
    parser.add_argument("--width", type=int, default=400)
    parser.add_argument("--height", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precision", default="auto", choices=PRECISIONS)
    parser.add_argument("--decode", default="auto", choices=DECODE_PLACES)
    parser.add_argument("--jpeg-draft", action="store_true", help="decode large JPEGs at a reduced DCT scale")
    parser.add_argument("--background-load", type=int, default=0, help="busy-loop processes during the repeats")
    parser.add_argument("--background-seconds", type=float, default=900.0, help="upper bound on each one's life")
    parser.add_argument("--decode-priority", default="adaptive", choices=["adaptive", *DECODE_PRIORITIES])
    parser.add_argument("--phases", action="store_true", help="also time each decode/preprocess step per repeat")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    if args.decode_priority != "adaptive":
        pinned = DECODE_PRIORITIES[args.decode_priority]
        pipeline.decode_nice = lambda cores=None: pinned  # type: ignore[assignment]

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        snap = open_snapshot(make_snapshot(root, args.images, args.width, args.height))
        options = EmbedOptions(
            cache_dir=root / "warm",
            batch_size=args.batch_size,
            workers=args.workers,
            progress=False,
            jpeg_draft=args.jpeg_draft,
            precision=args.precision,
            decode=args.decode,
        )
        provider = resolve_model(args.model, options)
        assert isinstance(provider, ModelEmbeddings)
        encoder = provider.encoder
        assert encoder.preprocess is not None, "the benchmark needs a tensor model"
        device = encoder_device(encoder)
        clock = Clock(getattr(encoder, "torch", None), device)
        images = [data for _, batch in snap.iter_images("real_studio_flat", "gallery") for data in batch]
        draft = encoder.preprocess.draft_size if args.jpeg_draft else None
        sample = images[:256]  # the distinct pictures: decoding all of them one core at a time would dominate
        cpu = time.process_time()
        decoded = encoder.preprocess.batch([decode_image(d, draft) for d in sample])
        cpu_preprocess = (time.process_time() - cpu) / len(sample) * 1e3
        tensors = np.concatenate([decoded] * -(-len(images) // len(sample)))[: len(images)]
        model_only(provider, tensors[: provider.batch_size * 2], clock)  # warm-up (kernels, autotuning)
        device_decode = device_decode_rate(provider, images, clock)

        # Alternate the two measurements so that load from other processes affects both alike.
        inference, end_to_end, cpu_inference, cpu_end_to_end = [], [], [], []
        loads = []
        phases: list[dict[str, float]] = []
        with background_load(args.background_load, args.background_seconds):
            for r in range(args.repeats):
                rate, cpu_ms = model_only(provider, tensors, clock)
                inference.append(rate)
                cpu_inference.append(cpu_ms)
                cold = options.model_copy(update={"cache_dir": root / f"cold{r}"})
                run = ModelEmbeddings(provider.spec, encoder, cold)
                fresh = Snapshot(snap.root, digests=DigestIndex(None))  # image hashing is part of a first run
                started, cpu = clock.now(), time.process_time()
                run.embed_split(fresh, "real_studio_flat", "gallery")
                end_to_end.append(len(images) / (clock.now() - started))
                cpu_end_to_end.append((time.process_time() - cpu) / len(images) * 1e3)
                if args.phases:
                    phases.append(phase_times(sample, draft, provider))
                loads.append(os.getloadavg()[0])

    cores = usable_cores()
    result: dict[str, Any] = {
        "model": args.model,
        "device": device,
        "precision": provider.precision or "model's own",
        "decode": "device" if provider.device_decode else "cpu",
        "images": args.images,
        "image_size": f"{args.width}x{args.height} JPEG",
        "batch_size": provider.batch_size,
        "workers": provider.workers,
        "jpeg_draft": args.jpeg_draft,
        "cpus": cores,
        "inference_only_img_s": round(float(np.median(inference)), 1),
        "end_to_end_img_s": round(float(np.median(end_to_end)), 1),
    }
    result["ratio"] = round(result["end_to_end_img_s"] / result["inference_only_img_s"], 3)
    result["cpu_ms_per_image_inference"] = round(float(np.median(cpu_inference)), 2)
    result["cpu_ms_per_image_end_to_end"] = round(float(np.median(cpu_end_to_end)), 2)
    result["cpu_ms_per_image_decode_preprocess"] = round(cpu_preprocess, 2)
    result["decode_cpu_img_s_one_core"] = round(1e3 / cpu_preprocess, 1)
    result["decode_cpu_img_s_all_cores_bound"] = round(cores * 1e3 / cpu_preprocess, 1)
    result["decode_device_img_s"] = None if device_decode is None else round(device_decode, 1)
    if not device.startswith("cuda"):
        # If inference and decoding kept every core busy, no pipeline could beat this ratio.
        all_busy_img_s = 1e3 * cores / (result["cpu_ms_per_image_inference"] + cpu_preprocess)
        result["ratio_bound_all_cores_busy"] = round(min(1.0, all_busy_img_s / result["inference_only_img_s"]), 3)
        result["ratio_of_bound"] = round(result["ratio"] / result["ratio_bound_all_cores_busy"], 3)
    ratios = [e / i for e, i in zip(end_to_end, inference, strict=True)]
    result["ratio_per_repeat"] = [round(r, 3) for r in ratios]
    result["ratio_min"] = round(min(ratios), 3)
    result["ratio_median"] = round(float(np.median(ratios)), 3)
    result["background_load"] = args.background_load
    result["decode_priority"] = args.decode_priority
    if phases:
        result["cpu_ms_per_image_phases_min_median"] = {
            name: [round(min(p[name] for p in phases), 3), round(float(np.median([p[name] for p in phases])), 3)]
            for name in phases[0]
        }
        # What end to end spends beyond the model and the steps above: parquet reads, queues, cache writes.
        steps = float(np.median([p["all_steps"] + p["sha256"] for p in phases]))
        rest = result["cpu_ms_per_image_end_to_end"] - result["cpu_ms_per_image_inference"] - steps
        result["cpu_ms_per_image_rest_of_pipeline"] = round(rest, 2)
    result["load_average_1min_per_repeat"] = [round(load, 2) for load in loads]
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    with results_file("embedding_throughput"):
        main()
