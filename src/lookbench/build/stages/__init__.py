"""Build stages; the default order is collect -> dedup -> split -> publish (part 2 inserts before split)."""

from __future__ import annotations

from lookbench.build.stages.base import BuildContext, Stage, StageResult
from lookbench.build.stages.collect import CollectStage
from lookbench.build.stages.dedup import DedupStage
from lookbench.build.stages.publish import PublishStage
from lookbench.build.stages.split import SplitStage


def default_stages() -> list[Stage]:
    """The part-1 pipeline; crop/annotate/audit/distractor stages go between DedupStage and SplitStage."""
    return [CollectStage(), DedupStage(), SplitStage(), PublishStage()]


__all__ = ["BuildContext", "Stage", "StageResult", "default_stages"]
