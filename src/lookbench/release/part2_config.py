"""Release-config sections of the part-2 stages: crop, annotate, audit and distractor mining."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApiConfig(_Strict):
    """An OpenAI-compatible chat-completions endpoint (vLLM, SGLang or a hosted API)."""

    base_url: str = Field(description="e.g. http://gpu-box:8000/v1")
    model: str
    api_key_env: str | None = Field(None, description="environment variable holding the API key, if any")
    timeout_s: float = Field(60.0, gt=0)
    retries: int = Field(4, ge=0)
    backoff_s: float = Field(1.0, ge=0, description="first retry wait; doubles per retry")
    concurrency: int = Field(4, ge=1)
    seed: int = 0
    max_tokens: int = Field(512, ge=1)
    max_side: int = Field(768, ge=32, description="images are downscaled to this longest side before sending")
    price_per_million_input: float = Field(0.0, ge=0)
    price_per_million_output: float = Field(0.0, ge=0)


class OwlConfig(_Strict):
    """A transformers zero-shot detector (OWLv2, or OWL-ViT) queried with one text per taxonomy category."""

    model: str = Field(description="a local model folder or a hub id, e.g. google/owlv2-base-patch16-ensemble")
    revision: str | None = Field(None, description="hub revision (branch, tag or commit); ignored for a local folder")
    threshold: float = Field(0.1, ge=0, lt=1, description="boxes scoring at or below this are dropped")
    template: str = Field("a photo of a {category}", description="text query per category; must contain {category}")
    categories: list[str] | None = Field(None, description="taxonomy categories to query; default: all of them")
    max_boxes: int = Field(20, ge=1, description="at most this many boxes per photo, best first")
    nms_iou: float = Field(0.5, gt=0, le=1, description="a box overlapping a better one more than this is dropped")
    nms_across_categories: bool = Field(True, description="suppress overlapping boxes of different categories too")
    device: str = Field("auto", description="auto (cuda when available, else cpu), cpu, cuda, cuda:1, ...")

    @model_validator(mode="after")
    def _template_names_category(self) -> OwlConfig:
        if "{category}" not in self.template:
            raise ValueError("crop.owl.template must contain {category}")
        return self


class CropConfig(_Strict):
    """Street-look photos are cut into one crop per garment by a detector backend."""

    detector: Literal["truth", "vlm", "owl"] = "truth"
    api: ApiConfig | None = None
    owl: OwlConfig | None = None
    min_side: int = Field(16, ge=1, description="boxes narrower or shorter than this (pixels) are dropped")
    min_area_fraction: float = Field(0.002, ge=0, lt=1)

    @model_validator(mode="after")
    def _needs_api(self) -> CropConfig:
        if self.detector == "vlm" and self.api is None:
            raise ValueError("crop.detector vlm needs an api section")
        if self.detector == "owl" and self.owl is None:
            raise ValueError("crop.detector owl needs an owl section")
        return self


class ProbeConfig(_Strict):
    """Linear probes per attribute group on embeddings of a model spec, fitted on a labelled snapshot."""

    train: Path = Field(description="a labelled snapshot folder (e.g. an earlier release) to learn from")
    model: str = Field(description="embedding model spec (`features:colour-gradient` or a resolve_model spec)")
    ridge: float = Field(1.0, gt=0)


class AnnotateConfig(_Strict):
    """Replace source labels by annotator labels restricted to the taxonomy."""

    backend: Literal["openai", "probe"]
    api: ApiConfig | None = None
    probe: ProbeConfig | None = None
    attempts: int = Field(2, ge=1, description="asks per crop before an invalid answer is flagged")
    cache_dir: Path | None = Field(None, description="default: OUT/_state/annotation-cache")
    batch_output: Path | None = Field(None, description="`vllm run-batch` output to import instead of calling the API")

    @model_validator(mode="after")
    def _backend_settings(self) -> AnnotateConfig:
        if self.backend == "openai" and self.api is None:
            raise ValueError("annotate.backend openai needs an api section")
        if self.backend == "probe" and self.probe is None:
            raise ValueError("annotate.backend probe needs a probe section")
        return self


class AuditConfig(_Strict):
    """A judge model checks a stratified sample of annotated attributes, with canaries."""

    api: ApiConfig | None = Field(None, description="the judge's endpoint; required unless a Judge is passed in code")
    margin: float = Field(0.05, gt=0, lt=0.5, description="wanted half-width of the 95% interval of accuracy")
    expected_accuracy: float = Field(0.9, gt=0, lt=1)
    canary_fraction: float = Field(0.1, ge=0, lt=1, description="canaries per sampled crop")
    floor: float = Field(0.8, ge=0, le=1, description="attributes judged less accurate than this are flagged")
    min_judged: int = Field(5, ge=1, description="judgements an attribute needs before it can be flagged")
    exclude_below_floor: bool = False
    human_labels: Path | None = Field(None, description="CSV sample_id,attribute,verdict judged by people")
    bootstrap: int = Field(1000, ge=100)
    seed: int = 0


class DistractorConfig(_Strict):
    """Keep `noise` candidates whose nearest benchmark item is neither a near-duplicate nor unrelated."""

    model: str
    band: tuple[float, float] = (0.25, 0.45)

    @model_validator(mode="after")
    def _ordered(self) -> DistractorConfig:
        if not -1 <= self.band[0] < self.band[1] <= 1:
            raise ValueError(f"distractors.band must be [low, high] with -1 <= low < high <= 1, got {self.band}")
        return self
