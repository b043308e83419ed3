"""A training run's output folder, claimed by its marker before anything is written (no torch needed)."""

from __future__ import annotations

from pathlib import Path

from lookbench._util.outfolder import Claim, claim_output_folder
from lookbench.train.config import TrainConfig

RUN_MARKER = ".lookbench-train"
"""The marker of run folders from before `lookbench._util.outfolder`: a folder holding it is a train run's."""


def claim_train_folder(folder: Path, cfg: TrainConfig, overwrite: bool) -> Claim:
    """Claim a run folder for this config; a folder marked by an earlier run of another config needs `overwrite`."""
    return claim_output_folder(
        folder, "train", config_hash=cfg.fingerprint(), overwrite=overwrite, also_marks=RUN_MARKER
    )
