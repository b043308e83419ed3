"""Worker count, batch size and decoding place chosen from the machine when not given."""

from __future__ import annotations

import pytest

from embedding_helpers import ColourStats
from lookbench.embeddings import machine
from lookbench.embeddings.machine import GIB, auto_batch_size, auto_workers, decodes_on_device
from lookbench.errors import EmbeddingError


class _FakeCudaEncoder(ColourStats):
    """A tensor encoder that says it runs on CUDA."""

    def __init__(self) -> None:
        super().__init__()
        self.device = "cuda:0"


def test_cpu_models_keep_the_defaults_they_had() -> None:
    assert auto_workers(ColourStats(), decode_on_device=False) == 2
    assert auto_batch_size(ColourStats()) == 32
    assert decodes_on_device(ColourStats(), "auto") is False
    assert decodes_on_device(ColourStats(), "cpu") is False


@pytest.mark.parametrize(("free_gib", "batch"), [(120, 256), (40, 256), (20, 128), (8, 64), (2, 32)])
def test_cuda_batch_size_follows_free_memory(free_gib: int, batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "free_memory", lambda device: free_gib * GIB if device == "cuda:0" else 0)
    assert auto_batch_size(_FakeCudaEncoder()) == batch


def test_cuda_workers_use_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "usable_cores", lambda: 16)
    encoder = _FakeCudaEncoder()
    assert auto_workers(encoder, decode_on_device=False) == 15
    assert auto_workers(encoder, decode_on_device=True) == 4
    monkeypatch.setattr(machine, "usable_cores", lambda: 1)
    assert auto_workers(encoder, decode_on_device=False) == 1


def test_decoding_on_the_device_needs_a_torch_tensor_model() -> None:
    encoder = _FakeCudaEncoder()
    assert decodes_on_device(encoder, "device") is True
    with pytest.raises(EmbeddingError, match="--decode device: colour-stats is not a torch model"):
        decodes_on_device(ColourStats(), "device")
