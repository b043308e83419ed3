"""A training run's output folder, claimed by its marker before anything is written (no torch needed)."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from lookbench._util.outfolder import Claim, claim_output_folder, read_marker, refuse_unlisted
from lookbench.train.config import TrainConfig

RUN_MARKER = ".lookbench-train"
"""The marker of run folders from before `lookbench._util.outfolder`: a folder holding it is a train run's."""


def claim_train_folder(folder: Path, cfg: TrainConfig, overwrite: bool) -> Claim:
    """Claim a run folder for this config; a folder marked by an earlier run of another config needs `overwrite`."""
    return claim_output_folder(
        folder, "train", config_hash=cfg.fingerprint(), overwrite=overwrite, also_marks=RUN_MARKER
    )


def clear_for_overwrite(folder: Path, names: Iterable[str]) -> None:
    """Remove those of `names` the folder's marker lists as a run's; a folder it does not list is refused first (it
    is the user's), a file it does not list is left for the run to replace."""
    paths = [folder / name for name in names]
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            refuse_unlisted(path)
    marker = read_marker(folder)
    for path in paths:
        if marker is not None and path.name in marker.files:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink(missing_ok=True)
