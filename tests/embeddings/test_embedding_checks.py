"""check_embeddings: scale-invariant normalisation that cannot overflow, and every bad row named."""

from __future__ import annotations

import numpy as np
import pytest

from lookbench.embeddings.checks import BLOCK_ROWS, check_embeddings
from lookbench.errors import EmbeddingError
from lookbench.search.backend import is_immutable


def _rows(n: int = 6, d: int = 12) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d)).astype(np.float32)


def test_unit_rows_read_only_float32() -> None:
    out = check_embeddings(_rows(), 6, "x")
    assert out.dtype == np.float32 and out.flags.c_contiguous and not out.flags.writeable
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("scale", [2.0**-100, 2.0**-70, 2.0**64, 2.0**100, 2.0**126])
def test_power_of_two_scales_give_identical_rows(scale: float) -> None:
    x = _rows()
    np.testing.assert_array_equal(check_embeddings(x * np.float32(scale), 6, "x"), check_embeddings(x, 6, "x"))


@pytest.mark.parametrize("scale", [1e-30, 3.0, 1e30, 3e37])
def test_any_scale_gives_the_same_direction(scale: float) -> None:
    x = _rows()
    assert np.allclose(check_embeddings(x * np.float32(scale), 6, "x"), check_embeddings(x, 6, "x"), atol=2e-7)


def test_float64_beyond_float32_range_and_float16() -> None:
    x = _rows()
    reference = check_embeddings(x, 6, "x")
    for wide in (x.astype(np.float64) * 1e300, x.astype(np.float64) * 1e-300):
        assert np.allclose(check_embeddings(wide, 6, "x"), reference, atol=2e-7)
    assert np.allclose(check_embeddings(x.astype(np.float16), 6, "x"), reference, atol=1e-3)


def test_bad_rows_are_named_across_blocks() -> None:
    x = np.ones((BLOCK_ROWS + 20, 4), dtype=np.float32)
    x[3, 1] = np.nan
    x[BLOCK_ROWS + 5, 0] = np.inf
    with pytest.raises(EmbeddingError, match=rf"x: NaN or infinite values in row\(s\) 3, {BLOCK_ROWS + 5}$"):
        check_embeddings(x, len(x), "x")
    y = np.ones((30, 4))
    y[[2, 25]] = 0.0
    y[7] = 1e-320  # subnormal but not zero: a valid direction
    with pytest.raises(EmbeddingError, match=r"zero vector\(s\) in row\(s\) 2, 25$"):
        check_embeddings(y, 30, "x")
    big = np.zeros((15, 3), dtype=np.float32)
    with pytest.raises(EmbeddingError, match=r"row\(s\) 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 5 more"):
        check_embeddings(big, 15, "x")


def test_ignored_rows_become_a_unit_vector() -> None:
    x = _rows()
    x[2] = 0.0
    x[4, 0] = np.nan
    out = check_embeddings(x, 6, "x", ignore_rows=[2, 4])
    np.testing.assert_array_equal(out[[2, 4]], np.eye(12, dtype=np.float32)[[0, 0]])


@pytest.mark.parametrize(
    ("array", "rows", "dim", "message"),
    [
        (np.ones(4, dtype=np.float32), 4, None, "2-d array"),
        (np.ones((3, 4), dtype=np.float32), 4, None, "3 rows of embeddings for 4"),
        (np.ones((4, 4), dtype=np.float32), 4, 8, "dimension 4 does not match 8"),
        (np.ones((4, 4), dtype=bool), 4, None, "real numbers"),
        (np.ones((4, 0), dtype=np.float32), 4, None, "dimension 0"),
    ],
)
def test_shape_and_type_errors(array: np.ndarray, rows: int, dim: int | None, message: str) -> None:
    with pytest.raises(EmbeddingError, match=message):
        check_embeddings(array, rows, "x", dim)


def test_in_place_normalises_the_callers_array_only_when_it_can() -> None:
    x = _rows()
    expected = check_embeddings(x.copy(), 6, "x")
    out = check_embeddings(x, 6, "x", in_place=True)
    assert np.shares_memory(out, x) and np.array_equal(out, expected)
    wide = _rows().astype(np.float64)
    assert not np.shares_memory(check_embeddings(wide, 6, "x", in_place=True), wide)
    strided = np.asfortranarray(_rows())
    assert not np.shares_memory(check_embeddings(strided, 6, "x", in_place=True), strided)


def test_in_place_result_is_immutable_even_as_a_view() -> None:
    # np.load hands back a view of a flat array; the search remembers norms only of arrays nothing can write
    flat = np.random.default_rng(0).normal(size=72).astype(np.float32)
    view = flat.reshape(6, 12)
    out = check_embeddings(view, 6, "x", in_place=True)
    assert np.shares_memory(out, flat) and is_immutable(out) and not flat.flags.writeable
