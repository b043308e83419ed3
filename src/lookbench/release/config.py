"""The release config: one YAML file naming the release, its sources and one section per stage."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from lookbench._util.configfile import StrictConfig, load_config_file
from lookbench.errors import ReleaseError
from lookbench.search.duplicates.crops import CropPairs
from lookbench.snapshot.schema import NOISE, SUBSETS

# --- sources -----------------------------------------------------------------------------------------------------


class _SourceBase(StrictConfig):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    license: str = "unspecified; see source terms"
    subsets: list[str] = ["real_studio_flat"]

    @field_validator("subsets")
    @classmethod
    def _known_subsets(cls, value: list[str]) -> list[str]:
        unknown = [s for s in value if s not in (*SUBSETS, NOISE)]
        if unknown or not value:
            raise ValueError(f"unknown subset(s) {unknown}; known: {', '.join((*SUBSETS, NOISE))}")
        return value


class ShopSource(_SourceBase):
    """A polite crawler of product pages on the configured hosts."""

    kind: Literal["shop"]
    hosts: list[str] = Field(min_length=1, description="allowed host[:port] names; everything else is refused")
    scheme: Literal["http", "https"] = "https"
    """Scheme used to find robots.txt-named or default `/sitemap.xml` sitemaps of each host."""
    sitemaps: list[str] = []
    pages: list[str] = []
    user_agent: str = "lookbench-builder/0.1 (+https://github.com/lookbench)"
    rate_limit_s: float = Field(1.0, ge=0, description="seconds between requests to one host")
    max_crawl_delay_s: float = Field(60.0, ge=0, description="a robots.txt Crawl-delay above this is capped (warned)")
    timeout_s: float = Field(30.0, gt=0, description="total time one request may take, body included")
    retries: int = Field(2, ge=0, description="retries of timeouts, connection errors, 408/425/429/5xx")
    backoff_s: float = Field(1.0, ge=0, description="first retry wait, doubling; Retry-After wins")
    max_pages: int = Field(10_000, ge=1)
    max_sitemaps: int = Field(100, ge=1, description="sitemap files read per crawl; more are reported, not read")
    max_sitemap_bytes: int = Field(50_000_000, ge=1, description="decompressed bytes of one sitemap file")
    max_page_bytes: int = Field(5_000_000, ge=1)
    max_image_bytes: int = Field(10_000_000, ge=1)
    max_images_per_product: int = Field(8, ge=1)
    incremental: bool = True

    @field_validator("hosts")
    @classmethod
    def _bare_hosts(cls, value: list[str]) -> list[str]:
        bad = [h for h in value if "/" in h or not h]
        if bad:
            raise ValueError(f"hosts are host[:port] names without scheme or path, got {bad}")
        return [h.lower() for h in value]


class CatalogSource(_SourceBase):
    """A team's own product images listed in a CSV/parquet manifest (or a folder holding manifest.csv)."""

    kind: Literal["catalog"]
    path: Path


class GeneratedSource(_SourceBase):
    """AI-generated images with their generation records (`records.jsonl` in the folder)."""

    kind: Literal["generated"]
    path: Path
    subsets: list[str] = ["aigen_studio"]


class SynthSource(_SourceBase):
    """An already generated LookBench-Synth snapshot folder."""

    kind: Literal["synth"]
    path: Path
    subsets: list[str] = []
    license: str = "LookBench-Synth terms"

    @field_validator("subsets")
    @classmethod
    def _known_subsets(cls, value: list[str]) -> list[str]:
        return _SourceBase._known_subsets(value) if value else value


SourceConfig = Annotated[ShopSource | CatalogSource | GeneratedSource | SynthSource, Field(discriminator="kind")]


# --- stage sections ----------------------------------------------------------------------------------------------


class DedupConfig(StrictConfig):
    """Duplicate detection: exact sha256, perceptual hash gated by colour, cropped copies, optionally embeddings."""

    phash_threshold: int = Field(
        24, ge=0, le=256, description="max Hamming distance of 256-bit pHashes (docs/release.md)"
    )
    colour_threshold: float = Field(
        0.01, ge=0, le=1, description="max share of thumbnail pixels whose colour differs (docs/release.md)"
    )
    crops: bool = Field(
        True, description="find cropped copies: window hashes, alignment, then the pHash and colour gates"
    )
    crop_phash_threshold: int = Field(
        16,
        ge=0,
        le=256,
        description="max Hamming distance of the 256-bit pHashes of a crop's overlap (docs/release.md)",
    )
    crop_pairs: CropPairs = Field(
        "all",
        description="window pairs that make a crop candidate: `all` (two crops of one photo too) or `full-frame` "
        "(a crop of an earlier image or the other way round; docs/release.md)",
    )
    source_priority: list[str] = Field(
        default_factory=list,
        description="of a duplicate group's images first seen at the same time, those of the sources listed first "
        "are kept (unlisted sources after, by sample id)",
    )
    embedding_model: str | None = None
    embedding_threshold: float = Field(0.97, gt=0, le=1)


class ApiConfig(StrictConfig):
    """An OpenAI-compatible chat-completions endpoint (vLLM, SGLang or a hosted API), called with the openai SDK."""

    base_url: str = Field(description="e.g. http://gpu-box:8000/v1")
    model: str
    api_key_env: str | None = Field(None, description="environment variable holding the API key, if any")
    timeout_s: float = Field(60.0, gt=0, description="total time one attempt may take, body included")
    retries: int = Field(4, ge=0, description="the SDK's max_retries: timeouts, connection errors, 408/409/429/5xx")
    concurrency: int = Field(4, ge=1)
    seed: int = Field(default=0, ge=0)
    max_tokens: int = Field(512, ge=1)
    max_side: int = Field(768, ge=32, description="images are downscaled to this longest side before sending")
    price_per_million_input: float = Field(0.0, ge=0)
    price_per_million_output: float = Field(0.0, ge=0)

    @property
    def endpoint(self) -> str:
        """The base URL without a trailing slash: part of every answer-cache key."""
        return self.base_url.rstrip("/")


class OwlConfig(StrictConfig):
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


class CropConfig(StrictConfig):
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


class ProbeConfig(StrictConfig):
    """Linear probes per attribute group on embeddings of a model spec, fitted on a labelled snapshot."""

    train: Path = Field(description="a labelled snapshot folder (e.g. an earlier release) to learn from")
    model: str = Field(description="embedding model spec (`features:colour-gradient` or any resolve_model spec)")
    ridge: float = Field(1.0, gt=0)


class AnnotateConfig(StrictConfig):
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


class AuditConfig(StrictConfig):
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
    seed: int = Field(default=0, ge=0)


class DistractorConfig(StrictConfig):
    """Keep `noise` candidates whose nearest benchmark item is neither a near-duplicate nor unrelated."""

    model: str
    band: tuple[float, float] = (0.25, 0.45)

    @model_validator(mode="after")
    def _ordered(self) -> DistractorConfig:
        if not -1 <= self.band[0] < self.band[1] <= 1:
            raise ValueError(f"distractors.band must be [low, high] with -1 <= low < high <= 1, got {self.band}")
        return self


class ComposeConfig(StrictConfig):
    """Composed queries from annotated gallery items: same-category pairs in a similarity band differing in 1-2
    visible attributes, texts from templates (optionally paraphrased), a judge's audit of a stratified sample."""

    model: str = Field(description="image model of the similarity band (a resolve_model spec)")
    band: tuple[float, float] = Field((0.5, 0.98), description="cosine similarity of reference and target")
    max_changes: int = Field(2, ge=1, le=2)
    per_reference: int = Field(2, ge=1, description="queries per reference item (its most similar targets)")
    paraphrase: ApiConfig | None = Field(None, description="an LLM rewording each template text")
    judge: ApiConfig | None = Field(None, description="the audit's judge (reference, target and text)")
    validation: float = Field(0.2, ge=0, lt=1, description="share of reference items whose queries tune methods")
    audit_per_stratum: int = Field(8, ge=1, description="judged queries per (changed group, number of changes)")
    attempts: int = Field(2, ge=1, description="asks per text before a template is kept / a verdict is invalid")
    seed: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> ComposeConfig:
        if not -1 <= self.band[0] < self.band[1] <= 1:
            raise ValueError(f"compose.band must be [low, high] with -1 <= low < high <= 1, got {self.band}")
        return self


class SplitConfig(StrictConfig):
    """Query/gallery assignment, and the `train` split: products first seen before the evaluation window."""

    seed: int = Field(default=0, ge=0)
    train_before: date | None = None
    """Products (all their images, in every subset) first seen before this date go to the `train` split and
    never to an evaluation split; None: no `train` split."""


class SourceSummary(StrictConfig):
    """What the manifest and the card say about a source."""

    name: str
    kind: str
    license: str


class PublishConfig(StrictConfig):
    """What the publish stage writes beside the splits; `config_sha256` identifies the whole release config."""

    version: str
    release_date: date
    title: str
    changelog: str
    sources: list[SourceSummary]
    config_sha256: str


# --- the release -------------------------------------------------------------------------------------------------


class ReleaseConfig(StrictConfig):
    """One release: built from the sources into `output/vYYYYMMDD`."""

    release_date: date
    output: Path
    work_dir: Path | None = None
    title: str = "LookBench"
    sources: list[SourceConfig] = Field(min_length=1)
    dedup: DedupConfig = Field(default_factory=lambda: DedupConfig.model_validate({}))
    split: SplitConfig = Field(default_factory=lambda: SplitConfig.model_validate({}))
    changelog: str = ""
    crop: CropConfig | None = None
    annotate: AnnotateConfig | None = None
    audit: AuditConfig | None = None
    distractors: DistractorConfig | None = None
    compose: ComposeConfig | None = None

    @field_validator("sources")
    @classmethod
    def _unique_names(cls, value: list[SourceConfig]) -> list[SourceConfig]:
        names = [s.name for s in value]
        if len(set(names)) != len(names):
            raise ValueError(f"source names must be unique, got {names}")
        return value

    @model_validator(mode="after")
    def _audit_needs_annotate(self) -> ReleaseConfig:
        if self.audit is not None and self.annotate is None:
            raise ValueError("an audit section needs an annotate section (the audit checks the annotator's labels)")
        return self

    @model_validator(mode="after")
    def _train_before_release(self) -> ReleaseConfig:
        cutoff = self.split.train_before
        if cutoff is not None and cutoff > self.release_date:
            raise ValueError(
                f"split.train_before ({cutoff}) is after release_date ({self.release_date}): the evaluation window "
                "ends at the release date"
            )
        return self

    @property
    def version(self) -> str:
        """The version folder name, `vYYYYMMDD`."""
        return f"v{self.release_date:%Y%m%d}"

    @property
    def work(self) -> Path:
        """The work folder of this release's stages."""
        return self.work_dir or self.output / "_work" / self.version

    @property
    def state_dir(self) -> Path:
        """Cross-release state (crawl records, answer caches, fingerprints), kept outside every version folder."""
        return self.output / "_state"

    def config_hash(self) -> str:
        """sha256 of the canonical JSON form of the whole config (recorded in MANIFEST.json)."""
        return self.fingerprint()

    def publish_section(self) -> PublishConfig:
        """The publish stage's settings."""
        return PublishConfig(
            version=self.version,
            release_date=self.release_date,
            title=self.title,
            changelog=self.changelog,
            sources=[SourceSummary(name=s.name, kind=s.kind, license=s.license) for s in self.sources],
            config_sha256=self.config_hash(),
        )


PATH_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("annotate",), "cache_dir"),
    (("annotate",), "batch_output"),
    (("annotate", "probe"), "train"),
    (("audit",), "human_labels"),
)
"""Stage settings holding paths, resolved relative to the config file like the others."""


def _resolve(base: Path, value: object) -> object:
    if isinstance(value, str) and not value.startswith(("http://", "https://", "hf://")):
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else base / path)
    return value


def load_config(path: Path | str) -> ReleaseConfig:
    """Read and validate a release config; relative paths are relative to the YAML file."""
    base = Path(path).resolve().parent

    def resolve_paths(data: dict[str, Any]) -> None:
        for key in ("output", "work_dir"):
            if key in data:
                data[key] = _resolve(base, data[key])
        for source in data.get("sources") or []:
            if isinstance(source, dict) and "path" in source:
                source["path"] = _resolve(base, source["path"])
        for section, key in PATH_KEYS:
            part = data.get(section[0])
            for name in section[1:]:
                part = part.get(name) if isinstance(part, dict) else None
            if isinstance(part, dict) and part.get(key) is not None:
                part[key] = _resolve(base, part[key])

    return load_config_file(path, ReleaseConfig, what="release config", error=ReleaseError, prepare=resolve_paths)
