"""`trained:<folder>[?runtime=torch|onnx]`: a model folder written by `lookbench train`.

The folder holds `model.json` (architecture, preprocessing, model card, recipe, validation results),
`model.safetensors` (backbone + embedding head) and, when exported, `model.onnx`. `runtime=torch` (default) rebuilds
the network and loads the weights; `runtime=onnx` runs the ONNX file through onnxruntime, without torch.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lookbench.embeddings.encoder import Encoder
from lookbench.embeddings.facts import ModelFacts
from lookbench.embeddings.mapper import Preprocess
from lookbench.embeddings.options import EmbedOptions
from lookbench.errors import EmbeddingError, LookBenchError, TrainError, first_problem
from lookbench.hashing import file_sha256
from lookbench.models.options import split_options
from lookbench.models.spec import ModelSpec

if TYPE_CHECKING:
    from lookbench.models.backbones import EmbeddingModel

MODEL_JSON = "model.json"
WEIGHTS = "model.safetensors"
ONNX_FILE = "model.onnx"
ONNX_OUTPUT = "embedding"
OPTIONS = {"runtime"}


class TrainedModelInfo(BaseModel):
    """`model.json` of an exported model."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[1] = 1
    name: str
    architecture: dict[str, Any]
    feature_dim: int
    embedding_dim: int | None
    preprocess: Preprocess
    card: ModelFacts
    """The model's fact sheet, which the contamination flags read."""
    training: dict[str, Any]
    """Training data, training cutoff, recipe (the whole config), steps, guard summary."""
    validation: list[dict[str, Any]] = []


def read_model_info(folder: Path) -> TrainedModelInfo:
    """Read and validate `folder/model.json`; errors name the file and field."""
    path = folder / MODEL_JSON
    if not folder.is_dir():
        raise EmbeddingError(f"trained model folder not found: {folder}")
    if not path.is_file():
        raise EmbeddingError(f"{folder} is not an exported model: no {MODEL_JSON} (did `lookbench train` finish?)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbeddingError(f"{path}: not readable JSON ({exc})") from exc
    try:
        return TrainedModelInfo.model_validate(data)
    except ValidationError as exc:
        raise EmbeddingError(f"{path}: field {first_problem(exc)}") from exc


def load(spec: ModelSpec, options: EmbedOptions) -> Encoder:
    """The encoder of an exported model folder, carrying the folder's model card."""
    argument = spec.argument
    folder_text, opts = split_options(argument, OPTIONS)
    folder = Path(folder_text).expanduser()
    info = read_model_info(folder)
    runtime = opts.get("runtime", "torch")
    extra = {"kind": "trained", "folder": str(folder), "runtime": runtime}
    if runtime == "onnx":
        from lookbench.models.onnx_model import OnnxEncoder

        path = folder / ONNX_FILE
        if not path.is_file():
            raise EmbeddingError(f"{folder}: no {ONNX_FILE}; export one with `export: {{onnx: true}}` in the config")
        onnx_encoder = OnnxEncoder(path, info.preprocess, output=ONNX_OUTPUT, model_id=info.name, extra=extra)
        onnx_encoder.card = info.card
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
    from lookbench.models.torch_base import TorchEncoder
    from lookbench.optional import pick_device, require

    torch = require("torch", "train")
    device = pick_device(torch)
    model = load_embedding_model(folder, info).to(device).eval()
    revision = file_sha256(weights)[:16]
    encoder = TorchEncoder(model, info.preprocess, info.name, revision, device, extra, options.precision)
    encoder.card = info.card
    return encoder


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
