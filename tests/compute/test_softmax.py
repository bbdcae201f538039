"""Tests for compute.softmax: SciPy agreement, hand values, special values,
dtype rules, temperature validation, naive_softmax, softmax_steps and
Hypothesis properties.

pyproject.toml turns every warning into an error, so any RuntimeWarning from
NumPy inside ``compute`` fails these tests.  SciPy reference values are
computed with warnings silenced: only *our* code has to be warning-free.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    SoftmaxSteps,
    check_temperature,
    entropy,
    log_softmax,
    logsumexp,
    naive_softmax,
    perplexity,
    softmax,
    softmax_steps,
)
from tests.compute.support import EPS, FLOAT_DTYPES, INF, NAN, ref

# --------------------------------------------------------------------------
# agreement with SciPy
# --------------------------------------------------------------------------
SHAPES_AXES = [
    ((1,), -1),
    ((7,), 0),
    ((3, 5), -1),
    ((3, 5), 0),
    ((2, 3, 4), 1),
    ((2, 3, 4), -1),
    ((2, 3, 4), 0),
    ((4, 1, 3), 1),
]


@pytest.mark.parametrize(("shape", "axis"), SHAPES_AXES)
@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0, 1e4, 1e300])
@pytest.mark.parametrize("temperature", [1.0, 0.3, 7.0])
def test_matches_scipy_float64(shape, axis, scale, temperature):
    rng = np.random.default_rng(abs(hash((shape, axis, scale))) % 2**32)
    x = rng.standard_normal(shape) * scale
    z = x / temperature
    np.testing.assert_allclose(
        softmax(x, axis=axis, temperature=temperature),
        ref(sps.softmax, z, axis=axis),
        rtol=1e-12,
        atol=1e-300,
    )
    np.testing.assert_allclose(
        log_softmax(x, axis=axis, temperature=temperature),
        ref(sps.log_softmax, z, axis=axis),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        logsumexp(x, axis=axis), ref(sps.logsumexp, x, axis=axis), rtol=1e-13
    )


@pytest.mark.parametrize(("shape", "axis"), SHAPES_AXES)
@pytest.mark.parametrize("scale", [1e-2, 1.0, 30.0, 1e30])
def test_matches_scipy_float32(shape, axis, scale):
    rng = np.random.default_rng(abs(hash((shape, axis, scale, 32))) % 2**32)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    x64 = x.astype(np.float64)
    for got, want in [
        (softmax(x, axis=axis), ref(sps.softmax, x64, axis=axis)),
        (softmax(x, axis=axis, temperature=0.5), ref(sps.softmax, x64 / 0.5, axis=axis)),
    ]:
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    got = log_softmax(x, axis=axis)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got, ref(sps.log_softmax, x64, axis=axis), rtol=1e-5, atol=1e-5
    )
    got = logsumexp(x, axis=axis)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got, ref(sps.logsumexp, x64, axis=axis), rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize(("shape", "axis"), SHAPES_AXES)
@pytest.mark.parametrize("scale", [0.1, 3.0, 1000.0])
def test_float16_close_to_float32_reference(shape, axis, scale):
    rng = np.random.default_rng(abs(hash((shape, axis, scale, 16))) % 2**32)
    x = (rng.standard_normal(shape) * scale).astype(np.float16)
    x32 = x.astype(np.float32)  # the same (float16-rounded) numbers
    tol = float(np.finfo(np.float16).eps)
    got = softmax(x, axis=axis)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, ref(sps.softmax, x32, axis=axis), rtol=tol, atol=tol)
    got = log_softmax(x, axis=axis)
    assert got.dtype == np.float16
    np.testing.assert_allclose(
        got, ref(sps.log_softmax, x32, axis=axis), rtol=tol, atol=tol
    )
    got = logsumexp(x, axis=axis)
    assert got.dtype == np.float16
    np.testing.assert_allclose(
        got, ref(sps.logsumexp, x32, axis=axis), rtol=tol, atol=tol
    )


def test_logsumexp_special_rows_match_scipy():
    x = np.array(
        [[1.0, INF, 2.0], [-INF, -INF, -INF], [NAN, 1.0, 2.0], [1e308, 1e308, 0.0]]
    )
    got = logsumexp(x)
    np.testing.assert_array_equal(got, ref(sps.logsumexp, x, axis=-1))
    assert got.tolist()[:2] == [INF, -INF]
    assert np.isnan(got[2])
    assert np.isfinite(got[3])
    assert logsumexp(x, axis=0).shape == (3,)


# --------------------------------------------------------------------------
# hand values (the numbers quoted in the app's texts)
# --------------------------------------------------------------------------
def test_hand_values_four_scores():
    s = [2.0, 1.0, 0.5, -1.0]
    np.testing.assert_array_equal(np.round(softmax(s), 3), [0.609, 0.224, 0.136, 0.030])
    steps = softmax_steps(s)
    np.testing.assert_array_equal(
        np.round(np.exp(steps.scores), 3), [7.389, 2.718, 1.649, 0.368]
    )


def test_hand_values_three_scores():
    s = [2.0, 1.0, 0.1]
    steps = softmax_steps(s)
    np.testing.assert_array_equal(np.round(steps.probs, 3), [0.659, 0.242, 0.099])
    # The texts quote 11.212: e^2 + e^1 + e^0.1 = 11.21251 (truncated, not rounded).
    total = float(np.exp(steps.scores).sum())
    assert math.floor(total * 1000) / 1000 == 11.212
    assert total == pytest.approx(11.2125, abs=5e-5)
    # The shifted exps are the unshifted ones divided by e^max.
    np.testing.assert_allclose(steps.exps * math.exp(2.0), np.exp(steps.scores))
    np.testing.assert_allclose(np.exp(steps.scores) / 11.212, steps.probs, atol=1e-4)


@pytest.mark.parametrize(
    ("temperature", "percent"),
    [(1.0, [86.5, 10.6, 2.9]), (0.5, [98.4, 1.5, 0.1]), (2.0, [65.2, 22.8, 11.9])],
)
def test_hand_values_temperature(temperature, percent):
    s = [5.2, 3.1, 1.8]
    p = softmax(s, temperature=temperature)
    np.testing.assert_array_equal(np.round(100 * p, 1), percent)
    np.testing.assert_array_equal(
        np.round(100 * softmax_steps(s, temperature).probs, 1), percent
    )


def test_hand_values_exps():
    e = np.exp(softmax_steps([5.2, 3.1, 1.8]).scores)
    np.testing.assert_array_equal(np.round(e, 1), [181.3, 22.2, 6.0])
    assert round(float(e.sum()), 1) == 209.5


def test_log_softmax_hand_values():
    np.testing.assert_allclose(log_softmax([1000.0, 0.0]), [0.0, -1000.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(log_softmax([0.0, 0.0]), [-math.log(2)] * 2, rtol=1e-15)
    assert float(logsumexp([0.0, 0.0])) == pytest.approx(math.log(2), rel=1e-15)
    assert float(logsumexp([1000.0, 1000.0])) == pytest.approx(1000 + math.log(2), rel=1e-15)


def test_entropy_perplexity_hand_values():
    assert float(entropy([1.0, 0.0, 0.0])) == 0.0
    assert float(perplexity([1.0, 0.0, 0.0])) == 1.0
    assert float(entropy([0.25] * 4)) == pytest.approx(math.log(4), rel=1e-15)
    assert float(perplexity([0.25] * 4)) == pytest.approx(4.0, rel=1e-15)
    assert float(entropy([0.5, 0.5, 0.0])) == pytest.approx(math.log(2), rel=1e-15)
    p = softmax([[2.0, 1.0, 0.1], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(entropy(p), ref(sps.entr, p).sum(axis=-1), rtol=1e-14)
    np.testing.assert_allclose(entropy(p.T, axis=0), entropy(p), rtol=1e-15)
    assert entropy(p).shape == (2,)
    assert np.isnan(entropy([0.5, NAN]))
    assert entropy([0.5, -0.1]) == -INF  # not a probability: like scipy.special.entr


# --------------------------------------------------------------------------
# special values
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_neg_inf_gets_exactly_zero(dtype):
    x = np.array([1.0, -INF, 0.5, -INF], dtype=dtype)
    p = softmax(x)
    assert p[1] == 0.0 and p[3] == 0.0
    np.testing.assert_allclose(p[[0, 2]], softmax(x[[0, 2]]), rtol=EPS[np.dtype(dtype)])
    lp = log_softmax(x)
    assert lp[1] == -INF and lp[3] == -INF
    assert np.all(np.isfinite(lp[[0, 2]]))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pos_inf_shares_mass(dtype):
    x = np.array([INF, 3.0, INF, -INF, INF, 1e4], dtype=dtype)
    for t in (1.0, 0.01, 100.0):
        p = softmax(x, temperature=t)
        assert p.dtype == dtype
        np.testing.assert_array_equal(p, np.array([1, 0, 1, 0, 1, 0], dtype=dtype) / dtype(3))
        lp = log_softmax(x, temperature=t)
        want = np.array([-math.log(3), -INF, -math.log(3), -INF, -math.log(3), -INF])
        np.testing.assert_allclose(lp, want.astype(dtype), rtol=EPS[np.dtype(dtype)])
    np.testing.assert_array_equal(softmax([INF, 0.0]), [1.0, 0.0])
    np.testing.assert_array_equal(log_softmax([INF, 0.0]), [0.0, -INF])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "row",
    [[-INF, -INF, -INF], [NAN, 1.0, 2.0], [NAN, INF, 1.0], [NAN, -INF, -INF], [NAN]],
)
def test_bad_rows_are_all_nan(dtype, row):
    x = np.array(row, dtype=dtype)
    assert np.all(np.isnan(softmax(x)))
    assert np.all(np.isnan(log_softmax(x)))
    assert np.all(np.isnan(softmax(x, temperature=0.1)))


def test_only_bad_rows_are_nan_in_2d():
    x = np.array(
        [
            [1.0, 2.0, 3.0],
            [NAN, 2.0, 3.0],
            [-INF, -INF, -INF],
            [-INF, 0.0, INF],
            [1e308, -1e308, 0.0],
        ]
    )
    p = softmax(x)
    bad = np.all(np.isnan(p), axis=1)
    np.testing.assert_array_equal(bad, [False, True, True, False, False])
    assert not np.isnan(p[~bad]).any()
    np.testing.assert_allclose(p[0], ref(sps.softmax, x[0]), rtol=1e-15)
    np.testing.assert_array_equal(p[3], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(p[4], [1.0, 0.0, 0.0])
    # Same along axis 0: the bad *columns* are NaN, the others are not.
    pt = softmax(x.T, axis=0)
    np.testing.assert_array_equal(pt, p.T)
    lp = log_softmax(x)
    np.testing.assert_array_equal(np.all(np.isnan(lp), axis=1), bad)
    np.testing.assert_array_equal(log_softmax(x.T, axis=0), lp.T)


def test_no_warnings_on_nasty_input():
    """Explicit (besides pyproject's filterwarnings=error): nothing warns."""
    nasty = [
        [1e308, -1e308, 0.0],
        [INF, INF, -INF],
        [-INF, -INF, -INF],
        [NAN, 1.0, INF],
        [0.0, -1e308, 1e-320],
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in FLOAT_DTYPES:
            with np.errstate(all="ignore"):
                x = np.array(nasty, dtype=dtype)  # the cast itself may overflow
            for t in (1.0, 1e-300, 0.5, 1e300):
                softmax(x, temperature=t)
                softmax(x, axis=0, temperature=t)
                log_softmax(x, temperature=t)
                softmax_steps(x[0], temperature=t)
            logsumexp(x)
            naive_softmax(x)
            entropy(x)
            perplexity(x)
        naive_softmax(np.float16([12.0, 0.0]))
        naive_softmax(np.float32([100.0, 0.0]))
        naive_softmax([1000.0, -1000.0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_finite_extremes_never_nan(dtype):
    big = float(np.finfo(dtype).max)
    x = np.array([big, -big, 0.0, big], dtype=dtype)
    for t in (1.0, 0.5, 1e-30, 1e-300, 1e30, 1e300):
        p = softmax(x, temperature=t)
        assert p.dtype == dtype
        assert not np.isnan(p).any()
        assert abs(float(p.astype(np.float64).sum()) - 1.0) <= 2 * EPS[np.dtype(dtype)]
        lp = log_softmax(x, temperature=t)
        assert not np.isnan(lp).any()
    np.testing.assert_array_equal(softmax(x), np.array([0.5, 0, 0, 0.5], dtype=dtype))


def test_tiny_temperature_does_not_overflow_to_a_tie():
    # 1e308 / 0.5 would overflow to inf; the shift-first formula keeps the
    # true one-hot limit, and a near tie stays a near tie.
    np.testing.assert_array_equal(softmax([1e308, 0.0], temperature=0.5), [1.0, 0.0])
    p = softmax([1e308, 1e308 * 0.999], temperature=0.5)
    np.testing.assert_array_equal(p, [1.0, 0.0])  # the gap is ~1e305 / 0.5
    a, b = 1e308, 1e308 - 1e292
    gap = a - b  # exact (Sterbenz), ~1e292
    p = softmax([a, b], temperature=gap)  # a genuine 1-vs-0 contest
    np.testing.assert_allclose(p, ref(sps.softmax, np.array([1.0, 0.0])), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("t", [1e-50, 1e-300, 1e50, 1e300, 5e-324])
def test_temperature_outside_dtype_range(dtype, t):
    x = np.array([1.0, 2.0, 2.0, -INF], dtype=dtype)
    p = softmax(x, temperature=t)
    assert p.dtype == dtype
    assert not np.isnan(p).any()
    want = [0.0, 0.5, 0.5, 0.0] if t < 1 else [1 / 3, 1 / 3, 1 / 3, 0.0]
    np.testing.assert_allclose(p, want, atol=EPS[np.dtype(dtype)])


# --------------------------------------------------------------------------
# temperature validation
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "text"),
    [(0, "0"), (0.0, "0.0"), (-1.0, "-1.0"), (NAN, "nan"), (INF, "inf"), (-INF, "-inf"),
     (np.float32(-2.5), "-2.5"), (np.float64(NAN), "nan")],
)
@pytest.mark.parametrize(
    "fn",
    [check_temperature, lambda t: softmax([1.0, 2.0], temperature=t),
     lambda t: log_softmax([1.0, 2.0], temperature=t),
     lambda t: softmax_steps([1.0, 2.0], t)],
)
def test_bad_temperature(fn, bad, text):
    with pytest.raises(ValueError, match="temperature") as info:
        fn(bad)
    assert str(info.value) == f"temperature must be finite and > 0, got {text}"


@pytest.mark.parametrize("bad", ["1.0", None, 1j, True, [1.0], np.ones(2)])
def test_non_real_temperature_is_type_error(bad):
    with pytest.raises(TypeError, match="temperature must be a real number"):
        check_temperature(bad)


@pytest.mark.parametrize(
    "good", [1, 0.5, 1e-300, 1e300, np.float16(2), np.int64(3), np.array(0.25)]
)
def test_good_temperature(good):
    t = check_temperature(good)
    assert type(t) is float
    assert t == float(good)


# --------------------------------------------------------------------------
# dtype rules and shapes
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_dtype_preserved(dtype):
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], dtype=dtype)
    assert softmax(x).dtype == dtype
    assert log_softmax(x).dtype == dtype
    assert logsumexp(x).dtype == dtype
    assert naive_softmax(x).dtype == dtype
    assert entropy(softmax(x)).dtype == dtype
    assert perplexity(softmax(x)).dtype == dtype
    steps = softmax_steps(x[0])
    for field in ("scores", "scaled", "shifted", "exps", "probs", "log_probs"):
        assert getattr(steps, field).dtype == np.float64


@pytest.mark.parametrize(
    "x", [[1, 2, 3], np.array([1, 2, 3], dtype=np.int8), np.array([1, 2, 3], dtype=np.uint64),
          [True, False, True], [1.0, 2.0, 3.0]]
)
def test_ints_bools_lists_become_float64(x):
    for fn in (softmax, log_softmax, naive_softmax, logsumexp, entropy, perplexity):
        assert fn(x).dtype == np.float64
    np.testing.assert_array_equal(softmax(x), softmax(np.asarray(x, dtype=np.float64)))


@pytest.mark.parametrize(
    "bad", [np.array([1 + 2j, 3]), [1j, 2], np.array([1.0, None], dtype=object),
            ["a", "b"], np.array(["2020-01-01"], dtype="datetime64[D]")]
)
def test_non_real_input_is_type_error(bad):
    for fn in (softmax, log_softmax, logsumexp, naive_softmax, entropy, perplexity,
               softmax_steps):
        with pytest.raises(TypeError):
            fn(bad)
    with pytest.raises(TypeError, match="complex"):
        softmax(np.array([1 + 2j]))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_zero_d_is_a_one_element_vector(dtype):
    x = np.array(3.0, dtype=dtype)
    for fn in (softmax, naive_softmax):
        out = fn(x, axis=5)  # axis is ignored for 0-d input
        assert out.shape == () and out.dtype == dtype and out == 1.0
    out = log_softmax(x)
    assert out.shape == () and out == 0.0
    out = logsumexp(x)
    assert out.shape == () and out.dtype == dtype and out == 3.0
    assert entropy(np.array(1.0, dtype=dtype)) == 0.0
    assert np.isnan(softmax(np.array(NAN, dtype=dtype)))
    assert softmax(np.array(INF, dtype=dtype)) == 1.0
    assert softmax(3) == 1.0 and softmax(3).dtype == np.float64


def test_empty_inputs():
    assert softmax(np.empty((2, 0))).shape == (2, 0)
    assert log_softmax(np.empty((0, 3)), axis=0).shape == (0, 3)
    assert softmax(np.empty((0, 3))).shape == (0, 3)
    np.testing.assert_array_equal(logsumexp(np.empty((2, 0))), [-INF, -INF])
    np.testing.assert_array_equal(entropy(np.empty((2, 0))), [0.0, 0.0])


def test_axis_errors():
    with pytest.raises(np.exceptions.AxisError):
        softmax([[1.0, 2.0]], axis=2)
    with pytest.raises(np.exceptions.AxisError):
        logsumexp([1.0, 2.0], axis=-2)


def test_input_not_modified_and_output_fresh():
    x = np.array([[3.0, 1.0], [2.0, INF]])
    keep = x.copy()
    p = softmax(x)
    np.testing.assert_array_equal(x, keep)
    assert not np.shares_memory(p, x)
    assert softmax(x, axis=0).flags.c_contiguous
    # Non-contiguous views work and give the same bits as a contiguous copy.
    big = np.random.default_rng(1).normal(size=(6, 40)) * 5
    view = big[::2, ::3]
    np.testing.assert_array_equal(softmax(view, axis=0), softmax(view.copy(), axis=0))


# --------------------------------------------------------------------------
# naive_softmax
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_naive_matches_stable_for_small_inputs(dtype):
    x = np.array([[2.0, 1.0, 0.5, -1.0], [0.1, 0.2, -3.0, 4.0]], dtype=dtype)
    tol = 2 * EPS[np.dtype(dtype)]
    np.testing.assert_allclose(naive_softmax(x), softmax(x), rtol=tol, atol=tol)
    np.testing.assert_allclose(naive_softmax(x.T, axis=0), softmax(x.T, axis=0), rtol=tol, atol=tol)


def test_naive_overflow_shows():
    p = naive_softmax(np.float32([100.0, 0.0]))
    assert p.dtype == np.float32
    assert np.isnan(p[0]) and p[1] == 0.0
    p16 = naive_softmax(np.float16([12.0, 0.0]))  # e^12 > 65504: inf in float16
    assert p16.dtype == np.float16
    assert np.isnan(p16[0]) and p16[1] == 0.0
    assert not np.isnan(naive_softmax(np.float16([11.0, 0.0]))).any()  # e^11 fits
    assert np.isnan(naive_softmax([1000.0, 0.0])[0])  # float64 overflows at ~709
    # The stable version has none of that.
    np.testing.assert_allclose(
        softmax(np.float16([12.0, 0.0])), [1.0, math.exp(-12)], rtol=1e-3
    )
    p32 = softmax(np.float32([100.0, 0.0]))
    assert p32[0] == 1.0 and 0.0 < p32[1] < 1e-40  # e^-100, a float32 subnormal


def test_naive_underflow_shows():
    p = naive_softmax([-1000.0, -1001.0])  # every exp underflows to 0: 0/0
    assert np.all(np.isnan(p))
    assert not np.isnan(softmax([-1000.0, -1001.0])).any()


# --------------------------------------------------------------------------
# softmax_steps
# --------------------------------------------------------------------------
def test_steps_fields_and_immutability():
    steps = softmax_steps([5.2, 3.1, 1.8], temperature=0.5)
    assert isinstance(steps, SoftmaxSteps)
    np.testing.assert_array_equal(steps.scores, [5.2, 3.1, 1.8])
    np.testing.assert_array_equal(steps.scaled, np.array([5.2, 3.1, 1.8]) / 0.5)
    np.testing.assert_allclose(steps.shifted, steps.scaled - steps.scaled.max(), atol=1e-15)
    assert steps.shifted.max() == 0.0
    np.testing.assert_array_equal(steps.exps, np.exp(steps.shifted))
    assert type(steps.total) is float and steps.total == float(steps.exps.sum())
    np.testing.assert_array_equal(steps.probs, steps.exps / steps.total)
    np.testing.assert_array_equal(steps.log_probs, steps.shifted - np.log(steps.total))
    assert steps.temperature == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps.total = 2.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        steps.probs[0] = 1.0


@pytest.mark.parametrize("bad", [[], [[1.0, 2.0]], np.zeros((2, 2)), 3.0])
def test_steps_rejects_non_rows(bad):
    with pytest.raises(ValueError):
        softmax_steps(bad)


@pytest.mark.parametrize(
    "row",
    [[1.0, -INF, 2.0], [INF, 1.0, INF, -INF], [-INF, -INF], [NAN, 1.0], [NAN, INF],
     [1e308, -1e308, 0.0]],
)
@pytest.mark.parametrize("t", [1.0, 0.5, 1e-300])
def test_steps_special_values_match_softmax(row, t):
    steps = softmax_steps(row, t)
    np.testing.assert_array_equal(steps.probs, softmax(np.float64(row), temperature=t))
    np.testing.assert_array_equal(steps.log_probs, log_softmax(np.float64(row), temperature=t))
    x = np.array(row)
    if np.isnan(x).any():
        assert np.all(np.isnan(steps.shifted)) and math.isnan(steps.total)
    elif np.all(x == -INF):
        assert np.all(steps.shifted == -INF) and steps.total == 0.0
    else:
        assert steps.shifted.max() == 0.0
        k = np.count_nonzero(x == INF)
        assert steps.total == k if k else steps.total >= 1.0
    np.testing.assert_array_equal(steps.exps[x == -INF], 0.0)


def test_steps_pos_inf_details():
    steps = softmax_steps([INF, 1.0, INF, -INF])
    np.testing.assert_array_equal(steps.shifted, [0.0, -INF, 0.0, -INF])
    np.testing.assert_array_equal(steps.exps, [1.0, 0.0, 1.0, 0.0])
    assert steps.total == 2.0
    np.testing.assert_array_equal(steps.probs, [0.5, 0.0, 0.5, 0.0])


@pytest.mark.parametrize("n", [1, 5, 9, 129, 10_000])
def test_steps_bit_identical_for_each_axis(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(3, n)) * 20
    for t in (1.0, 0.37, 3.0):
        p_rows = softmax(x, temperature=t)
        p_cols = softmax(np.asfortranarray(x.T), axis=0, temperature=t)
        lp_rows = log_softmax(x, temperature=t)
        for i in range(3):
            steps = softmax_steps(x[i], t)
            assert np.array_equal(steps.probs, p_rows[i])
            assert np.array_equal(steps.probs, p_cols[:, i])
            assert np.array_equal(steps.log_probs, lp_rows[i])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
def test_steps_work_in_float64(dtype):
    row = np.array([3, 1, -2], dtype=dtype)
    steps = softmax_steps(row)
    assert np.array_equal(steps.probs, softmax(row.astype(np.float64)))


# --------------------------------------------------------------------------
# Hypothesis properties
# --------------------------------------------------------------------------
FINITE = {
    np.float64: st.floats(allow_nan=False, allow_infinity=False),  # up to ±1.8e308
    np.float32: st.floats(width=32, allow_nan=False, allow_infinity=False),
    np.float16: st.floats(width=16, allow_nan=False, allow_infinity=False),
}
MODERATE = st.floats(-50, 50, allow_nan=False)
TEMPERATURES = st.one_of(
    st.just(1.0),
    st.floats(1e-3, 1e3),
    st.floats(min_value=5e-324, max_value=1e300, allow_subnormal=True),
)


@st.composite
def finite_arrays(draw, dtypes=tuple(FINITE), max_dims=3):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=max_dims, min_side=1, max_side=6))
    return draw(hnp.arrays(dtype, shape, elements=FINITE[dtype]))


@st.composite
def rows(draw, elements=MODERATE, min_size=1, max_size=12):
    n = draw(st.integers(min_size, max_size))
    return draw(hnp.arrays(np.float64, n, elements=elements))


def axis_for(draw, x):
    return draw(st.integers(-x.ndim, x.ndim - 1))


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_prop_finite_input_gives_a_distribution(data):
    x = data.draw(finite_arrays())
    axis = axis_for(data.draw, x)
    t = data.draw(TEMPERATURES)
    p = softmax(x, axis=axis, temperature=t)
    assert p.dtype == x.dtype and p.shape == x.shape
    assert not np.isnan(p).any()
    assert np.all((p >= 0) & (p <= 1))
    n = x.shape[axis]
    total = p.astype(np.float64).sum(axis=axis)
    eps = EPS[x.dtype]
    np.testing.assert_allclose(total, 1.0, rtol=0, atol=(n + 1) * eps)
    lp = log_softmax(x, axis=axis, temperature=t)
    assert not np.isnan(lp).any() and np.all(lp <= 0)
    lse = logsumexp(x, axis=axis)
    assert not np.isnan(lse).any()


@settings(max_examples=200, deadline=None)
@given(x=finite_arrays(), t=TEMPERATURES)
def test_prop_order_preserved(x, t):
    row = x.reshape(-1)
    p = softmax(row, temperature=t)
    bigger = row[:, None] > row[None, :]  # bigger[i, j]: x_i > x_j
    assert np.all((p[:, None] >= p[None, :])[bigger])


@settings(max_examples=200, deadline=None)
@given(x=rows(), c=st.floats(-1e3, 1e3), t=st.floats(0.1, 10))
def test_prop_shift_invariance(x, c, t):
    np.testing.assert_allclose(
        softmax(x + c, temperature=t), softmax(x, temperature=t), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        log_softmax(x + c, temperature=t), log_softmax(x, temperature=t), rtol=1e-9, atol=1e-9
    )


@settings(max_examples=200, deadline=None)
@given(x=rows(elements=FINITE[np.float64]), t=TEMPERATURES)
def test_prop_log_softmax_is_log_of_softmax(x, t):
    p = softmax(x, temperature=t)
    lp = log_softmax(x, temperature=t)
    ok = p > 1e-300
    assert ok.any()
    np.testing.assert_allclose(lp[ok], np.log(p[ok]), rtol=1e-12, atol=1e-12)
    assert np.all(lp[p == 0] < -700) or not (p == 0).any()


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_prop_logsumexp_matches_scipy(data):
    x = data.draw(finite_arrays(dtypes=(np.float64,)))
    axis = axis_for(data.draw, x)
    np.testing.assert_allclose(
        logsumexp(x, axis=axis), ref(sps.logsumexp, x, axis=axis), rtol=1e-13, atol=1e-13
    )
    np.testing.assert_allclose(
        softmax(x, axis=axis), ref(sps.softmax, x, axis=axis), rtol=1e-12, atol=1e-300
    )


@settings(max_examples=200, deadline=None)
@given(x=rows(elements=FINITE[np.float64]), t=TEMPERATURES)
def test_prop_entropy_and_perplexity_bounds(x, t):
    p = softmax(x, temperature=t)
    n = x.size
    h = float(entropy(p))
    assert 0.0 <= h <= math.log(n) + 1e-12
    ppl = float(perplexity(p))
    assert 1.0 <= ppl <= n * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(x=rows(min_size=2))
def test_prop_entropy_non_decreasing_in_temperature(x):
    temps = np.geomspace(0.01, 100.0, 60)
    h = np.array([float(entropy(softmax(x, temperature=t))) for t in temps])
    assert np.all(np.diff(h) >= -1e-12)


@settings(max_examples=200, deadline=None)
@given(x=rows(elements=FINITE[np.float64], max_size=40), t=TEMPERATURES)
def test_prop_steps_bit_identical(x, t):
    steps = softmax_steps(x, t)
    assert np.array_equal(steps.probs, softmax(x, temperature=t))
    assert np.array_equal(steps.log_probs, log_softmax(x, temperature=t))
    assert steps.exps.sum() == steps.total
    assert steps.shifted.max() == 0.0
    assert not np.isnan(steps.probs).any()


# --------------------------------------------------------------------------
# one row at many temperatures
# --------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(
    x=hnp.arrays(
        st.sampled_from([np.float32, np.float64, np.float16]),
        st.integers(1, 8),
        elements=st.one_of(
            st.floats(-1e4, 1e4, width=16), st.sampled_from([INF, -INF, NAN, 0.0, 3.0])
        ),
    ),
    ts=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=6),
)
def test_softmax_over_temperatures_is_one_call_per_t_bit_for_bit(x, ts):
    from compute import softmax_over_temperatures

    got = softmax_over_temperatures(x, ts)
    want = np.array([softmax(x, temperature=t) for t in ts])
    assert got.shape == (len(ts), x.size) and got.dtype == x.dtype
    assert np.array_equal(got, want, equal_nan=True)


def test_softmax_over_temperatures_checks_its_input():
    from compute import softmax_over_temperatures

    with pytest.raises(ValueError, match="1-D"):
        softmax_over_temperatures(np.zeros((2, 2)), [1.0])
    with pytest.raises(ValueError, match="temperature"):
        softmax_over_temperatures([1.0, 2.0], [1.0, 0.0])


# --------------------------------------------------------------------------
# the blocked, in-place NumPy paths
# --------------------------------------------------------------------------
@pytest.fixture
def tiny_blocks(monkeypatch):
    """Blocks of a few rows, so small arrays cross many block boundaries."""
    import sys

    monkeypatch.setattr(sys.modules["compute._softmax"], "_BLOCK_BYTES", 3 * 8 * 7)


def _rows_with_specials(rng, n_rows, n):
    x = rng.normal(size=(n_rows, n)) * 30
    x[3, 1] = INF
    x[3, 4] = INF
    x[5, :] = -INF
    x[8, 2] = NAN
    x[9, 0] = 1e308
    x[9, 1] = -1e308
    x[11, ::2] = -INF
    return x


@pytest.mark.parametrize("n", [1, 7, 8, 9, 33])
@pytest.mark.parametrize("t", [1.0, 0.37, 1e-300])
def test_blocks_match_steps_row_by_row(tiny_blocks, n, t):
    rng = np.random.default_rng(n)
    x = _rows_with_specials(rng, 23, max(n, 5))[:, :n].copy()
    keep = x.copy()
    p = softmax(x, temperature=t)
    lp = log_softmax(x, temperature=t)
    lse = logsumexp(x)
    np.testing.assert_array_equal(x, keep)  # the caller's array is untouched
    for i, row in enumerate(x):
        steps = softmax_steps(row, t)
        assert np.array_equal(p[i], steps.probs, equal_nan=True), i
        assert np.array_equal(lp[i], steps.log_probs, equal_nan=True), i
        want = ref(sps.logsumexp, row)
        assert (np.isnan(lse[i]) and np.isnan(want)) or lse[i] == pytest.approx(want, rel=1e-13), i


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_blocks_other_axes_and_layouts(tiny_blocks, dtype):
    rng = np.random.default_rng(7)
    x = (rng.normal(size=(4, 9, 6)) * 5).astype(dtype)
    x[1, 2, :] = INF  # rows along axis -1 with +inf; columns along 1 hold them too
    x[2, :, 3] = NAN
    x[3, 4, 1] = -INF
    tol = 4 * EPS[np.dtype(dtype)]
    for axis in (0, 1, 2):
        for view in (x, np.asfortranarray(x), x[:, ::-1]):
            keep = view.copy()
            got = softmax(view, axis=axis, temperature=0.5)
            assert got.dtype == dtype and got.flags.c_contiguous
            assert not np.shares_memory(got, view)
            np.testing.assert_array_equal(view, keep)
            # rows without NaN/inf against SciPy on the float64 (float32 for float16) values
            want = ref(sps.softmax, view.astype(np.float64) / 0.5, axis=axis)
            ok = np.isfinite(view).all(axis=axis, keepdims=True) & np.ones_like(got, dtype=bool)
            np.testing.assert_allclose(got[ok].astype(np.float64), want[ok], rtol=tol, atol=tol)
            bad = np.isnan(view).any(axis=axis, keepdims=True) & np.ones_like(got, dtype=bool)
            assert np.isnan(got[bad]).all() and not np.isnan(got[~bad]).any()
            np.testing.assert_array_equal(got, softmax(np.ascontiguousarray(view), axis=axis, temperature=0.5))


def test_blocks_float32_large_against_scipy():
    """One real-size case with the default blocks: many blocks, rows of 8192."""
    rng = np.random.default_rng(11)
    x = (rng.normal(size=(160, 8192)) * 8).astype(np.float32)
    x[100, 17] = INF
    p = softmax(x, temperature=2.0)
    assert p.dtype == np.float32
    want = ref(sps.softmax, x.astype(np.float64) / 2.0, axis=-1)
    want[100] = 0.0
    want[100, 17] = 1.0
    np.testing.assert_allclose(p, want, rtol=1e-5, atol=1e-9)
    lse = logsumexp(x)
    np.testing.assert_allclose(lse[:100], ref(sps.logsumexp, x[:100].astype(np.float64), axis=-1), rtol=1e-6)
    assert lse[100] == INF
