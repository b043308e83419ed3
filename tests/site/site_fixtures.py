"""Site-test fixtures, imported by each test module (a second conftest.py would shadow tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_runs import DEFAULT_MODELS, build_snapshot, evaluate_models

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "site"


@pytest.fixture(scope="session", name="synth_runs")
def synth_runs_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """(snapshot folder, result files of the models sharp, twin and blurry)."""
    root = tmp_path_factory.mktemp("synth")
    snapshot, vectors = build_snapshot(root / "snap")
    return snapshot, evaluate_models(root, snapshot, vectors, DEFAULT_MODELS)


@pytest.fixture(scope="session", name="artifacts")
def artifacts_fixture() -> Path:
    """Where screenshots are kept after the run (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
