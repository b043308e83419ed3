"""Choose a composition method by name (`--compose`) for a run's image model."""

from __future__ import annotations

from lookbench.composed.arithmetic import AttributeArithmetic
from lookbench.composed.encoders import ComposedQueryEncoder, ImageOnly, TextEmbedder, WeightedSum
from lookbench.embeddings.provider import EmbeddingProvider
from lookbench.errors import LookBenchError

METHODS: dict[str, str] = {
    "auto": "sum for a two-tower model, else arithmetic",
    "image": "the reference image alone (ignores the modification)",
    "text": "the modification text alone, through the model's text tower",
    "sum": "weighted sum of the normalised image and text embeddings (weight chosen on the validation split)",
    "arithmetic": "attribute arithmetic in the image space (strength chosen on the validation split)",
}


def text_tower(provider: EmbeddingProvider) -> TextEmbedder | None:
    """The provider's text tower: its encoder's (open_clip), a `python:` model's `embed_texts`, or its own."""
    encoder = getattr(provider, "encoder", None)
    for candidate in (encoder, getattr(encoder, "model", None), provider):
        if candidate is not None and isinstance(candidate, TextEmbedder):
            return candidate
    return None


def resolve_method(name: str, provider: EmbeddingProvider) -> str:
    """The concrete method `name` means for this provider (`auto` picks sum or arithmetic)."""
    if name not in METHODS:
        raise LookBenchError(f"--compose: unknown method {name!r}; known: {', '.join(METHODS)}")
    if name == "auto":
        return "sum" if text_tower(provider) is not None else "arithmetic"
    return name


def make_encoder(name: str, provider: EmbeddingProvider) -> ComposedQueryEncoder:
    """A fresh composed-query encoder of method `name` for the run's image model."""
    method = resolve_method(name, provider)
    if method == "image":
        return ImageOnly()
    if method == "arithmetic":
        return AttributeArithmetic()
    tower = text_tower(provider)
    if tower is None:
        raise LookBenchError(
            f"--compose {method} needs a two-tower model with a text tower (e.g. open_clip:ARCH/WEIGHTS); "
            f"{provider.spec} embeds images only (try --compose arithmetic or image)"
        )
    return WeightedSum(tower, provider.spec, weight=1.0 if method == "text" else None)


def composed_model_name(name: str, method: str) -> str:
    """The name a run with composed subsets is filed under: the model plus its composition method."""
    return f"{name}+{method}"
