"""The run plan: each subset's facts decided once, as a frozen strict record the run's stages read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from conftest import make_row, write_snapshot
from lookbench.errors import LookBenchError, SnapshotError
from lookbench.evaluation.noise import NoisePool
from lookbench.evaluation.plan import RunPlan, SubsetPlan, build_plan
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
    plan = build_plan(snap, EvalSettings(ks=(10, 1, 10)))
    assert plan.names == ("real_studio_flat", "real_streetlook", "composed_x")
    assert [s.kind for s in plan.subsets] == ["image", "image", "composed"]
    assert plan.composed == ("composed_x",)
    assert plan.ks == (1, 10) and plan.noise_rows == 2 and plan.official() is None
    assert {s.protocol for s in plan.subsets} == {None} and {s.fallback_date for s in plan.subsets} == {None}
    assert (plan.snapshot_id, plan.snapshot_name) == ("v20260301", "v20260301")


def test_the_plan_decides_cut_offs_window_and_noise(snap) -> None:
    since = np.datetime64("2026-01-01")
    plan = build_plan(snap, EvalSettings(ks=None, since=since, noise=NoisePool.NONE, subsets=["composed_x"]))
    (only,) = plan.subsets
    assert only.ks == DEFAULT_KS and only.since == since and only.until is None
    assert only.fallback_date == np.datetime64("2026-03-01") and only.noise_rows == 0


def test_a_plan_is_frozen_and_strict(snap) -> None:
    plan = build_plan(snap, EvalSettings())
    with pytest.raises(ValidationError):
        plan.subsets[0].kind = "composed"  # type: ignore[misc]
    facts = plan.subsets[0].model_dump()
    with pytest.raises(ValidationError):
        SubsetPlan(**{**facts, "ks": [1, 5]})  # a list is not the record's tuple
    with pytest.raises(ValidationError):
        SubsetPlan(**{**facts, "kind": "video"})


def test_a_run_has_one_protocol_cut_offs_and_window(snap) -> None:
    plan = build_plan(snap, EvalSettings())
    first, second = plan.subsets[:2]
    with pytest.raises(ValidationError, match="share"):
        RunPlan(**{**plan.model_dump(), "subsets": (first, second.model_copy(update={"ks": (1,)}))})
    with pytest.raises(ValidationError, match="twice"):
        RunPlan(**{**plan.model_dump(), "subsets": (first, first)})


def test_bad_requests_fail_while_planning(snap) -> None:
    with pytest.raises(LookBenchError, match="positive"):
        build_plan(snap, EvalSettings(ks=(0, 5)))
    with pytest.raises(SnapshotError, match="not in snapshot"):
        build_plan(snap, EvalSettings(subsets=["aigen_studio"]))
