"""The release config: a YAML file naming the release date, sources, dedup settings and output folder."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lookbench.errors import BuildError
from lookbench.release.part2_config import AnnotateConfig, AuditConfig, CropConfig, DistractorConfig
from lookbench.snapshot.schema import NOISE, SUBSETS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SourceBase(_Strict):
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
    rate_limit_s: float = Field(1.0, ge=0)
    timeout_s: float = Field(10.0, gt=0)
    max_pages: int = Field(10_000, ge=1)
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


class DedupConfig(_Strict):
    """Duplicate detection: exact sha256 always, perceptual hash always, an embedding tier optionally."""

    phash_threshold: int = Field(
        24, ge=0, le=256, description="max Hamming distance of 256-bit pHashes (docs/build.md)"
    )
    embedding_model: str | None = None
    embedding_threshold: float = Field(0.97, gt=0, le=1)


class SplitConfig(_Strict):
    """Query/gallery assignment."""

    seed: int = 0


class ReleaseConfig(_Strict):
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
        """Cross-release state (e.g. crawl lastmod records), kept outside every version folder."""
        return self.output / "_state"

    def config_hash(self) -> str:
        """sha256 of the canonical JSON form of the config."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


PATH_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("annotate",), "cache_dir"),
    (("annotate",), "batch_output"),
    (("annotate", "probe"), "train"),
    (("audit",), "human_labels"),
)
"""Part-2 settings holding paths, resolved relative to the config file like the others."""


def _resolve(base: Path, value: object) -> object:
    if isinstance(value, str) and not value.startswith(("http://", "https://", "hf://")):
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else base / path)
    return value


def load_config(path: Path | str) -> ReleaseConfig:
    """Read and validate a release config; relative paths are relative to the YAML file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BuildError(f"{path}: cannot read release config ({exc})") from exc
    if not isinstance(data, dict):
        raise BuildError(f"{path}: a release config must be a mapping")
    base = path.resolve().parent
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
    try:
        return ReleaseConfig.model_validate(data)
    except ValidationError as exc:
        raise BuildError(f"{path}: invalid release config:\n{exc}") from exc
