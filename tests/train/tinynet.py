"""A tiny CNN backbone for training tests (`python:tinynet:make`); optionally kills its own process mid-run."""

from __future__ import annotations

import os
import signal

import torch
from torch import nn

KILL_ENV = "LOOKBENCH_TEST_KILL_AT_FORWARD"
"""When set to N, the N-th training forward pass SIGKILLs the process: a real crash, no cleanup."""


class TinyNet(nn.Module):
    """Two numbered conv blocks (so layer-wise decay sees layers), no batch norm (DDP shards see equal stats)."""

    feature_dim = 16
    preprocess = {"crop": 32, "resize": 36, "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]}

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.blocks = nn.Sequential(
            nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.GELU()),
            nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.GELU(), nn.Dropout(0.1)),
        )
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.calls += 1
            if os.environ.get(KILL_ENV) == str(self.calls):
                os.kill(os.getpid(), signal.SIGKILL)
        return self.blocks(torch.relu(self.stem(x))).mean(dim=(2, 3))


def make() -> TinyNet:
    """The factory named by `python:tinynet:make`."""
    return TinyNet()


class NoDropoutNet(TinyNet):
    """TinyNet without dropout: identical maths whatever the process layout (for the DDP comparison)."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks[1][2] = nn.Identity()


def make_plain() -> NoDropoutNet:
    """`python:tinynet:make_plain`."""
    return NoDropoutNet()


def make_seeded() -> TinyNet:
    """`python:tinynet:make_seeded`: TinyNet with fixed initial weights, which stand for pretrained ones."""
    with torch.random.fork_rng():
        torch.manual_seed(1234)
        return TinyNet()
