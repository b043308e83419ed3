"""The calibrated gallery-vs-noise test: planted shortcuts are flagged, an unmodified pool is not, and the smallest
planted shift it detects is reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from auditkit import brighter, red_border, studio_pixels, studio_snapshot
from typer.testing import CliRunner

from lookbench.cli.main import app
from lookbench.release.audit.calibration import column_aucs, permutation_test
from lookbench.release.audit.probe import auc
from lookbench.release.audit.run import AuditSettings, audit_snapshot
from lookbench.results.audit_schema import SeparationTest
from lookbench.snapshot.reader import open_snapshot

PER_SIDE = 1500
"""Images per side: enough for a 10% border (AUC at most 0.55) to stand out of the null's 99% quantile."""
Pixels = tuple[list[np.ndarray], list[np.ndarray]]


@pytest.fixture(scope="module")
def pixels() -> Pixels:
    """Gallery and noise pixels drawn from one studio distribution."""
    return [studio_pixels(10_000 + i) for i in range(PER_SIDE)], [studio_pixels(20_000 + i) for i in range(PER_SIDE)]


def _tested(root: Path, gallery: list[np.ndarray], noise: list[np.ndarray], planted: bool = False) -> SeparationTest:
    snapshot = open_snapshot(studio_snapshot(root, gallery, noise))
    settings = AuditSettings(resamples=0) if planted else AuditSettings(resamples=0, planted=())
    test = audit_snapshot(snapshot, settings=settings).separability.image_statistics.test
    assert test is not None
    return test


@pytest.mark.slow
def test_an_unmodified_pool_is_not_flagged_and_the_smallest_detected_shift_is_reported(
    tmp_path: Path, pixels: Pixels
) -> None:
    test = _tested(tmp_path, *pixels, planted=True)
    assert not test.separable and test.p_value > 0.01
    assert test.permutations == 200 and test.alpha == 0.01
    assert test.statistic < test.null_quantile
    assert test.smallest_detected_brightness is not None and test.smallest_detected_brightness <= 1.03
    assert test.planted[-1].detected and not any(p.detected for p in test.planted[:-1])
    assert test.planted[-1].p_value <= 0.01 < min([p.p_value for p in test.planted[:-1]], default=1.0)


def test_a_three_percent_brightness_shift_on_every_distractor_is_flagged(tmp_path: Path, pixels: Pixels) -> None:
    gallery, noise = pixels
    test = _tested(tmp_path, gallery, [brighter(p, 1.03) for p in noise])
    assert test.separable and test.p_value == pytest.approx(1 / 201)
    assert test.statistic > test.null_quantile


def test_a_red_border_on_one_distractor_in_ten_is_flagged(tmp_path: Path, pixels: Pixels) -> None:
    gallery, noise = pixels
    test = _tested(tmp_path, gallery, [red_border(p) if i % 10 == 0 else p for i, p in enumerate(noise)])
    assert test.separable and test.p_value <= 0.01
    assert test.statistic < 0.6  # a tenth of the pool stands out: a fixed AUC cut-off of 0.6 would pass it
    assert test.statistic_group in ("border colour", "background colour", "border saturation and spread")


def test_column_aucs_equal_the_pairwise_auc_of_each_column() -> None:
    rng = np.random.default_rng(1)
    scores = np.round(rng.normal(size=(50, 4)), 1)
    labels = np.column_stack([rng.permutation(np.arange(50) < 20) for _ in range(4)])
    expected = [auc(scores[:, j], labels[:, j]) for j in range(4)]
    np.testing.assert_allclose(column_aucs(scores, labels), expected)


def test_the_p_value_counts_the_observed_statistic_once() -> None:
    rng = np.random.default_rng(2)
    noise = np.arange(200) < 100
    apart = rng.normal(size=(200, 83)) + 2.0 * noise[:, None]
    alike = rng.normal(size=(200, 83))
    assert permutation_test(apart, noise, 99, 0.01, 0, 5).p_value == pytest.approx(1 / 100)
    chance = permutation_test(alike, noise, 99, 0.01, 0, 5)
    assert 0.01 < chance.p_value <= 1.0 and chance.p_value * 100 == pytest.approx(round(chance.p_value * 100))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--permutations", "50"], "--permutations 50 cannot reach --alpha 0.01: at least 99 are needed"),
        (["--alpha", "1.5"], "--alpha"),
    ],
)
def test_permutations_too_few_for_alpha_is_one_line(tmp_path: Path, options: list[str], message: str) -> None:
    from auditkit import audit_snapshot_dir

    result = CliRunner().invoke(app, ["audit", str(audit_snapshot_dir(tmp_path / "snap")), *options])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
