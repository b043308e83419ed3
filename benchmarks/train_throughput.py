"""Training throughput: the whole `lookbench train` step (data loading included) vs the model-only step.

    python benchmarks/train_throughput.py                      # GPU target: ViT-L/16 224 bf16, 20k classes
    python benchmarks/train_throughput.py --backbone 'timm:vit_tiny_patch16_224?pretrained=0' \
        --classes 200 --batch 16 --steps 4 --warmup 2 --precision fp32 --workers 2     # CPU smoke run

Model-only: one pre-made batch already on the device; forward, margin softmax (ArcFace through PartialFC over
`--classes` identities), backward and AdamW step, timed after `--warmup` steps. End to end: the real trainer on a
generated training snapshot (`--classes` items x `--views` JPEGs), decoding and augmenting in DataLoader workers,
timed between its log records after the same warm-up. Both in one process, alternating nothing else. Prints and
writes a JSON record with both rates, their ratio (the issue's target: >= 0.8) and the machine load.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding_throughput import photo_jpeg, photo_row  # noqa: E402
from measure import results_file  # noqa: E402

from lookbench.snapshot.writer import rows_to_table, write_split  # noqa: E402


def training_snapshot(root: Path, classes: int, views: int, side: int) -> Path:
    """`classes` items x `views` distinct photo-like JPEGs (`side` px) in one training split."""
    rows = [
        photo_row(photo_jpeg(seed, side, side), f"{seed}.jpg", f"item-{item}", side, side)
        for item in range(classes)
        for view in range(views)
        for seed in [item * views + view]
    ]
    snap = root / "v20260101"
    write_split(rows_to_table(rows), snap / "real_studio_flat" / "gallery.parquet")
    return snap


def config(args: argparse.Namespace, snapshot: Path, steps: int) -> dict[str, object]:
    """The training config both measurements share."""
    return {
        "seed": 0,
        "data": {
            "train": {"snapshot": str(snapshot)},
            "validation": None,
            "guard": {"enabled": False},
            "workers": args.workers,
        },
        "model": {
            "backbone": args.backbone,
            "embedding_dim": 512,
            "image_size": args.image_size,
            "grad_checkpointing": args.grad_checkpointing,
            "compile": args.compile,
        },
        "loss": {
            "identity": {"kind": "arcface", "margin": 0.25, "scale": 32, "sample_rate": 1.0},
            "category": {"weight": 0.0},
            "attributes": {"weight": 0.0},
        },
        "optim": {"lr": 1e-4, "head_lr_multiplier": 10},
        "schedule": {"steps": steps, "kind": "constant"},
        "batch": {"size": args.batch, "m_per_class": 2},
        "augment": {"scale": [0.35, 1.0]},
        "runtime": {"device": args.device, "precision": args.precision},
        "checkpoint": {"every_steps": 10**9},
        "log_every_steps": 1,
    }


def model_only(args: argparse.Namespace, snapshot: Path) -> float:
    """Images per second of forward + loss + backward + AdamW on one resident batch."""
    import torch

    from lookbench.models.registry import create_backbone
    from lookbench.taxonomy.loader import load_taxonomy
    from lookbench.train.config import IdentityLoss, Optim
    from lookbench.train.distributed import pick_device
    from lookbench.train.heads import TrainingModel
    from lookbench.train.labels import LabelSpace
    from lookbench.train.optim import centre_optimizer, make_optimizer, param_groups
    from lookbench.train.partial_fc import PartialFC

    device = pick_device(args.device, 0)
    backbone = create_backbone(args.backbone)
    if args.grad_checkpointing:
        backbone.set_grad_checkpointing(True)
    model = TrainingModel(backbone, 512, LabelSpace.of(load_taxonomy()), False, False).to(device)
    pfc_loss = IdentityLoss(kind="arcface", margin=0.25, scale=32)
    pfc = PartialFC(args.classes, 512, pfc_loss).to(device)
    cfg = Optim(lr=1e-4, head_lr_multiplier=10)
    optimizer = make_optimizer(param_groups(backbone, [model.embedder.head], cfg), cfg)
    pfc_optimizer = centre_optimizer(pfc.weight, pfc_loss, cfg)
    forward = torch.compile(model) if args.compile else model
    size = args.image_size or backbone.preprocess.crop
    images = torch.randn(args.batch, 3, size, size, device=device)
    labels = torch.randint(0, args.classes, (args.batch,), device=device)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.precision == "bf16")

    def step() -> None:
        with autocast:
            loss = pfc(forward(images).embedding, labels)
        loss.backward()
        optimizer.step()
        pfc_optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        pfc_optimizer.zero_grad(set_to_none=True)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(args.warmup):
        step()
    sync()
    started = time.perf_counter()
    for _ in range(args.steps):
        step()
    sync()
    return args.steps * args.batch / (time.perf_counter() - started)


def end_to_end(args: argparse.Namespace, snapshot: Path, folder: Path) -> float:
    """Images per second of the real trainer between the warm-up's last log record and the run's last."""
    from lookbench.train.config import parse_config
    from lookbench.train.loop import Trainer

    total = args.warmup + args.steps
    Trainer(
        parse_config(config(args, snapshot, total), "benchmark"), folder / "run", progress=False, say=lambda _m: None
    ).run()
    records = [json.loads(line) for line in (folder / "run" / "train.jsonl").read_text().splitlines()]
    timed = {r["step"]: r["elapsed_s"] for r in records if "elapsed_s" in r}
    return args.steps * args.batch / (timed[total] - timed[args.warmup])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backbone", default="timm:vit_large_patch16_224?pretrained=0")
    parser.add_argument("--classes", type=int, default=20_000)
    parser.add_argument("--views", type=int, default=2)
    parser.add_argument("--side", type=int, default=256, help="Side of the generated training JPEGs.")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    parser.add_argument("--image-size", type=int, default=None)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="bf16")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--grad-checkpointing", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("train_throughput.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ.setdefault("LOOKBENCH_CACHE", str(folder / "cache"))
        made = time.perf_counter()
        snapshot = training_snapshot(folder / "data", args.classes, args.views, args.side)
        print(f"generated {args.classes * args.views} training JPEGs in {time.perf_counter() - made:.0f}s", flush=True)
        model_rate = model_only(args, snapshot)
        print(f"model only: {model_rate:.1f} img/s", flush=True)
        e2e_rate = end_to_end(args, snapshot, folder)
        print(f"end to end: {e2e_rate:.1f} img/s", flush=True)
    record = {
        "backbone": args.backbone,
        "batch": args.batch,
        "classes": args.classes,
        "precision": args.precision,
        "steps": args.steps,
        "workers": args.workers,
        "model_only_img_s": model_rate,
        "end_to_end_img_s": e2e_rate,
        "ratio": e2e_rate / model_rate,
        "load": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    with results_file("train_throughput"):
        main()
