"""softmax_over_temperatures checks a valid temperature array in one pass; a bad entry raises as check_temperature."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from compute import check_temperature

ROW = np.array([1.0, -2.0, 0.5, 3.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=6))
def test_the_same_error_or_the_same_rows_as_one_softmax_per_temperature(ts):
    first_bad = next((t for t in ts if not (np.isfinite(t) and t > 0)), None)
    if first_bad is not None:
        with pytest.raises(ValueError) as expected:
            check_temperature(first_bad)
        with pytest.raises(ValueError) as got:
            compute.softmax_over_temperatures(ROW, ts)
        assert str(got.value) == str(expected.value)
        return
    rows = compute.softmax_over_temperatures(ROW, ts)
    reference = np.array([compute.softmax(ROW, temperature=t) for t in ts])
    np.testing.assert_array_equal(rows, reference)


def test_a_scalar_temperature_is_refused_as_before():
    with pytest.raises(TypeError):
        compute.softmax_over_temperatures(ROW, 2.0)
