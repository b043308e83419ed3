"""Arrow arrays built from buffers equal pyarrow's own conversions, and reading them back never imports pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from lookbench._util.arrow import from_numpy, rows_of, strings, timestamps, to_datetimes, to_numpy


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, np.float64, np.uint8])
def test_from_numpy_equals_pyarrow(dtype: type) -> None:
    values = np.arange(-3, 9).astype(dtype)
    for case in (values, values[::3], values.astype(np.dtype(dtype).newbyteorder(">"))):
        built = from_numpy(case)
        assert built.equals(pa.array(case.astype(np.dtype(dtype)))), case


def test_booleans_equal_pyarrow_at_every_length() -> None:
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 8, 9, 100):
        flags = rng.random(n) < 0.5
        assert from_numpy(flags).equals(pa.array(flags))
        assert np.array_equal(to_numpy(from_numpy(flags)), flags)


def test_strings_equal_pyarrow_with_nulls_and_unicode() -> None:
    for values in ([], ["a"], ["", "é", None, "long" * 50], [None, None]):
        assert strings(values).equals(pa.array(values, pa.string())), values


def test_timestamps_equal_pyarrow_with_nat() -> None:
    dates = np.array(["2025-01-01T10:00:00.000007", "NaT", "1999-12-31"], dtype="datetime64[us]")
    for tz in (None, "UTC"):
        assert timestamps(dates, tz).equals(pa.array(dates, pa.timestamp("us", tz=tz)))


def test_to_numpy_reads_chunked_and_sliced_columns() -> None:
    column = pa.chunked_array([pa.array([1.5, 2.5, 3.5]).slice(1), pa.array([4.5])])
    assert np.array_equal(to_numpy(column), [2.5, 3.5, 4.5])
    assert to_numpy(column).dtype == np.float64
    assert np.array_equal(to_numpy(pa.array([True, False, True, True]).slice(1, 2)), [False, True])


def test_to_numpy_refuses_nulls_and_text() -> None:
    with pytest.raises(ValueError, match="1 null value"):
        to_numpy(pa.array([1, None, 3]))
    with pytest.raises(TypeError, match="numeric or boolean"):
        to_numpy(pa.array(["1"]))


def test_to_datetimes_matches_pyarrow_in_any_unit() -> None:
    for unit, tz in (("us", "UTC"), ("ms", None), ("s", "Europe/Paris")):
        column = pa.chunked_array([pa.array([0, None, 1_700_000_000], pa.int64()).cast(pa.timestamp(unit, tz=tz))])
        expected = np.array(column.cast(pa.timestamp("us")).to_numpy(zero_copy_only=False), dtype="datetime64[us]")
        assert np.array_equal(to_datetimes(column.slice(1)), expected[1:], equal_nan=True)
    with pytest.raises(TypeError, match="timestamp"):
        to_datetimes(pa.array([1]))


def test_building_and_reading_does_not_import_pandas() -> None:
    pytest.importorskip("pandas")  # where pandas is missing nothing could import it
    code = (
        "import sys, numpy as np; from lookbench._util.arrow import *; "
        "t = timestamps(np.array(['NaT'], 'M8[us]')); s = strings(['a', None]); "
        "to_numpy(from_numpy(np.arange(3.0))); to_datetimes(t); "
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_rows_of_equals_a_filter_for_runs_and_scattered_rows() -> None:
    table = pa.table({"x": pa.array(np.arange(10))})
    for mask in (np.arange(10) < 0, (np.arange(10) >= 3) & (np.arange(10) < 7), np.arange(10) % 3 == 0):
        assert rows_of(table, mask).equals(table.filter(pa.array(mask))), mask
