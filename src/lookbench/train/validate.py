"""Evaluate the model being trained on a validation snapshot, through the same runner as `lookbench eval`."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

import torch

from lookbench.embeddings.model_provider import ModelEmbeddings
from lookbench.evaluation.headline import headline_text, score_headline
from lookbench.evaluation.runner import EvalSettings
from lookbench.models.backbones import EmbeddingModel
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.preprocess import Preprocess
from lookbench.models.torch_base import TorchEncoder
from lookbench.snapshot.reader import Snapshot
from lookbench.train.config import Validation


def validate(
    model: EmbeddingModel,
    preprocess: Preprocess,
    snapshot: Snapshot,
    cfg: Validation,
    step: int,
    run_dir: Path,
    name: str,
    device: torch.device,
) -> dict[str, Any]:
    """Embed and score the validation snapshot; writes `validation/step-N.json` (and `step-N__noise-none.json`
    when it has a noise pool) and returns the headline numbers."""
    was_training = model.training
    model.eval()
    # A unique revision: vectors of one step must never be served to another from a cache.
    encoder = TorchEncoder(model, preprocess, f"{name}@step{step}", uuid.uuid4().hex, str(device), {"kind": "trained"})
    target = run_dir / "validation" / f"step-{step:09d}.json"
    try:
        with tempfile.TemporaryDirectory(prefix=".validation-cache-", dir=run_dir) as cache:
            options = EmbedOptions(cache_dir=Path(cache), batch_size=cfg.batch_size, progress=True)
            provider = ModelEmbeddings(f"trained:{run_dir}@step{step}", encoder, options)
            settings = EvalSettings(subsets=cfg.subsets, resamples=cfg.resamples)
            metrics = score_headline(snapshot, provider, settings, target)
    finally:
        model.train(was_training)
    summary = headline_text(metrics)
    return {"step": step, "snapshot": snapshot.snapshot_id, "metrics": metrics, "summary": summary, "file": target.name}
