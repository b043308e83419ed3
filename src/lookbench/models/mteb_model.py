"""`mteb:NAME[@REVISION]`: any image model of MTEB's registry, loaded by its ModelMeta's loader and run through its
own `encode`; the ModelMeta's facts (release date, parameters, training datasets, licence) become the run's card.

Needs `pip install 'lookbench[mteb]'`; the library is imported only when an `mteb:` spec is resolved or listed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image
from pydantic import ValidationError

from lookbench.errors import LookBenchError, first_problem
from lookbench.models.embed_options import EmbedOptions
from lookbench.models.encoder import EncoderBase, InputKind
from lookbench.models.meta import UNKNOWN, ModelMeta
from lookbench.models.preprocess import Preprocess
from lookbench.models.spec import ModelSpec

NO_REVISION = "no_revision_available"
SPLIT = "test"
HF_SUBSET = "default"
REFERENCE = "https://arxiv.org/abs/2601.14706"
CITATION = r"""@article{lookbench2026,
  title = {LookBench: A Live and Holistic Open Benchmark for Fashion Image Retrieval},
  journal = {arXiv preprint arXiv:2601.14706},
  year = {2026},
}"""


class MtebModelError(LookBenchError):
    """An MTEB model that does not exist, does not embed images, or lacks a fact LookBench needs."""


def _mteb() -> Any:
    try:
        import mteb
    except ImportError as exc:
        raise MtebModelError("mteb: models need the mteb library: pip install 'lookbench[mteb]'") from exc
    return mteb


def model_meta(argument: str) -> Any:
    """The registry's ModelMeta of `NAME[@REVISION]` (never fetched from the Hub), checked to embed images."""
    name, _, revision = argument.partition("@")
    if not name:
        raise MtebModelError(f"mteb:{argument}: expected mteb:NAME[@REVISION]")
    try:
        meta = _mteb().get_model_meta(name, revision or None, fetch_from_hf=False)
    except KeyError as exc:
        raise MtebModelError(f"mteb:{argument}: {exc.args[0]}") from exc
    except ValueError as exc:
        raise MtebModelError(f"mteb:{argument}: field revision: {exc}") from exc
    if "image" not in meta.modalities:
        raise MtebModelError(
            f"mteb:{argument}: field modalities is {meta.modalities}; LookBench needs a model that embeds images"
        )
    if meta.release_date is None:
        raise MtebModelError(
            f"mteb:{argument}: field release_date of its ModelMeta is not set; LookBench needs it for the "
            "contamination window (register the model with a release_date)"
        )
    return meta


def card_facts(meta: Any) -> ModelMeta:
    """The fact sheet of an mteb `ModelMeta` (MTEB records no training cutoff: the release date stands in);
    MtebModelError names the field a registry entry gives in a form a card cannot hold."""
    datasets = meta.get_training_datasets()
    try:
        return ModelMeta(
            name=meta.name,
            release_date=UNKNOWN if meta.release_date is None else str(meta.release_date),
            params=meta.n_parameters,
            training_data=tuple(sorted(datasets)) if datasets else (),
            license=meta.license,
            open_weights=meta.open_weights,
            weights_source=f"MTEB model registry ({meta.reference})" if meta.reference else "MTEB model registry",
        )
    except ValidationError as exc:
        raise MtebModelError(f"mteb:{meta.name}: its ModelMeta's {first_problem(exc)}") from exc


def mteb_details(meta: Any) -> dict[str, Any]:
    """What MTEB records about a model besides its fact sheet."""
    return {
        "revision": meta.revision,
        "reference": meta.reference,
        "embedding_dim": meta.embed_dim,
        "modalities": list(meta.modalities),
        "framework": list(meta.framework),
    }


class MtebEncoder(EncoderBase):
    """Adapts a loaded MTEB model to the Encoder protocol: decoded RGB images in, its `encode` output back."""

    input_kind: InputKind = "image"
    preprocess: Preprocess | None = None

    def __init__(self, mteb_meta: Any, model: Any) -> None:
        self.mteb_meta = mteb_meta
        self.model = model
        self.model_id = f"mteb:{mteb_meta.name}"
        self.revision = str(mteb_meta.revision or NO_REVISION)
        self.meta = card_facts(mteb_meta)

    def encode(self, batch: list[Image.Image]) -> np.ndarray:
        """One `encode` call over a one-batch DataLoader of {"image": [PIL images]}, as MTEB's own tasks send."""
        from datasets import Dataset, Features
        from datasets import Image as ImageFeature
        from torch.utils.data import DataLoader

        dataset = Dataset.from_dict({"image": list(batch)}, features=Features({"image": ImageFeature()}))
        loader = DataLoader(
            dataset,  # type: ignore[arg-type]
            batch_size=len(batch),
            collate_fn=lambda rows: {"image": [row["image"].convert("RGB") for row in rows]},
        )
        vectors = self.model.encode(loader, task_metadata=encoding_metadata(), hf_split=SPLIT, hf_subset=HF_SUBSET)
        if hasattr(vectors, "detach"):
            vectors = vectors.detach().float().cpu().numpy()
        return np.asarray(vectors, dtype=np.float32)

    def describe(self) -> dict[str, Any]:
        """The MTEB name, revision and loader."""
        loader = getattr(self.mteb_meta.loader, "__name__", type(self.mteb_meta.loader).__name__)
        return {"kind": "mteb", "mteb_name": self.mteb_meta.name, "loader": loader, **mteb_details(self.mteb_meta)}


def encoding_metadata() -> Any:
    """The task metadata handed to an MTEB model's `encode` when lookbench embeds a snapshot's images with it."""
    from mteb.abstasks.task_metadata import TaskMetadata

    return TaskMetadata(
        name="LookBench",
        description="LookBench fashion image retrieval: images embedded by lookbench's own pipeline.",
        reference=REFERENCE,
        dataset={"path": "lookbench", "revision": "1"},
        type="Any2AnyRetrieval",
        category="i2i",
        eval_splits=[SPLIT],
        eval_langs=["eng-Latn"],
        main_score="ndcg_at_10",
        date=None,
        domains=["Web"],
        task_subtypes=["Object recognition"],
        license="not specified",
        annotations_creators="derived",
        dialect=[],
        modalities=["image"],
        sample_creation="found",
        bibtex_citation=CITATION,
    )


def load(spec: ModelSpec, options: EmbedOptions) -> MtebEncoder:
    """Load `NAME[@REVISION]` through MTEB's registry (its loader may download weights)."""
    argument = spec.argument
    meta = model_meta(argument)
    if meta.loader is None:
        raise MtebModelError(f"mteb:{argument}: field loader of its ModelMeta is not set (no implementation)")
    try:
        model = meta.load_model()
    except ImportError as exc:
        # MTEB checks a model's extras (every image model needs torchvision) before its loader runs
        lines = [line for line in str(exc).splitlines() if line.strip()]
        raise MtebModelError(f"mteb:{argument}: {' '.join(lines[:2]) or type(exc).__name__}") from exc
    return MtebEncoder(meta, model)


def image_model_metas(modality: str | None = "image") -> list[Any]:
    """Registered ModelMetas that embed `modality` (all with None), by name; metadata only, nothing downloaded."""
    metas = _mteb().get_model_metas(modalities=[modality] if modality else None)
    return sorted(metas, key=lambda m: str(m.name))
