"""Build stages: collect -> dedup -> [crop, annotate, audit, distractors when configured] -> split -> publish."""

from __future__ import annotations

from lookbench.release.config import ReleaseConfig
from lookbench.release.stages.base import BuildContext, Stage, StageResult
from lookbench.release.stages.collect import CollectStage
from lookbench.release.stages.dedup import DedupStage
from lookbench.release.stages.publish import PublishStage
from lookbench.release.stages.split import SplitStage


def part2_stages(config: ReleaseConfig) -> list[Stage]:
    """The configured part-2 stages, in order (imported lazily: they pull in the API client and probes)."""
    from lookbench.release.annotate.stage import AnnotateStage
    from lookbench.release.audit.stage import AuditStage
    from lookbench.release.crops.stage import CropStage
    from lookbench.release.distractors import DistractorStage

    wanted: list[tuple[object, Stage]] = [
        (config.crop, CropStage()),
        (config.annotate, AnnotateStage()),
        (config.audit, AuditStage()),
        (config.distractors, DistractorStage()),
    ]
    return [stage for section, stage in wanted if section is not None]


def default_stages(config: ReleaseConfig | None = None) -> list[Stage]:
    """The pipeline; with a config, its configured part-2 stages go between DedupStage and SplitStage."""
    middle = part2_stages(config) if config is not None else []
    return [CollectStage(), DedupStage(), *middle, SplitStage(), PublishStage()]


__all__ = [
    "BuildContext",
    "CollectStage",
    "DedupStage",
    "PublishStage",
    "SplitStage",
    "Stage",
    "StageResult",
    "default_stages",
]
