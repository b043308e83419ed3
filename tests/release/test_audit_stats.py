"""Audit statistics against hand-computed values, sampling, canaries and the distractor band."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from lookbench.release.detect.base import Box, box_problem, clipped, iou
from lookbench.release.detect.vlm import garments_of, parse_boxes
from lookbench.release.judge.sampling import allocate, canaries, stratified_sample
from lookbench.release.judge.stats import clustered_bootstrap, cohen_kappa, gwet_ac1, sample_size, wilson
from lookbench.release.records import Sample
from lookbench.release.stages.distractors import band_verdicts, nearest_similarity
from lookbench.taxonomy import load_taxonomy


def test_sample_size_formula():
    # n0 = 1.96^2 * 0.9 * 0.1 / 0.05^2 = 138.3 -> 139 for an unlimited population
    assert sample_size(0.05, 0.9, 10**9) == 139
    # finite population: 138.3 / (1 + 137.3 / 200) = 82.0 -> 83
    assert sample_size(0.05, 0.9, 200) == 83
    assert sample_size(0.05, 0.9, 10) == 10 and sample_size(0.05, 0.9, 0) == 0


def test_wilson_interval():
    low, high = wilson(93, 100)
    assert low == pytest.approx(0.8626, abs=1e-4) and high == pytest.approx(0.9657, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(10, 10)[1] == pytest.approx(1.0) and wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)


def test_agreement_coefficients():
    judge = ["correct"] * 8 + ["incorrect"] * 2
    human = ["correct"] * 7 + ["incorrect"] * 3
    # p_o = 0.9; kappa p_e = 0.8*0.7 + 0.2*0.3 = 0.62 -> (0.9-0.62)/0.38
    assert cohen_kappa(judge, human) == pytest.approx(0.28 / 0.38)
    # AC1: pi = (0.75, 0.25), p_e = 2 * 0.75 * 0.25 / 1 = 0.375 -> (0.9-0.375)/0.625
    assert gwet_ac1(judge, human) == pytest.approx(0.525 / 0.625)
    # the kappa paradox: high agreement on a skewed sample keeps AC1 high while kappa collapses
    skewed_a = ["correct"] * 19 + ["incorrect"]
    skewed_b = ["correct"] * 20
    assert cohen_kappa(skewed_a, skewed_b) == pytest.approx(0.0)
    assert gwet_ac1(skewed_a, skewed_b) > 0.9


def test_clustered_bootstrap_is_wider_for_correlated_crops():
    # 40 crops of 5 attributes: all right or all wrong within a crop (correlated) vs spread out
    clustered = clustered_bootstrap([5] * 32 + [0] * 8, [5] * 40, 2000, 0)
    spread = clustered_bootstrap([4] * 40, [5] * 40, 2000, 0)
    assert clustered[0] < 0.8 < clustered[1]
    assert spread == (pytest.approx(0.8), pytest.approx(0.8))
    assert clustered[1] - clustered[0] > 0.15


def test_stratified_sample_and_canaries():
    taxonomy = load_taxonomy()
    rows = [
        Sample(
            source="s",
            source_kind="catalog",
            product_id=f"{cat}{i}",
            image=b"",
            first_seen_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
            category=cat,
            main_attribute="red",
            other_attributes=["solid"],
            subsets=[subset],
            license="",
            source_main_attribute="red",
            source_other_attributes=["solid"],
            sample_id=f"{cat}{i}",
        )
        for subset, cat, count in (
            ("real_studio_flat", "dress", 60),
            ("real_streetlook", "skirt", 30),
            ("aigen_studio", "bag", 2),
        )
        for i in range(count)
    ]
    assert allocate({"a": 60, "b": 30, "c": 2}, 10) == {"a": 6, "b": 3, "c": 1}
    sample = stratified_sample(rows, 0.1, 0.9, seed=3)
    assert len(sample) == sample_size(0.1, 0.9, 92) == 26
    cats = [r.category for r in sample]
    assert cats.count("bag") >= 1 and cats.count("dress") > cats.count("skirt")
    assert stratified_sample(rows, 0.1, 0.9, seed=3) == sample
    planted = canaries(sample, 0.5, taxonomy, seed=3)
    assert len(planted) == 13
    for check in planted:
        assert check.canary and check.attribute not in ("red", "solid")
        assert check.attribute in taxonomy.category(check.category).attributes[check.group]


def test_boxes_and_band():
    assert box_problem(Box("hat", (1, 1, 3, 3)), 100, 100, 16, 0.0) == "tiny"
    assert box_problem(Box("hat", (40, 40, 40, 90)), 100, 100, 16, 0.0) == "degenerate"
    assert box_problem(clipped(Box("hat", (-10, -10, 50, 50)), 100, 100), 100, 100, 16, 0.0) is None
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(1 / 3)
    items = np.array([[1.0, 0.0], [0.0, 1.0]])
    candidates = np.array([[1.0, 0.01], [1.0, 1.0], [-1.0, -1.0], [0.35, -0.94]])
    sims = nearest_similarity(candidates, items)
    assert band_verdicts(sims, (0.25, 0.45)) == ["near-duplicate", "near-duplicate", "unrelated", "keep"]


def test_detection_answers_are_parsed_defensively():
    taxonomy = load_taxonomy()
    garments = [
        {"category": "skirt", "box": [10, 20, 30, 40]},
        "junk",
        {"category": "cape", "box": [1, 2, 3, 4]},
        {"category": "hat", "box": [1, 2, 3]},
        {"category": "bag", "box": [1, "x", 3, 4]},
        {"category": "bag", "box": [1, float("nan"), 3, 4]},
        {"category": "bag", "box": [True, 1, 3, 4]},
    ]
    assert parse_boxes(garments, taxonomy, (2.0, 0.5)) == [Box("skirt", (20.0, 10.0, 60.0, 20.0))]
    for answer in ({"garments": 3}, [], None, "text"):
        with pytest.raises(ValueError, match="not a garment list"):
            garments_of(answer)
