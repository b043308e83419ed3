"""The training steps skip DDP's all-reduce on accumulating micro-batches because the wrapper says it wrapped DDP."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

from lookbench.train.loop import WrappedModel  # noqa: E402


def test_one_process_has_no_wrapper_and_nothing_to_skip() -> None:
    wrapped = WrappedModel(torch.nn.Linear(2, 2), None)
    assert all(isinstance(wrapped.accumulating(last), contextlib.nullcontext) for last in (False, True))


def test_ddp_skips_the_all_reduce_on_every_micro_batch_but_the_last(tmp_path: Path) -> None:
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
        wrapped = WrappedModel(ddp, ddp)
        with wrapped.accumulating(False):
            assert ddp.require_backward_grad_sync is False
        assert ddp.require_backward_grad_sync is True
        with wrapped.accumulating(True):
            assert ddp.require_backward_grad_sync is True
    finally:
        dist.destroy_process_group()
