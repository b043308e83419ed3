"""Choose a composition method by name (`--compose`) for a run's image model."""

from __future__ import annotations

from collections.abc import Sequence

from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError
from lookbench.evaluation.composed.arithmetic import AttributeArithmetic
from lookbench.evaluation.composed.encoders import ComposedQueryEncoder, ImageOnly, WeightedSum
from lookbench.models.encoder import TextTower
from lookbench.snapshot.composed import has_changes
from lookbench.snapshot.reader import Snapshot

METHODS: dict[str, str] = {
    "auto": "sum for a two-tower model, else arithmetic (image when no query carries structured changes)",
    "image": "the reference image alone (ignores the modification)",
    "text": "the modification text alone, through the model's text tower",
    "sum": "weighted sum of the normalised image and text embeddings (weight chosen on the validation split)",
    "arithmetic": "attribute arithmetic in the image space (strength chosen on the validation split)",
}


def text_tower(provider: EmbeddingProvider) -> TextTower | None:
    """The provider's text tower: its model's (open_clip, a `python:` model's `embed_texts`), or its own."""
    return provider.text_tower()


def resolve_method(name: str, provider: EmbeddingProvider, changes: bool = True) -> str:
    """The concrete method `name` means for this provider: `auto` is sum for a two-tower model, else arithmetic
    when the queries carry structured changes (`changes`), else image (arithmetic would move nothing)."""
    if name not in METHODS:
        raise LookBenchError(f"--compose: unknown method {name!r}; known: {', '.join(METHODS)}")
    if name == "auto":
        if text_tower(provider) is not None:
            return "sum"
        return "arithmetic" if changes else "image"
    if name in ("text", "sum"):
        _required_tower(name, provider)  # refused before a single image is embedded
    if name == "arithmetic" and not changes:
        raise LookBenchError(
            "--compose arithmetic moves each reference along its structured changes, and no composed query of this "
            "run has any (only text, as in FashionIQ and Fashion200K); use --compose image, or text or sum with a "
            "two-tower model"
        )
    return name


def run_method(name: str, provider: EmbeddingProvider, snapshot: Snapshot, composed: Sequence[str]) -> str:
    """The concrete method of a run whose composed subsets are `composed` (they decide whether arithmetic has
    changes)."""
    return resolve_method(name, provider, changes=has_changes(snapshot, composed) if composed else True)


def make_encoder(method: str, provider: EmbeddingProvider) -> ComposedQueryEncoder:
    """A fresh composed-query encoder of a concrete method (see `run_method`) for the run's image model."""
    if method == "image":
        return ImageOnly()
    if method == "arithmetic":
        return AttributeArithmetic()
    tower = _required_tower(method, provider)
    return WeightedSum(tower, provider.spec, weight=1.0 if method == "text" else None)


def _required_tower(method: str, provider: EmbeddingProvider) -> TextTower:
    tower = text_tower(provider)
    if tower is None:
        raise LookBenchError(
            f"--compose {method} needs a two-tower model with a text tower (e.g. open_clip:ARCH/WEIGHTS); "
            f"{provider.spec} embeds images only (try --compose arithmetic or image)"
        )
    return tower


def composed_model_name(name: str, method: str) -> str:
    """The name a run with composed subsets is filed under: the model plus its composition method."""
    return f"{name}+{method}"
