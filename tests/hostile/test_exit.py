"""Exits under hostile use: a refusal ends with the same status every time, never with an abort after its line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RUNS = 32
AT_ONCE = 2


@pytest.mark.slow
def test_a_refusal_exits_2_every_time(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "lookbench.cli.main", "eval", "-s", str(tmp_path / "missing"), "-m", "bogus:x"]
    codes: list[int] = []
    errors: list[str] = []
    for _ in range(RUNS // AT_ONCE):
        running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(AT_ONCE)]
        for process in running:
            _, err = process.communicate(timeout=60)
            codes.append(process.returncode)
            errors.append(err.decode("utf-8", "replace"))
    assert codes == [2] * RUNS, sorted(set(zip(codes, errors, strict=True)))
    assert all(err.startswith("error: snapshot folder not found") and "terminate" not in err for err in errors)
