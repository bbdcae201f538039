"""SSMax and log-n scaling skip the zero-factor masking when the factor is not 0: the same bits as before.

The reference is the formula the shortcut replaced, written out here: softmax of
``where(f == 0, where(isnan(a) | (a == -inf), a, 0), a * f)`` in the row's working dtype.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import compute


def reference(x: np.ndarray, factor: float, axis: int = -1) -> np.ndarray:
    a = np.asarray(x)
    work = np.float32 if a.dtype == np.float16 else a.dtype
    a = a.astype(work)
    f = np.asarray(factor, dtype=work)
    with np.errstate(all="ignore"):
        z = np.where(f == 0, np.where(np.isnan(a) | (a == -np.inf), a, 0.0), a * f)
    return compute.softmax(z.astype(work), axis=axis).astype(x.dtype)


VALUES = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0]))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([np.float64, np.float32, np.float16]),
       st.integers(1, 3), st.integers(1, 30), st.data())
def test_ssmax_and_logn_give_the_bits_of_the_masked_formula(dtype, rows, n, data):
    with np.errstate(over="ignore"):  # a float16 row holds ±inf where float64's numbers are too large for it
        x = data.draw(arrays(np.float64, (rows, n), elements=VALUES)).astype(dtype)
    s = data.draw(st.floats(0.01, 5.0))
    factor = s * math.log(n)
    np.testing.assert_array_equal(compute.ssmax(x, s), reference(x, factor))
    length = data.draw(st.integers(2, 40))
    factor = math.log(n) / math.log(length) if n > length else 1.0
    np.testing.assert_array_equal(compute.logn_softmax(x, length), reference(x, factor))


def test_a_zero_factor_still_ties_everything_but_nan_and_minus_inf():
    x = np.array([[3.0, -np.inf, 1.0]])
    np.testing.assert_array_equal(compute.ssmax(x, 1.0, n=1), [[0.5, 0.0, 0.5]])  # log 1 = 0
    np.testing.assert_array_equal(compute.ssmax(x.T, 0.5, axis=0), reference(x.T, 0.5 * math.log(3), axis=0))
