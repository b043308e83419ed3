"""Site-test fixtures, imported by each test module (a second conftest.py would shadow tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import chromium
from synth_runs import DEFAULT_MODELS, build_snapshot, evaluate_models

WIDTHS = (1400, 400)
"""Browser tests run at a desktop and a phone width."""
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "site"


@pytest.fixture(scope="session", name="synth_data")
def synth_data_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, np.ndarray]]:
    """(work folder, snapshot folder, the 'true' item vectors the fake models perturb)."""
    root = tmp_path_factory.mktemp("synth")
    snapshot, vectors = build_snapshot(root / "snap")
    return root, snapshot, vectors


@pytest.fixture(scope="session", name="synth_runs")
def synth_runs_fixture(synth_data: tuple[Path, Path, dict[str, np.ndarray]]) -> tuple[Path, list[Path]]:
    """(snapshot folder, result files of the models sharp, twin and blurry)."""
    root, snapshot, vectors = synth_data
    return snapshot, evaluate_models(root, snapshot, vectors, DEFAULT_MODELS)


@pytest.fixture(scope="session", name="windowed_run")
def windowed_run_fixture(synth_data: tuple[Path, Path, dict[str, np.ndarray]], synth_runs: object) -> Path:
    """The model sharp evaluated only on queries first seen since 2026-01-01: a different query set."""
    root, snapshot, vectors = synth_data
    return evaluate_models(root, snapshot, vectors, DEFAULT_MODELS[:1], since="2026-01-01")[0]


@pytest.fixture(scope="session", name="artifacts")
def artifacts_fixture() -> Path:
    """Where screenshots are kept after the run (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{w}px" for w in WIDTHS], name="driver")
def driver_fixture(request: pytest.FixtureRequest) -> Iterator[Any]:
    """One headless Chromium per viewport width, shared by the tests of a module."""
    with chromium(width=request.param) as driver:
        driver.viewport = request.param
        yield driver
