"""The model record of a result file: what produced the vectors (`EmbeddingProvider.describe`), typed."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lookbench.embeddings.facts import ModelFacts


class Composition(BaseModel):
    """How a run's composed queries were embedded: the method and, per composed subset, what it recorded."""

    model_config = ConfigDict(extra="forbid")

    method: str
    subsets: dict[str, dict[str, Any]]


class ModelRecord(BaseModel):
    """The model of one run: its spec and name, identity, vector size, how it embedded and its fact sheet."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    name: str
    """The display name (a composed run's names its method)."""
    kind: str | None = None
    model_id: str | None = None
    revision: str | None = None
    dim: int | None = None
    """The embedding dimension."""
    precision: str | None = None
    """The precision a torch model ran at; None: the model's own."""
    card: ModelFacts | None = None
    composition: Composition | None = None
    input_kind: str | None = None
    preprocess: dict[str, Any] | None = None
    storage_dtype: str | None = None
    jpeg_draft: bool | None = None
    decode: str | None = None
    batch_size: int | None = None
    workers: int | None = None
    cache: str | None = None
    skipped: dict[str, dict[str, str]] = Field(default_factory=dict)
    """`subset/split -> row -> error` of images left out as undecodable."""
    sharding: dict[str, Any] | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    """What the model's adapter says about itself (file, output, weights, architecture, device, factory...)."""

    @classmethod
    def legacy_fields(cls, model: dict[str, Any]) -> dict[str, Any]:
        """The record's fields from the flat `model` dict of a schema 1.0-1.2 result file, to validate: the keys
        named here keep their place (`embedding_dim` becomes `dim`), the card is read leniently, every other key
        moves to `details`."""
        data = dict(model)
        dim = data.pop("embedding_dim", None)
        known = {k: data.pop(k) for k in list(data) if k in cls.model_fields and k not in ("card", "details")}
        if known.get("dim") is None and dim is not None:
            known["dim"] = dim
        known["spec"] = str(known.get("spec") or known.get("name") or "unknown")
        known["name"] = str(known.get("name") or known["spec"])
        card = ModelFacts.lenient(data.pop("card", None))
        return {**known, "card": card, "details": data}
