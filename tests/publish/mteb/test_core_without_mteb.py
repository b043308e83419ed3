"""The core never imports MTEB: only an `mteb:` spec, `models --source mteb` or `lookbench.publish.mteb` do."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.torch  # runs where mteb is installed, so an import of it would show


def test_cli_registry_and_runner_leave_mteb_unimported() -> None:
    pytest.importorskip("mteb")
    code = (
        "import sys, lookbench.cli.main, lookbench.models.registry, lookbench.evaluation.runner, "
        "lookbench.publish.submissions.verify\n"
        "from lookbench.models.registry import parse_spec\n"
        "parse_spec('mteb:openai/clip-vit-base-patch32')\n"
        "print(sorted(m for m in sys.modules if m == 'mteb' or m.startswith('mteb.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "[]"
