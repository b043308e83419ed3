"""The run plan: the run's facts and each subset's kind decided once, as a frozen strict record the stages read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from conftest import make_row, write_snapshot
from lookbench.errors import LookBenchError, SnapshotError
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.plan import Plan, SubsetPlan
from lookbench.evaluation.settings import EvalSettings
from lookbench.metrics.definitions import DEFAULT_KS
from lookbench.snapshot import open_snapshot


@pytest.fixture
def snap(tmp_path: Path):
    rows = {"query": [make_row("a", "dress", "red")], "gallery": [make_row("a", "dress", "red")]}
    noise = {"gallery": [make_row("n0", "bag", "black"), make_row("n1", "bag", "black")]}
    spec = {"composed_x": rows, "real_streetlook": rows, "real_studio_flat": rows, "noise": noise}
    return open_snapshot(write_snapshot(tmp_path / "s", spec, "v20260301"))


def test_each_subset_is_planned_once_in_scoring_order(snap) -> None:
    plan = Plan.of(snap, EvalSettings(ks=(10, 1, 10)))
    assert plan.names == ("real_studio_flat", "real_streetlook", "composed_x")
    assert [s.kind for s in plan.subsets] == ["image", "image", "composed"]
    assert plan.composed == ("composed_x",)
    assert plan.ks == (1, 10) and plan.noise_rows == 2 and plan.protocol is None and plan.fallback_date is None
    assert (plan.snapshot_id, plan.snapshot_name) == ("v20260301", "v20260301")


def test_the_plan_decides_cut_offs_window_and_noise(snap) -> None:
    since = np.datetime64("2026-01-01")
    plan = Plan.of(snap, EvalSettings(ks=None, since=since, noise=NoisePool.NONE, subsets=["composed_x"]))
    assert plan.names == ("composed_x",)
    assert plan.ks == DEFAULT_KS and plan.since == since and plan.until is None
    assert plan.fallback_date == np.datetime64("2026-03-01") and plan.noise_rows == 0


def test_a_plan_is_frozen_and_strict(snap) -> None:
    plan = Plan.of(snap, EvalSettings())
    with pytest.raises(ValidationError):
        plan.subsets[0].kind = "composed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        plan.ks = (1,)  # type: ignore[misc]
    facts = plan.model_dump()
    with pytest.raises(ValidationError):
        Plan(**{**facts, "subsets": plan.subsets, "ks": [1, 5]})  # a list is not the record's tuple
    with pytest.raises(ValidationError):
        SubsetPlan(name="x", kind="video")  # type: ignore[arg-type]


def test_a_run_plans_each_subset_once(snap) -> None:
    plan = Plan.of(snap, EvalSettings())
    first = plan.subsets[0]
    with pytest.raises(ValidationError, match="twice"):
        Plan(**{**plan.model_dump(), "subsets": (first, first)})


def test_bad_requests_fail_while_planning(snap) -> None:
    with pytest.raises(LookBenchError, match="positive"):
        Plan.of(snap, EvalSettings(ks=(0, 5)))
    with pytest.raises(SnapshotError, match="not in snapshot"):
        Plan.of(snap, EvalSettings(subsets=["aigen_studio"]))
