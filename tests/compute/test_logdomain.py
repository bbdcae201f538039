"""Tests for compute.logdomain: the smooth max T·LSE(x/T), the soft-min and the
gradient check, against SciPy's logsumexp, plain Python loops (math.fsum) and
independent finite differences, with special values, dtype rules and
Hypothesis properties.

pyproject.toml turns every warning into an error, so any RuntimeWarning from
NumPy inside ``compute`` fails these tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    logsumexp,
    lse_gradient_check,
    smooth_max,
    smooth_max_curve,
    smooth_min,
    smooth_min_curve,
    softmax,
)
from tests.compute.support import INF, NAN, ref

CURVE_T = np.logspace(-2.0, 2.0, 241)



def scipy_smooth_max(x, t):
    return t * ref(sps.logsumexp, np.asarray(x, dtype=np.float64) / t)


def loop_smooth_max(x, t):
    """T log sum exp(x/T), written out with a shift and math.fsum."""
    m = max(x)
    return m + t * math.log(math.fsum(math.exp((v - m) / t) for v in x))


def loop_gradient(x, t, h=1e-6):
    """Central differences of SciPy's T·logsumexp(x/T), one coordinate at a time."""
    x = np.asarray(x, dtype=np.float64)
    out = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out.append((scipy_smooth_max(x + e, t) - scipy_smooth_max(x - e, t)) / (2 * h))
    return np.array(out)


finite_rows = hnp.arrays(np.float64, st.integers(1, 12),
                         elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
temperatures = st.floats(0.01, 100.0)


# --------------------------------------------------------------------------
# the smooth max and min
# --------------------------------------------------------------------------
@pytest.mark.parametrize("t", [0.01, 0.3, 1.0, 7.0, 100.0])
@pytest.mark.parametrize("x", [[2.0, 1.0, 0.5, -1.0], [5.2, 3.1, 1.8], [0.0], [3.0, 3.0, 3.0], [1000.0, -1000.0]])
def test_smooth_max_matches_scipy_and_a_loop(x, t):
    got = float(smooth_max(x, t))
    assert got == pytest.approx(scipy_smooth_max(x, t), rel=1e-13, abs=1e-13)
    assert got == pytest.approx(loop_smooth_max(x, t), rel=1e-13, abs=1e-13)
    assert float(smooth_min(x, t)) == pytest.approx(-scipy_smooth_max(-np.asarray(x), t), rel=1e-13, abs=1e-13)


def test_smooth_max_at_t1_is_logsumexp_and_limits():
    x = np.array([2.0, 1.0, 0.5, -1.0])
    assert float(smooth_max(x)) == pytest.approx(float(logsumexp(x)), rel=1e-15)
    assert float(smooth_max(x, 1e-3)) == 2.0  # T -> 0: the max itself
    assert float(smooth_min(x, 1e-3)) == -1.0
    # T -> infinity: max + T ln K - (max - mean) ...: the gap to the upper bound tends to max - mean
    t = 1e6
    assert float(smooth_max(x, t)) - (2.0 + t * math.log(4)) == pytest.approx(x.mean() - 2.0, abs=1e-6)
    assert float(smooth_max([3.0, 3.0, 3.0], 2.0)) == 3.0 + 2.0 * math.log(3)  # equal scores: the upper bound


@settings(max_examples=200, deadline=None)
@given(x=finite_rows, t=temperatures)
def test_bounds_hold_exactly(x, t):
    k = len(x)
    hi = float(smooth_max(x, t))
    lo = float(smooth_min(x, t))
    assert x.max() <= hi <= x.max() + t * math.log(k) + 1e-12 * (1 + abs(x.max()))
    assert x.min() - t * math.log(k) - 1e-12 * (1 + abs(x.min())) <= lo <= x.min()
    assert hi == pytest.approx(scipy_smooth_max(x, t), rel=1e-12, abs=1e-12)


def test_huge_scores_and_temperatures_do_not_overflow():
    assert float(smooth_max([1e308, 1e308])) == 1e308
    assert float(smooth_max([1e308, -1e308], 0.01)) == 1e308  # x / T alone would overflow
    assert float(smooth_max([1e308, 1e308], 1e300)) == pytest.approx(1e308 + 1e300 * math.log(2))
    assert float(smooth_min([-1e308, 1e308], 0.01)) == -1e308
    # beyond float64: inf, the honest answer
    assert float(smooth_max([1.5e308, 1.5e308], 1e308)) == INF


@pytest.mark.parametrize(
    ("x", "expected_max", "expected_min"),
    [
        ([1.0, INF, 0.0], INF, 0.0 - 1.0 * math.log(1 + math.e ** -1)),  # +inf drops out of the min
        ([1.0, -INF, 0.0], 1.0 + math.log(1 + math.e ** -1), -INF),
        ([-INF, -INF], -INF, -INF),
        ([INF, INF], INF, INF),
        ([1.0, NAN], NAN, NAN),
        ([], -INF, INF),
    ],
)
def test_special_values(x, expected_max, expected_min):
    got_max, got_min = float(smooth_max(x)), float(smooth_min(x))
    for got, want in ((got_max, expected_max), (got_min, expected_min)):
        if math.isnan(want):
            assert math.isnan(got)
        else:
            assert got == pytest.approx(want, rel=1e-15)


def test_axis_dtypes_and_validation():
    x = np.arange(12.0).reshape(3, 4) / 3
    along0 = smooth_max(x, 0.5, axis=0)
    assert along0.shape == (4,)
    np.testing.assert_array_equal(along0, [float(smooth_max(x[:, j], 0.5)) for j in range(4)])
    assert smooth_max(np.float32([1, 2]), 0.5).dtype == np.float32
    assert smooth_max(np.float16([1, 2])).dtype == np.float16
    assert smooth_max([1, 2]).dtype == np.float64
    # a temperature outside float32's range: no 0 * inf = NaN
    assert float(smooth_max(np.float32([1.0]), 1e50)) == 1.0
    assert float(smooth_max(np.float32([1.0, 2.0]), 1e-50)) == 2.0
    with pytest.raises(ValueError, match="temperature"):
        smooth_max([1.0], 0.0)
    with pytest.raises(TypeError):
        smooth_max(["a"])


# --------------------------------------------------------------------------
# curves over T
# --------------------------------------------------------------------------
@pytest.mark.parametrize("x", [[2.0, 1.0, 0.5, -1.0], [7.0], [1e300, -1e300, 0.0], [1.0, -INF, 2.0],
                               [1.0, INF], [NAN, 1.0]])
def test_curve_is_one_call_per_temperature_to_the_bit(x):
    curve = smooth_max_curve(x, CURVE_T)
    loop = np.array([float(smooth_max(x, t)) for t in CURVE_T])
    assert np.array_equal(curve, loop, equal_nan=True)
    mins = smooth_min_curve(x, CURVE_T)
    assert np.array_equal(mins, [float(smooth_min(x, t)) for t in CURVE_T], equal_nan=True)


def test_curve_validates():
    with pytest.raises(ValueError, match="one row"):
        smooth_max_curve(np.zeros((2, 2)), [1.0])
    with pytest.raises(ValueError, match="temperature"):
        smooth_max_curve([1.0], [1.0, -1.0])
    assert smooth_max_curve([1.0], []).shape == (0,)
    assert smooth_max_curve(np.float32([1.0, 2.0]), [0.5, 2.0]).dtype == np.float32


# --------------------------------------------------------------------------
# the gradient is softmax
# --------------------------------------------------------------------------
@pytest.mark.parametrize("t", [0.01, 0.2, 1.0, 5.0, 100.0])
def test_gradient_check_agrees_with_softmax_and_scipy_differences(t):
    x = np.array([2.0, 1.0, 0.5, -1.0])
    probs, fd = lse_gradient_check(x, t)
    assert np.array_equal(probs, softmax(x, temperature=t))
    np.testing.assert_allclose(fd, probs, atol=1e-9)
    np.testing.assert_allclose(fd, loop_gradient(x, t, h=1e-6 * t), atol=1e-6)


@settings(max_examples=150, deadline=None)
@given(x=finite_rows, t=temperatures)
def test_softmax_is_the_gradient_of_lse(x, t):
    probs, fd = lse_gradient_check(x, t)
    np.testing.assert_allclose(fd, probs, atol=1e-7)


def test_gradient_check_special_values():
    p, fd = lse_gradient_check([1e12, 0.0, 1e12 - 1])  # a step of 1e-5 would vanish next to 1e12
    np.testing.assert_allclose(fd, p, atol=1e-9)
    p, fd = lse_gradient_check([1.0, -INF, 0.0])
    assert p[1] == 0.0 and math.isnan(fd[1])  # -inf cannot be perturbed
    np.testing.assert_allclose(fd[[0, 2]], p[[0, 2]], atol=1e-9)
    for row in ([1.0, INF, 0.0], [NAN, 1.0], [-INF, -INF]):
        _p, fd = lse_gradient_check(row)
        assert np.isnan(fd).all()
    p, fd = lse_gradient_check([3.0])
    assert p.tolist() == [1.0] and fd[0] == pytest.approx(1.0, abs=1e-10)
    p, fd = lse_gradient_check(np.float32([1.0, 2.0]))
    assert p.dtype == fd.dtype == np.float64
    assert lse_gradient_check([])[1].shape == (0,)
    with pytest.raises(ValueError, match="step"):
        lse_gradient_check([1.0], step=0.0)
    with pytest.raises(ValueError, match="one row"):
        lse_gradient_check(np.zeros((2, 2)))
