"""Embedding throughput of a model: inference only on pre-decoded tensors vs end to end from a snapshot.

    python benchmarks/embedding_throughput.py --model efficientnet-lite0 --images 512 --batch-size 32

End to end covers everything `lookbench eval` does for a split that is not cached yet: reading parquet,
hashing image bytes, JPEG decoding and preprocessing (worker threads), inference, and writing the cache.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.options import EmbedOptions
from lookbench.embeddings.reader import decode_image
from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import open_snapshot
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


def photo_row(seed: int, item_id: str, width: int, height: int) -> dict[str, object]:
    """A split row holding `photo_jpeg(seed, ...)`, with every required column."""
    return {
        "image": image_value(photo_jpeg(seed, width, height), f"{seed}.jpg"),
        "raw_image": None,
        "category": "top",
        "main_attribute": "red",
        "other_attributes": [],
        "bbox": [0.0, 0.0, float(width), float(height)],
        "item_ID": item_id,
        "task": "retrieval",
        "difficulty": "easy",
    }


def make_snapshot(root: Path, count: int, width: int, height: int) -> Path:
    """One gallery split of `count` distinct JPEGs."""
    rows = [photo_row(i, f"g{i}", width, height) for i in range(count)]
    snap = root / "v20260101"
    write_split(rows_to_table(rows), snap / "real_studio_flat" / "gallery.parquet")
    write_split(rows_to_table(rows[:2]), snap / "real_studio_flat" / "query.parquet")
    return snap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="efficientnet-lite0")
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--width", type=int, default=400)
    parser.add_argument("--height", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jpeg-draft", action="store_true", help="decode large JPEGs at a reduced DCT scale")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        snap = open_snapshot(make_snapshot(root, args.images, args.width, args.height))
        options = EmbedOptions(
            cache_dir=root / "warm",
            batch_size=args.batch_size,
            workers=args.workers,
            progress=False,
            jpeg_draft=args.jpeg_draft,
        )
        provider = resolve_model(args.model, options)
        assert isinstance(provider, ModelEmbeddings)
        encoder = provider.encoder
        assert encoder.preprocess is not None, "the benchmark needs a tensor model"
        images = [data for _, batch in snap.iter_images("real_studio_flat", "gallery") for data in batch]
        draft = encoder.preprocess.draft_size if args.jpeg_draft else None
        tensors = encoder.preprocess.batch([decode_image(d, draft) for d in images])
        encoder.encode(tensors[: args.batch_size])  # warm-up
        cpu = time.process_time()
        for i in range(0, len(images), args.batch_size):
            encoder.preprocess.batch([decode_image(d, draft) for d in images[i : i + args.batch_size]])
        cpu_preprocess = (time.process_time() - cpu) / len(images) * 1e3

        # Alternate the two measurements so that load from other processes affects both alike.
        inference, end_to_end, cpu_inference, cpu_end_to_end = [], [], [], []
        for r in range(args.repeats):
            started, cpu = time.perf_counter(), time.process_time()
            for i in range(0, len(tensors), args.batch_size):
                encoder.encode(tensors[i : i + args.batch_size])
            inference.append(len(tensors) / (time.perf_counter() - started))
            cpu_inference.append((time.process_time() - cpu) / len(tensors) * 1e3)
            run = ModelEmbeddings(provider.spec, encoder, options.model_copy(update={"cache_dir": root / f"cold{r}"}))
            started, cpu = time.perf_counter(), time.process_time()
            run.embed_split(snap, "real_studio_flat", "gallery")
            end_to_end.append(len(images) / (time.perf_counter() - started))
            cpu_end_to_end.append((time.process_time() - cpu) / len(images) * 1e3)

    result = {
        "model": args.model,
        "images": args.images,
        "image_size": f"{args.width}x{args.height} JPEG",
        "batch_size": args.batch_size,
        "workers": args.workers,
        "jpeg_draft": args.jpeg_draft,
        "cpus": os.cpu_count(),
        "inference_only_img_s": round(float(np.median(inference)), 1),
        "end_to_end_img_s": round(float(np.median(end_to_end)), 1),
    }
    result["ratio"] = round(result["end_to_end_img_s"] / result["inference_only_img_s"], 3)
    result["cpu_ms_per_image_inference"] = round(float(np.median(cpu_inference)), 2)
    result["cpu_ms_per_image_end_to_end"] = round(float(np.median(cpu_end_to_end)), 2)
    result["cpu_ms_per_image_decode_preprocess"] = round(cpu_preprocess, 2)
    # If inference and decoding kept every core busy, no pipeline could beat this ratio.
    all_busy_img_s = 1e3 * (os.cpu_count() or 1) / (result["cpu_ms_per_image_inference"] + cpu_preprocess)
    result["ratio_bound_all_cores_busy"] = round(min(1.0, all_busy_img_s / result["inference_only_img_s"]), 3)
    result["ratio_per_repeat"] = [round(e / i, 3) for e, i in zip(end_to_end, inference, strict=True)]
    result["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
