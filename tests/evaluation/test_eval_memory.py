"""Peak memory of loading and normalising a precomputed noise matrix: one copy of its vectors, not two."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROWS, DIM = 100_000, 256

# Runs in a fresh interpreter, whose VmHWM (peak resident set) starts with it; resident pages of a memory-mapped
# file count in it (tracemalloc would not see them).
PROBE = """
import sys
from lookbench.embeddings.checks import check_embeddings
from lookbench.embeddings.precomputed import PrecomputedEmbeddings

def kib(field):
    line = next(line for line in open("/proc/self/status") if line.startswith(field))
    return int(line.split()[1])

provider = PrecomputedEmbeddings(sys.argv[1])
before = kib("VmRSS:")
raw = provider.embed_split(None, "noise", "gallery")
vectors = check_embeddings(raw, raw.shape[0], "noise", in_place=provider.returns_new_arrays)
del raw
print(kib("VmHWM:") - before, float(vectors[:, 0].sum()))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_noise_matrix_is_held_once(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(ROWS, DIM)).astype(np.float32)
    path = tmp_path / "noise" / "gallery.npy"
    path.parent.mkdir()
    np.save(path, matrix)
    src = Path(__file__).resolve().parents[2] / "src"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
    )
    grown_kib, first_column = done.stdout.split()
    one_copy_kib = matrix.nbytes / 1024
    assert int(grown_kib) <= 1.25 * one_copy_kib, (grown_kib, one_copy_kib)  # two copies: 2x
    expected = matrix[:, 0] / np.sqrt((matrix.astype(np.float64) ** 2).sum(axis=1))
    assert float(first_column) == pytest.approx(float(expected.sum()), rel=1e-4)
