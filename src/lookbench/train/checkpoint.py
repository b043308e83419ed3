"""Resumable checkpoints: `checkpoints/step-NNNNNNN/` holds the replicated state (rank 0) and one file per rank.

A checkpoint is written into `step-NNNNNNN.partial/` and renamed into place by rank 0 after every rank has written
its file, so a crash never leaves a checkpoint that looks complete. Resuming restores the model, both optimisers,
the PartialFC shard with its sampling generator, and every RNG; the sampler needs only the step (see `sampler`).
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from lookbench.errors import TrainError
from lookbench.train.distributed import World

MAIN = "main.pt"


def _rank_file(rank: int, world: int) -> str:
    return f"rank-{rank:05d}-of-{world:05d}.pt"


def _step_dir(root: Path, step: int) -> Path:
    return root / f"step-{step:09d}"


def rng_state() -> dict[str, Any]:
    """Every RNG a training step draws from (torch CPU and CUDA, Python, NumPy)."""
    state: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": np.random.get_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what `rng_state` captured."""
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@dataclass
class Checkpoint:
    """The state of one rank at the end of `step` optimiser steps."""

    step: int
    main: dict[str, Any]
    rank: dict[str, Any]


def save_checkpoint(
    root: Path, step: int, world: World, main: dict[str, Any], rank_state: dict[str, Any], keep: int
) -> Path:
    """Write this rank's part; rank 0 also writes the replicated part and, once all ranks are done, commits."""
    final = _step_dir(root, step)
    partial = final.with_name(final.name + ".partial")
    if world.is_main:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
    world.barrier()
    torch.save(rank_state, partial / _rank_file(world.rank, world.size))
    if world.is_main:
        torch.save(main, partial / MAIN)
    world.barrier()
    if world.is_main:
        shutil.rmtree(final, ignore_errors=True)
        partial.rename(final)
        for old in completed(root)[:-keep]:
            shutil.rmtree(_step_dir(root, old), ignore_errors=True)
    world.barrier()
    return final


def completed(root: Path) -> list[int]:
    """Steps of the complete checkpoints under `root`, ascending."""
    if not root.is_dir():
        return []
    steps = []
    for child in root.iterdir():
        if child.is_dir() and child.name.startswith("step-") and not child.name.endswith(".partial"):
            try:
                steps.append(int(child.name.removeprefix("step-")))
            except ValueError:
                continue
    return sorted(steps)


def load_latest(root: Path, world: World, fingerprint: str, data_fingerprint: str | None = None) -> Checkpoint | None:
    """The newest complete checkpoint for this rank, or None; refuses one from another config, data or world size."""
    steps = completed(root)
    if not steps:
        return None
    folder = _step_dir(root, steps[-1])
    rank_path = folder / _rank_file(world.rank, world.size)
    if not rank_path.is_file():
        found = sorted(p.name for p in folder.glob("rank-*.pt"))
        if not found or any(name.endswith(f"-of-{world.size:05d}.pt") for name in found):
            raise TrainError(
                f"{folder}: incomplete, {rank_path.name} is missing (found: {', '.join(found) or 'no rank files'}); "
                "delete this checkpoint to resume from an earlier one, or start again with --overwrite"
            )
        raise TrainError(
            f"{folder}: written by a run with another number of processes ({', '.join(found)}); "
            f"resume with the same number ({world.size} now) or start again with --overwrite"
        )
    try:
        main = torch.load(folder / MAIN, map_location="cpu", weights_only=False)
        rank = torch.load(rank_path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise TrainError(
            f"{folder}: checkpoint does not load ({exc}); delete it to resume from an earlier one"
        ) from exc
    if main.get("config_fingerprint") != fingerprint:
        raise TrainError(
            f"{folder}: the run was started with another config; use the same config, or --overwrite to start again"
        )
    recorded = main.get("data_fingerprint")
    if data_fingerprint is not None and recorded is not None and recorded != data_fingerprint:
        raise TrainError(
            f"{folder}: the training data changed since this checkpoint (images, items or labels after the guard); "
            "a resume would not continue the same run: restore the data, or --overwrite to start again"
        )
    return Checkpoint(int(main["step"]), main, rank)
