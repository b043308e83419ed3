"""Can where an image came from be told from its pixels? Separability of distractors from gallery images.

Trains a logistic regression (numpy; L2 penalty 1/(2C), features standardised within each training fold) to tell
noise rows from gallery rows of a snapshot, scores it by stratified k-fold cross-validation (out-of-fold AUC), and
gives a bootstrap interval (resampling the out-of-fold scores within each class). Two probes:

- image statistics, no model: border colour, brightness, saturation and spread, centre brightness and saturation,
  global brightness, saturation and spread, edge density, a global colour histogram, width, height, aspect, file
  size, bytes per pixel and the JPEG quantisation tables; with each statistic's own AUC, most separating first;
- with `--model SPEC`: a linear probe on the model's embeddings, through the project's own embedding pipeline
  (`resolve_model`, cached like `lookbench eval`).

`--planted` repeats the image-statistics probe on a copy whose distractors carry a 6-pixel coloured frame (a planted
shortcut): the probe must find it (AUC near 1), or a low AUC would say nothing. The C grid is reported whole and the
headline is its maximum (the most separating setting, a pessimistic figure for a benchmark that wants none).

    python benchmarks/synth_separability.py [--snapshot DIR] [--model efficientnet-lite0] [--planted] [--out F.json]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from lookbench.models.registry import resolve_model
from lookbench.snapshot.reader import Snapshot, open_snapshot
from lookbench.snapshot.schema import NOISE
from lookbench.synth.default import default_snapshot

C_GRID = (0.01, 0.1, 1.0)
HIST_BINS = 8
EDGE_STEP = 24.0
FRAME = 6


@dataclass(frozen=True)
class Probe:
    """One probe's cross-validated AUC, its bootstrap interval and the AUC at every C."""

    auc: float
    ci: tuple[float, float]
    by_c: dict[float, float]


def statistic_names() -> list[str]:
    """Names of the image statistics, in feature order."""
    names = ["border_r", "border_g", "border_b", "border_brightness", "border_saturation", "border_spread"]
    names += ["centre_brightness", "centre_saturation", "brightness", "saturation", "spread", "edge_density"]
    names += [f"hist_{c}{k}" for c in "rgb" for k in range(HIST_BINS)]
    return names + ["width", "height", "aspect", "file_size", "bytes_per_pixel", "jpeg_q_luma", "jpeg_q_chroma"]


def image_statistics(data: bytes) -> np.ndarray:
    """The model-free statistics of one JPEG (see `statistic_names`)."""
    image = Image.open(io.BytesIO(data))
    tables = getattr(image, "quantization", None) or {}
    width, height = image.size
    rgb = image.convert("RGB")
    small = np.asarray(rgb.resize((96, 96), Image.Resampling.BILINEAR), dtype=np.float32)
    ring = np.concatenate(
        [small[:6].reshape(-1, 3), small[-6:].reshape(-1, 3), small[:, :6].reshape(-1, 3), small[:, -6:].reshape(-1, 3)]
    )
    centre = small[24:72, 24:72].reshape(-1, 3)
    flat = small.reshape(-1, 3)
    grey = flat.mean(axis=1).reshape(96, 96)
    edges = (np.abs(np.diff(grey, axis=0))[:, :-1] + np.abs(np.diff(grey, axis=1))[:-1]) > EDGE_STEP

    def sat(pixels: np.ndarray) -> float:
        return float((pixels.max(axis=1) - pixels.min(axis=1)).mean())

    hist = [np.histogram(flat[:, c], bins=HIST_BINS, range=(0, 256))[0] / len(flat) for c in range(3)]
    values = [*ring.mean(axis=0), ring.mean(), sat(ring), ring.mean(axis=1).std()]
    values += [centre.mean(), sat(centre), flat.mean(), sat(flat), flat.mean(axis=1).std(), edges.mean()]
    values += list(np.concatenate(hist))
    luma, chroma = float(sum(tables.get(0, [0]))), float(sum(tables.get(1, [0])))
    values += [width, height, width / height, len(data), len(data) / (width * height), luma, chroma]
    return np.asarray(values, dtype=np.float64)


def planted(data: bytes) -> bytes:
    """The same JPEG with a coloured frame painted round it (the planted shortcut)."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    ImageDraw.Draw(image).rectangle([0, 0, image.width - 1, image.height - 1], outline=(230, 40, 200), width=FRAME)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=90)
    return out.getvalue()


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney, ties counted half)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores), dtype=np.float64)
    sorted_scores = scores[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_scores)) + 1]
    ends = np.r_[starts[1:], len(scores)]
    for s, e in zip(starts, ends, strict=True):
        ranks[order[s:e]] = (s + e + 1) / 2.0
    n_pos = int(positive.sum())
    n_neg = len(scores) - n_pos
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def fit_logistic(x: np.ndarray, y: np.ndarray, c: float, iterations: int = 25) -> np.ndarray:
    """Weights (bias last) of an L2-penalised logistic regression by Newton's method: loss sum + |w|^2 / (2C)."""
    design = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], 1.0 / c)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -30, 30)))
        gradient = design.T @ (p - y) + penalty * w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def out_of_fold(x: np.ndarray, y: np.ndarray, c: float, folds: int, seed: int) -> np.ndarray:
    """Out-of-fold decision values of stratified k-fold cross-validation."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), dtype=int)
    for label in (0, 1):
        members = rng.permutation(np.flatnonzero(y == label))
        fold[members] = np.arange(len(members)) % folds
    scores = np.empty(len(y))
    for k in range(folds):
        train, test = fold != k, fold == k
        mean, std = x[train].mean(axis=0), x[train].std(axis=0) + 1e-9
        w = fit_logistic((x[train] - mean) / std, y[train], c)
        scores[test] = ((x[test] - mean) / std) @ w[:-1] + w[-1]
    return scores


def bootstrap_ci(scores: np.ndarray, y: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """95 % percentile interval of the AUC, resampling rows within each class."""
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    values = []
    for _ in range(resamples):
        rows = np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))])
        values.append(auc(scores[rows], y[rows] == 1))
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def probe(x: np.ndarray, y: np.ndarray, folds: int, resamples: int, seed: int) -> Probe:
    """Cross-validated AUC over the C grid; the headline and its interval at the most separating C."""
    by_c = {c: out_of_fold(x, y, c, folds, seed) for c in C_GRID}
    aucs = {c: auc(s, y == 1) for c, s in by_c.items()}
    best = max(aucs, key=lambda c: aucs[c])
    return Probe(aucs[best], bootstrap_ci(by_c[best], y, resamples, seed), aucs)


def gallery_splits(snapshot: Snapshot) -> list[tuple[str, str]]:
    """Every subset's gallery split, then the noise pool."""
    return [(s, "gallery") for s in snapshot.subsets if snapshot.has_split(s, "gallery")] + [(NOISE, "gallery")]


def image_bytes(snapshot: Snapshot, subset: str, split: str) -> list[bytes]:
    """The JPEG bytes of a split, in row order."""
    out: list[bytes] = []
    for path in snapshot.files(subset, split):
        out += [cell["bytes"] for cell in pq.read_table(path, columns=["image"]).column("image").to_pylist()]
    return out


def report(name: str, result: Probe) -> dict[str, object]:
    """A probe's lines on the terminal and its JSON record."""
    grid = ", ".join(f"C={c:g}: {a:.3f}" for c, a in result.by_c.items())
    print(f"{name}: AUC {result.auc:.3f} [{result.ci[0]:.3f}, {result.ci[1]:.3f}]  ({grid})")
    return {"auc": result.auc, "ci": list(result.ci), "by_c": {str(c): a for c, a in result.by_c.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", type=Path, default=None, help="default: the embedded Synth default")
    parser.add_argument("--model", default=None, help="also probe this model's embeddings (e.g. efficientnet-lite0)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--planted", action="store_true", help="also probe a copy with a frame painted on noise")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args()
    snapshot = open_snapshot(args.snapshot or default_snapshot())
    print(f"snapshot {snapshot.name} ({snapshot.root}); load average {os.getloadavg()}")
    started = time.process_time()
    splits = gallery_splits(snapshot)
    data = {split: image_bytes(snapshot, *split) for split in splits}
    y = np.concatenate([np.full(len(data[s]), 1.0 if s[0] == NOISE else 0.0) for s in splits])
    print(f"{int((y == 0).sum())} gallery and {int(y.sum())} noise images")
    features = np.stack([image_statistics(d) for s in splits for d in data[s]])
    names = statistic_names()
    result: dict[str, object] = {"snapshot": snapshot.name, "gallery": int((y == 0).sum()), "noise": int(y.sum())}
    stats = probe(features, y, args.folds, args.resamples, args.seed)
    single = {n: auc(features[:, k], y == 1) for k, n in enumerate(names)}
    top = sorted(single, key=lambda n: -abs(single[n] - 0.5))[:8]
    result["image_statistics"] = report("image statistics", stats) | {"top_statistics": {n: single[n] for n in top}}
    print("  most separating alone: " + ", ".join(f"{n} {single[n]:.3f}" for n in top))
    if args.planted:
        marked = np.stack([image_statistics(planted(d)) if s[0] == NOISE else image_statistics(d)
                           for s in splits for d in data[s]])  # fmt: skip
        result["planted_frame"] = report("image statistics, planted frame on noise", probe(marked, y, args.folds,
                                         args.resamples, args.seed))  # fmt: skip
    if args.model:
        provider = resolve_model(args.model)
        vectors = np.concatenate([provider.embed_split(snapshot, *s) for s in splits]).astype(np.float64)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
        result["embedding_probe"] = {"model": args.model} | report(
            f"{args.model} embeddings", probe(vectors, y, args.folds, args.resamples, args.seed)
        )
    result["cpu_s"] = time.process_time() - started
    result["load_average"] = list(os.getloadavg())
    print(f"CPU {result['cpu_s']:.0f} s (this process); load average {os.getloadavg()}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
