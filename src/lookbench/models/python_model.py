"""`python:<module>:<factory>`: a user's own model, from a factory returning an ImageModel."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from PIL import Image
from pydantic import ValidationError

from lookbench.errors import EmbeddingError, LookBenchError, first_problem
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import EncoderBase, InputKind, TextTower
from lookbench.models.meta import ModelMeta
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec

if TYPE_CHECKING:
    from lookbench.models.backbones import Backbone


@runtime_checkable
class ImageModel(Protocol):
    """What a `python:` factory returns.

    `model_id` and `revision` name the model (change `revision` when the weights change: it keys the cache);
    `embed` receives RGB PIL images and returns one vector per image. An optional `describe()` adds metadata (the
    result's `model.details`); an optional `card` attribute (see CardedModel) is the model's fact sheet.
    """

    model_id: str
    revision: str

    def embed(self, images: list[Image.Image]) -> np.ndarray:
        """Return a (len(images), dim) float array."""
        ...


@runtime_checkable
class DescribedModel(Protocol):
    """A `python:` model that adds metadata to result files."""

    def describe(self) -> dict[str, Any]:
        """Whatever identifies the model besides its id and revision."""
        ...


@runtime_checkable
class CardedModel(Protocol):
    """An ImageModel that declares its fact sheet as a `card` attribute: a `ModelMeta`, or a dict of its fields
    (`release_date`, `training_cutoff`, `training_data`, `params`, `name`...), recorded as the result's
    `model.meta`; None reads as no card, like a missing attribute."""

    card: ModelMeta | dict[str, Any] | None


class PythonEncoder(EncoderBase):
    """Adapts an ImageModel to the Encoder protocol (decoded PIL images in)."""

    input_kind: InputKind = "image"
    preprocess: Preprocess | None = None

    def __init__(self, model: ImageModel, target: str, meta: ModelMeta | None = None) -> None:
        self.model = model
        self.target = target
        self.model_id = str(model.model_id)
        self.revision = str(model.revision)
        self.meta = meta

    def encode(self, batch: list[Image.Image]) -> np.ndarray:
        """Call the user's `embed`."""
        return np.asarray(self.model.embed(batch))

    def text_tower(self) -> TextTower | None:
        """The model itself when it also has `embed_texts` (a two-tower model)."""
        return self.model if isinstance(self.model, TextTower) else None

    def describe(self) -> dict[str, Any]:
        """The factory and whatever the model describes about itself."""
        extra = self.model.describe() if isinstance(self.model, DescribedModel) else {}
        return {"kind": "python", "factory": self.target, **dict(extra)}


def load(spec: ModelSpec, options: EmbedOptions) -> PythonEncoder:
    """Import `module:factory` (the current directory is importable) and call the factory."""
    argument = spec.argument
    module_name, sep, factory_name = argument.partition(":")
    if not sep or not module_name or not factory_name:
        raise LookBenchError(f"python model spec needs MODULE:FACTORY, got {argument!r}")
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise EmbeddingError(f"cannot import {module_name!r} for {spec} ({exc})") from exc
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise EmbeddingError(f"{module_name} has no callable {factory_name!r}")
    model = factory()
    if not isinstance(model, ImageModel):
        raise EmbeddingError(f"{spec} returned {type(model).__name__}, which lacks model_id, revision or embed()")
    return PythonEncoder(model, argument, _meta(model, spec))


def _meta(model: ImageModel, spec: ModelSpec) -> ModelMeta | None:
    """The model's `card` attribute as a fact sheet, checked field by field."""
    if isinstance(model, DescribedModel) and "card" in model.describe():
        raise EmbeddingError(f"{spec}: describe() returns a card; declare it as the model's `card` attribute instead")
    if not isinstance(model, CardedModel) or model.card is None:
        return None
    if isinstance(model.card, ModelMeta):
        return model.card
    if not isinstance(model.card, dict):
        raise EmbeddingError(
            f"{spec}: `card` must be a ModelMeta or a dict of its fields, got {type(model.card).__name__}"
        )
    try:
        return ModelMeta.model_validate(model.card)
    except ValidationError as exc:
        raise EmbeddingError(f"{spec}: card field {first_problem(exc)}") from exc


def backbone(spec: ModelSpec) -> Backbone:
    """Your own `nn.Module` from the factory, as a trainable backbone."""
    from lookbench.models.backbones import PythonBackbone

    return PythonBackbone(spec.argument)
