"""`lookbench scaling`: train over a grid (training-set fractions x backbones), evaluate each cell with intervals.

Each cell is an ordinary training run in `OUT/cells/<cell>/` (so an interrupted study resumes inside the cell it
was training) whose exported model is evaluated like `lookbench eval -m trained:...` into `OUT/results/<cell>.json`.
A cell whose result file exists is not run again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from lookbench._util.atomic import write_text_atomic
from lookbench._util.configfile import StrictConfig, load_config_file
from lookbench._util.hashing import parts_sha256
from lookbench._util.jsontext import loads
from lookbench.errors import TrainError
from lookbench.results.scaling_schema import CellResult, parse_cell_results
from lookbench.snapshot.named import DEFAULT_SNAPSHOT
from lookbench.train.config import TrainConfig, load_config, parse_config


class Grid(StrictConfig):
    """The cells: every fraction of the training items for every backbone."""

    fractions: list[float] = Field(min_length=1)
    backbones: list[str] | None = None
    """Default: the training config's backbone."""
    steps: Literal["proportional", "fixed"] = "proportional"
    """proportional: a cell trains `fraction` x the config's steps (same passes over its data); fixed: all alike."""
    min_steps: int = Field(default=20, ge=1)
    frozen: bool = True
    """Also evaluate each backbone as it is before training (a reference line in the plot)."""

    @field_validator("fractions")
    @classmethod
    def _in_range(cls, value: list[float]) -> list[float]:
        bad = [f for f in value if not 0 < f <= 1]
        if bad:
            raise ValueError(f"fractions must lie in (0, 1], got {bad}")
        return sorted(set(value))


class Evaluation(StrictConfig):
    """Where each cell is scored."""

    snapshot: str = DEFAULT_SNAPSHOT
    subsets: list[str] | None = None
    resamples: int = Field(default=1000, ge=0)
    batch_size: int = Field(default=64, ge=1)


class ScalingConfig(StrictConfig):
    """A scaling study: a base training config, overrides, the grid and the evaluation."""

    train: Path
    """The base training config (relative paths: to the working directory)."""
    set: list[str] = []
    grid: Grid
    evaluate: Evaluation = Evaluation()


def load_scaling(path: Path) -> tuple[ScalingConfig, TrainConfig]:
    """The study config and its validated base training config."""
    study = load_config_file(path, ScalingConfig, what="scaling config", error=TrainError)
    return study, load_config(study.train, study.set)


@dataclass
class Cell:
    """One grid point: a backbone trained on a fraction of the training items (fraction 0: not trained)."""

    backbone: str
    fraction: float

    @property
    def name(self) -> str:
        """A folder-safe name, e.g. `efficientnet-lite0__f0.25`."""
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", self.backbone).strip("_")
        return f"{slug}__frozen" if self.fraction == 0 else f"{slug}__f{self.fraction:g}"


def cell_fingerprint(study: ScalingConfig, cell: Cell, config: TrainConfig | None) -> str:
    """What a kept cell must have been made with: its training config (or frozen backbone) and the evaluation."""
    made = config.fingerprint() if config is not None else f"frozen:{cell.backbone}"
    evaluation = study.evaluate.model_dump_json()
    return parts_sha256(made, evaluation)


def cells(study: ScalingConfig, base: TrainConfig) -> list[Cell]:
    """Frozen references first, then every (backbone, fraction), smallest fraction first."""
    backbones = study.grid.backbones or [base.model.backbone]
    out = [Cell(b, 0.0) for b in backbones] if study.grid.frozen else []
    return out + [Cell(b, f) for b in backbones for f in study.grid.fractions]


def cell_config(study: ScalingConfig, base: TrainConfig, cell: Cell) -> TrainConfig:
    """The base config with the cell's backbone, fraction and (proportional) steps."""
    data = base.model_dump(mode="json")
    data["model"]["backbone"] = cell.backbone
    for source in data["data"]["train"]:
        source["fraction"] = source["fraction"] * cell.fraction
    schedule = data["schedule"]
    if study.grid.steps == "proportional" and schedule.get("steps") is not None:
        floor = min(study.grid.min_steps, schedule["steps"])
        schedule["steps"] = max(floor, math.ceil(schedule["steps"] * cell.fraction))
        schedule["warmup_steps"] = min(schedule["warmup_steps"], schedule["steps"] // 2)
    elif study.grid.steps == "fixed" and schedule.get("epochs") is not None:
        raise TrainError("grid.steps fixed needs schedule.steps in the training config, not epochs")
    if data["export"].get("name"):
        data["export"]["name"] = f"{data['export']['name']}-{cell.name}"
    return parse_config(data, f"scaling cell {cell.name}")


def run_study(
    study: ScalingConfig, base: TrainConfig, out: Path, strict: bool, say: Callable[[str], None]
) -> list[CellResult]:
    """Train and evaluate every cell not done yet; returns every cell's result."""
    from lookbench.evaluation.headline import score_headline
    from lookbench.evaluation.runner import EvalSettings
    from lookbench.models.embed_options import EmbedOptions
    from lookbench.models.registry import resolve_model
    from lookbench.snapshot.named import open_location
    from lookbench.train.data import refuse_reported_validation

    refuse_reported_validation(base.data.validation, [study.evaluate.snapshot], "the study's evaluate.snapshot")
    snapshot = open_location(study.evaluate.snapshot)
    settings = EvalSettings(subsets=study.evaluate.subsets, resamples=study.evaluate.resamples)
    options = EmbedOptions(batch_size=study.evaluate.batch_size)
    results = []
    for cell in cells(study, base):
        target = out / "results" / f"{cell.name}.json"
        folder = out / "cells" / cell.name
        record = out / "results" / f"{cell.name}.cell.json"
        config = None if cell.fraction == 0 else cell_config(study, base, cell)
        made = cell_fingerprint(study, cell, config)
        if record.is_file() and target.is_file():
            kept = _kept_cell(record)
            if kept.config_fingerprint != made:
                raise TrainError(
                    f"{record}: this cell was made with another config (training or evaluation settings changed); "
                    "study the new config in a new --out folder"
                )
            results.append(kept)
            say(f"{cell.name}: done before, kept")
            continue
        if config is None:
            provider = frozen_provider(cell.backbone, options)
            images = items = steps = 0
        else:
            images, items, steps = _trained_cell(config, folder, strict, say, cell.name)
            provider = resolve_model(f"trained:{folder}", options)
        metrics = score_headline(snapshot, provider, settings, target)
        result = CellResult(cell.backbone, cell.fraction, images, items, steps, metrics, target.name, made)
        write_text_atomic(record, json.dumps(asdict(result), indent=2) + "\n")
        say(f"{cell.name}: fine R@1 {100 * metrics['fine_recall@1']['value']:.2f}")
        results.append(result)
    return results


def _kept_cell(record: Path) -> CellResult:
    """A cell record written by an earlier run of the study."""
    try:
        data = loads(record.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TrainError(f"{record}: not readable JSON ({exc}); delete it to evaluate the cell again") from exc
    return parse_cell_results([data], str(record))[0]


def _trained_cell(
    config: TrainConfig, folder: Path, strict: bool, say: Callable[[str], None], name: str
) -> tuple[int, int, int]:
    """Train the cell (resuming inside it), or take the model a killed study trained before evaluating it."""
    from lookbench.models.trained_model import read_model_info
    from lookbench.train.loop import Trainer

    if (folder / "model.json").is_file():
        info = read_model_info(folder)
        if info.training.get("recipe") != config.model_dump(mode="json"):
            raise TrainError(
                f"{folder}: holds a model trained with another config; study the new config in a new --out folder"
            )
        say(f"{name}: trained before, evaluating")
        return int(info.training["images"]), int(info.training["items"]), int(info.training["steps"])
    say(f"{name}: training")
    trained = Trainer(config, folder, strict=strict, say=say).run()
    return trained.images, trained.items, trained.steps


def frozen_provider(backbone: str, options: Any) -> Any:
    """The backbone before training: its pooled features, L2-normalised, through the same pipeline."""
    import torch

    from lookbench._util.optional import pick_device
    from lookbench.embeddings.model_provider import ModelEmbeddings
    from lookbench.models.backbones import EmbeddingHead, EmbeddingModel
    from lookbench.models.registry import create_backbone
    from lookbench.models.torch_base import TorchEncoder

    network = create_backbone(backbone)
    model = EmbeddingModel(network, EmbeddingHead(network.feature_dim, None))
    device = pick_device(torch)
    encoder = TorchEncoder(
        model.to(device).eval(),
        network.preprocess,
        f"{backbone} (frozen)",
        "pretrained",
        device,
        {"kind": "frozen", "backbone": backbone},
    )
    return ModelEmbeddings(f"frozen:{backbone}", encoder, options)
