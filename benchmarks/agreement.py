"""Shared by precision_agreement.py and decode_agreement.py: evaluate one model two ways and compare the runs."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.embeddings.options import EmbedOptions
from lookbench.evaluation.runner import EvalOutput, EvalSettings, evaluate
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
    from lookbench.synth.default import default_snapshot as default_location

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
