"""benchmarks/measure.py: a command's figures are kept in its result file only when the command succeeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MEASURE = Path(__file__).resolve().parents[1] / "benchmarks" / "measure.py"


def _measure(results: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOOKBENCH_RESULTS": str(results)}
    return subprocess.run(
        [sys.executable, str(MEASURE), "probe", *command], capture_output=True, text=True, check=False, env=env
    )


def test_a_failed_command_leaves_the_earlier_result_file_as_it_was(tmp_path: Path) -> None:
    earlier = tmp_path / "probe.json"
    earlier.write_text('{"figures": {"fine_recall@1": 0.345}}\n')
    done = _measure(tmp_path, sys.executable, "-c", "import sys; print('half done'); sys.exit(3)")
    assert done.returncode == 3 and "half done" in done.stdout
    assert earlier.read_text() == '{"figures": {"fine_recall@1": 0.345}}\n'


def test_a_successful_command_writes_what_it_printed(tmp_path: Path) -> None:
    done = _measure(tmp_path, sys.executable, "-c", "print('measured 7')")
    assert done.returncode == 0
    written = json.loads((tmp_path / "probe.json").read_text())
    assert written["output"] == ["measured 7"] and written["command"].endswith("print('measured 7')")
