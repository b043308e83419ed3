"""Export a trained embedding model as a folder `lookbench eval -m trained:DIR` runs (and optionally ONNX)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import torch

from lookbench._util.atomic import atomic_path, write_text_atomic
from lookbench.errors import TrainError
from lookbench.models.backbones import EmbeddingModel
from lookbench.models.card import card_for_spec, find_card
from lookbench.models.meta import UNKNOWN, ModelMeta
from lookbench.models.mix_record import RecordedMix
from lookbench.models.trained_model import MODEL_JSON, ONNX_FILE, ONNX_OUTPUT, WEIGHTS, TrainedModelInfo
from lookbench.train.config import TrainConfig
from lookbench.train.data import TrainingSet


def base_card(spec: str) -> ModelMeta | None:
    """The fact sheet of the pretrained backbone's shipped card, when there is one."""
    return find_card(spec) or card_for_spec(spec)


def model_id_of(name: str) -> str:
    """A card id from a run's folder name: lower case, every run of other characters one `-` (ids are slugs)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-.")
    return slug or "trained-model"


def model_card(name: str, cfg: TrainConfig, training: TrainingSet, params: int) -> ModelMeta:
    """The fact sheet: the training data (snapshots, their sources, the backbone's own data) and the training
    cutoff."""
    base = base_card(cfg.model.backbone)
    data = []
    for source in training.sources:
        data.append(source.snapshot)
        data.extend(source.sources)
    if base:
        data.extend(base.training_data)
    return ModelMeta(
        id=model_id_of(name),
        name=name,
        release_date=dt.date.today().isoformat(),
        training_cutoff=training.training_cutoff() or UNKNOWN,
        training_data=tuple(dict.fromkeys(data)),
        params=f"{params / 1e6:.1f}M",
        license=base.license if base is not None and base.license else UNKNOWN,
        open_weights=True,
        weights_source=f"lookbench train, fine-tuned from {cfg.model.backbone}",
    )


def _validated_on(cfg: TrainConfig, validation: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Which snapshot validated the run, and whether it was one the run is reported on (explicitly allowed)."""
    if cfg.data.validation is None:
        return None
    return {
        "location": cfg.data.validation.snapshot,
        "snapshot": validation[-1]["snapshot"] if validation else None,
        "evaluation_snapshot_allowed": cfg.data.validation.allow_evaluation_snapshot,
    }


def recorded_mix(cfg: TrainConfig) -> RecordedMix | None:
    """`export.pretrained_mix` with the backbone whose pretrained weights it mixes in."""
    mix = cfg.export.pretrained_mix
    return None if mix is None else RecordedMix(**mix.model_dump(), backbone=cfg.model.backbone)


def _state(model: EmbeddingModel) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}


def export_model(
    folder: Path,
    model: EmbeddingModel,
    name: str,
    cfg: TrainConfig,
    training: TrainingSet,
    steps: int,
    guard: dict[str, Any] | None,
    validation: list[dict[str, Any]],
) -> TrainedModelInfo:
    """Write `model.safetensors`, the backbone's extra files, `model.json` and a README card (weights first)."""
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / WEIGHTS) as tmp:
        save_file(_state(model), str(tmp), metadata={"format": "pt"})
    model.backbone.save_files(folder)
    params = sum(p.numel() for p in model.parameters())
    info = TrainedModelInfo(
        name=name,
        architecture=model.backbone.architecture,
        feature_dim=model.backbone.feature_dim,
        embedding_dim=cfg.model.embedding_dim,
        preprocess=model.backbone.preprocess,
        card=model_card(name, cfg, training, params),
        training={
            "steps": steps,
            "images": len(training),
            "items": training.num_classes,
            "training_cutoff": training.training_cutoff(),
            "sources": [vars(s) for s in training.sources],
            "guard": guard,
            "validated_on": _validated_on(cfg, validation),
            "recipe": cfg.model_dump(mode="json"),
        },
        validation=validation,
        pretrained_mix=recorded_mix(cfg),
    )
    write_text_atomic(folder / MODEL_JSON, info.model_dump_json(indent=2) + "\n")
    write_text_atomic(folder / "README.md", card_markdown(info))
    return info


def card_markdown(info: TrainedModelInfo) -> str:
    """A human-readable model card."""
    meta, training = info.card, info.training
    lines = [
        f"# {info.name}",
        "",
        f"Fine-tuned with `lookbench train` from `{training['recipe']['model']['backbone']}`; evaluate it with "
        f"`lookbench eval -m trained:<this folder>`.",
        "",
        f"- Architecture: {json.dumps(info.architecture)}, embedding {info.embedding_dim or info.feature_dim}-d",
        f"- Training data: {', '.join(meta.training_data)}",
        f"- Training images: {training['images']} of {training['items']} items, {training['steps']} steps",
        f"- Training cutoff (latest first_seen_at of the training data): {meta.training_cutoff}",
        f"- Parameters: {meta.params}; licence of the base weights: {meta.license}",
        f"- Preprocessing: {info.preprocess.model_dump_json()}",
    ]
    for source in training["sources"]:
        if source.get("dropped_categories"):
            lines.append(
                f"- Left out of {source['snapshot']} (every design excluded): {', '.join(source['dropped_categories'])}"
                "; the model never saw them in training"
            )
    mix = info.pretrained_mix
    if mix:
        lines.append(
            f"- Loaded mixed with the pretrained `{mix.backbone}` (robust fine-tuning): {mix.space} space, "
            f"fine-tuned share {mix.trained_share:g}"
        )
    guard = training.get("guard")
    if guard:
        lines.append(f"- Contamination guard: {guard.get('summary', '')}")
        for found in guard.get("evaluation_overlap", []):
            lines.append(f"- Overlap with {found['summary']}")
    validated = training.get("validated_on")
    if validated:
        allowed = " (an evaluation snapshot, explicitly allowed)" if validated["evaluation_snapshot_allowed"] else ""
        lines.append(f"- Validated on: {validated['snapshot'] or validated['location']}{allowed}")
    else:
        lines.append("- Validated on: nothing (data.validation: null)")
    for result in info.validation:
        lines.append(f"- Validation at step {result['step']} on {result['snapshot']}: {result['summary']}")
    return "\n".join(lines) + "\n"


def export_onnx(folder: Path, model: EmbeddingModel) -> Path:
    """`model.onnx` (input `pixels` NCHW, output `embedding`, dynamic batch), checked against PyTorch."""
    import numpy as np

    crop = model.backbone.preprocess.crop
    example = torch.randn(2, 3, crop, crop, generator=torch.Generator().manual_seed(0))
    model = model.eval().float().cpu()
    target = folder / ONNX_FILE
    with atomic_path(target) as tmp:
        size = sum(p.numel() * p.element_size() for p in model.parameters())
        torch.onnx.export(
            model,
            (example,),
            str(tmp),
            input_names=["pixels"],
            output_names=[ONNX_OUTPUT],
            dynamic_shapes={"images": {0: torch.export.Dim("batch", min=1, max=65536)}},
            opset_version=18,
            dynamo=True,
            external_data=size > 1_800_000_000,  # protobuf's 2 GB limit
        )
        import onnxruntime as ort

        session = ort.InferenceSession(str(tmp), providers=["CPUExecutionProvider"])
        (got,) = session.run([ONNX_OUTPUT], {"pixels": example.numpy()})
        with torch.no_grad():
            expected = model(example).numpy()
        gap = float(np.abs(got - expected).max())
        if gap > 1e-3:
            raise TrainError(f"ONNX export differs from PyTorch by {gap:.2e}; keep the safetensors model")
    return target
