"""`trained:<folder>[?runtime=torch|onnx]`: a model folder written by `lookbench train`.

The folder holds `model.json` (architecture, preprocessing, model card, recipe, validation results),
`model.safetensors` (backbone + embedding head) and, when exported, `model.onnx`. `runtime=torch` (default) rebuilds
the network and loads the weights; `runtime=onnx` runs the ONNX file through onnxruntime, without torch.

A folder whose `model.json` records `pretrained_mix` is loaded mixed with its pretrained backbone (robust
fine-tuning, `lookbench.models.pretrained_mix`); `?trained_share=A` (and `&mix=outputs|weights`) overrides the
recorded mix for a sweep, and the model's name then says so.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench._util.hashing import file_sha256
from lookbench._util.jsontext import loads
from lookbench.errors import EmbeddingError, LookBenchError, TrainError, first_problem
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import Encoder
from lookbench.models.meta import ModelMeta
from lookbench.models.mix_record import PretrainedFactory, RecordedMix
from lookbench.models.options import split_options
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec

if TYPE_CHECKING:
    from lookbench.models.backbones import EmbeddingModel

MODEL_JSON = "model.json"
WEIGHTS = "model.safetensors"
ONNX_FILE = "model.onnx"
ONNX_OUTPUT = "embedding"
OPTIONS = {"runtime", "trained_share", "mix"}


class TrainedModelInfo(BaseModel):
    """`model.json` of an exported model."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    name: str
    architecture: dict[str, Any]
    feature_dim: int
    embedding_dim: int | None
    preprocess: Preprocess
    card: ModelMeta
    """The model's fact sheet, which the contamination flags read."""
    training: dict[str, Any]
    """Training data, training cutoff, recipe (the whole config), steps, guard summary."""
    validation: list[dict[str, Any]] = []
    pretrained_mix: RecordedMix | None = None
    """Applied when the folder is loaded; None: the fine-tuned model alone."""


def read_model_info(folder: Path) -> TrainedModelInfo:
    """Read and validate `folder/model.json`; errors name the file and field."""
    path = folder / MODEL_JSON
    if not folder.is_dir():
        raise EmbeddingError(f"trained model folder not found: {folder}")
    if not path.is_file():
        raise EmbeddingError(f"{folder} is not an exported model: no {MODEL_JSON} (did `lookbench train` finish?)")
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbeddingError(f"{path}: not readable JSON ({exc})") from exc
    try:
        return TrainedModelInfo.model_validate(data)
    except ValidationError as exc:
        raise EmbeddingError(f"{path}: field {first_problem(exc)}") from exc


def load(spec: ModelSpec, options: EmbedOptions, pretrained: PretrainedFactory) -> Encoder:
    """The encoder of an exported model folder with its model card; `pretrained` builds a mix's backbone."""
    argument = spec.argument
    folder_text, opts = split_options(argument, OPTIONS)
    folder = Path(folder_text).expanduser()
    info = read_model_info(folder)
    runtime = opts.get("runtime", "torch")
    mix = effective(chosen_mix(spec, info, opts))
    name = info.name if mix == effective(info.pretrained_mix) else mixed_name(info.name, mix)
    extra: dict[str, Any] = {"kind": "trained", "folder": str(folder), "runtime": runtime}
    if mix is not None:
        extra["pretrained_mix"] = mix.model_dump()
    if runtime == "onnx":
        if mix is not None:
            raise EmbeddingError(f"{spec}: a pretrained mix runs with runtime=torch only (model.onnx is unmixed)")
        from lookbench.models.onnx_model import OnnxEncoder

        path = folder / ONNX_FILE
        if not path.is_file():
            raise EmbeddingError(f"{folder}: no {ONNX_FILE}; export one with `export: {{onnx: true}}` in the config")
        onnx_encoder = OnnxEncoder(path, info.preprocess, output=ONNX_OUTPUT, model_id=name, extra=extra)
        onnx_encoder.meta = info.card
        return onnx_encoder
    if runtime != "torch":
        raise LookBenchError(f"{spec}: runtime must be torch or onnx, got {runtime!r}")
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise EmbeddingError(f"{folder}: {WEIGHTS} is missing")
    missing = [name for name in ("torch", "safetensors") if importlib.util.find_spec(name) is None]
    if missing:
        hint = " or use ?runtime=onnx" if (folder / ONNX_FILE).is_file() else ""
        raise EmbeddingError(f"{spec} needs torch: pip install 'lookbench[train]'{hint} (no {', '.join(missing)})")
    from lookbench._util.optional import pick_device, require
    from lookbench.models.torch_base import TorchEncoder

    torch = require("torch", "train")
    device = pick_device(torch)
    model = load_embedding_model(folder, info)
    if mix is not None:
        from lookbench.models.pretrained_mix import mixed_model

        network = mixed_model(model, mix, pretrained)
    else:
        network = model
    # the revision keys the embedding cache: a mix changes every vector of the same weights file
    revision = file_sha256(weights)[:16] + ("" if mix is None else f"-{mix.space}-{mix.trained_share:g}")
    encoder = TorchEncoder(network.to(device).eval(), info.preprocess, name, revision, device, extra, options.precision)
    encoder.meta = info.card
    return encoder


def chosen_mix(spec: ModelSpec, info: TrainedModelInfo, opts: dict[str, str]) -> RecordedMix | None:
    """The recorded mix, or the one `?trained_share=A[&mix=SPACE]` asks for instead."""
    if "trained_share" not in opts:
        if "mix" in opts:
            raise LookBenchError(f"{spec}: mix= needs trained_share= beside it")
        return info.pretrained_mix
    try:
        share = float(opts["trained_share"])
    except ValueError:
        raise LookBenchError(
            f"{spec}: trained_share must be a number in [0, 1], got {opts['trained_share']!r}"
        ) from None
    space = opts.get("mix", info.pretrained_mix.space if info.pretrained_mix else "outputs")
    backbone = str(info.training.get("recipe", {}).get("model", {}).get("backbone", ""))
    try:
        return RecordedMix(space=space, trained_share=share, backbone=backbone)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise LookBenchError(f"{spec}: {first_problem(exc)}") from exc


def effective(mix: RecordedMix | None) -> RecordedMix | None:
    """None where the mix is the fine-tuned model alone (no mix, or share 1)."""
    return None if mix is None or mix.trained_share == 1 else mix


def mixed_name(name: str, mix: RecordedMix | None) -> str:
    """The model's name under a mix other than the recorded one (results of a sweep stay apart)."""
    return f"{name}-fine-tuned" if mix is None else f"{name}-{mix.space}-{mix.trained_share:g}"


def load_embedding_model(folder: Path, info: TrainedModelInfo) -> EmbeddingModel:
    """Rebuild the exported network and load its weights."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from lookbench.models.backbones import EmbeddingHead, EmbeddingModel, rebuild_backbone

    backbone = rebuild_backbone(info.architecture, folder, info.preprocess)
    model = EmbeddingModel(backbone, EmbeddingHead(info.feature_dim, info.embedding_dim))
    path = folder / WEIGHTS
    try:
        weights = load_file(str(path))
    except (SafetensorError, OSError) as exc:
        raise TrainError(f"{path}: not a readable safetensors file ({exc}); export the model again") from exc
    try:
        model.load_state_dict(weights)
    except RuntimeError as exc:
        problems = [line.strip() for line in str(exc).splitlines()[1:] if line.strip()] or [str(exc)]
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        raise TrainError(f"{path}: does not fit the architecture in {MODEL_JSON} ({problems[0]}{more})") from exc
    backbone.preprocess = info.preprocess
    return model
