"""Tests for compute.gradients: the softmax Jacobian and the (label-smoothed)
cross-entropy, against central finite differences, explicit loops and SciPy,
plus validation, dtype rules and Hypothesis properties.

pyproject.toml turns every warning into an error, so any RuntimeWarning from
NumPy inside ``compute`` fails these tests.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    cross_entropy,
    cross_entropy_grad,
    entropy,
    smoothed_target,
    softmax,
    softmax_jacobian,
)
from tests.compute.support import EPS, FLOAT_DTYPES, INF, NAN, ref


def central_diff(f, x, h=1e-6):
    """d f(x) / d x_j by central differences; f maps (n,) -> (m,) or scalar."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def loop_target(k, target, a, convention):
    """The smoothed target distribution, written out class by class."""
    y = []
    for c in range(k):
        if k == 1:
            y.append(1.0)
        elif convention == "others":
            y.append(1 - a if c == target else a / (k - 1))
        else:
            y.append(1 - a + a / k if c == target else a / k)
    return y


def loop_cross_entropy(logits, target, a=0.0, convention="others"):
    """-sum y log_softmax(logits) for one row, with SciPy's log_softmax."""
    y = loop_target(len(logits), target, a, convention)
    lp = ref(sps.log_softmax, np.asarray(logits, dtype=np.float64))
    return -math.fsum(yi * li for yi, li in zip(y, lp, strict=True) if yi != 0)


# --------------------------------------------------------------------------
# the Jacobian
# --------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.01, 1.0, 5.0])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_jacobian_matches_finite_differences(n, scale):
    rng = np.random.default_rng(n * 100 + int(scale * 10))
    s = rng.normal(size=n) * scale
    jac = softmax_jacobian(softmax(s))
    fd = central_diff(softmax, s)
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("t", [0.25, 1.0, 3.0])
def test_jacobian_with_temperature_is_divided_by_t(t):
    s = np.array([2.0, 1.0, 0.1, -0.5])
    p = softmax(s, temperature=t)
    fd = central_diff(lambda v: softmax(v, temperature=t), s)
    np.testing.assert_allclose(softmax_jacobian(p) / t, fd, rtol=1e-6, atol=1e-9)


def test_jacobian_hand_values():
    jac = softmax_jacobian([0.2, 0.3, 0.5])
    want = [[0.16, -0.06, -0.10], [-0.06, 0.21, -0.15], [-0.10, -0.15, 0.25]]
    np.testing.assert_allclose(jac, want, rtol=1e-14, atol=1e-16)
    np.testing.assert_array_equal(softmax_jacobian([1.0, 0.0]), [[0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(softmax_jacobian([0.5, 0.5]), [[0.25, -0.25], [-0.25, 0.25]])
    np.testing.assert_array_equal(softmax_jacobian([1.0]), [[0.0]])


def test_jacobian_matches_loop_and_is_batched():
    rng = np.random.default_rng(5)
    p = softmax(rng.normal(size=(2, 3, 4)) * 2)
    jac = softmax_jacobian(p)
    assert jac.shape == (2, 3, 4, 4) and jac.dtype == np.float64
    for idx in np.ndindex(2, 3):
        row = p[idx]
        want = [[row[i] * ((i == j) - row[j]) for j in range(4)] for i in range(4)]
        np.testing.assert_allclose(jac[idx], want, rtol=1e-15, atol=1e-17)
        np.testing.assert_array_equal(jac[idx], softmax_jacobian(row))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_jacobian_dtype(dtype):
    p = np.array([0.1, 0.2, 0.7], dtype=dtype)
    jac = softmax_jacobian(p)
    assert jac.dtype == dtype and jac.shape == (3, 3)
    tol = 4 * EPS[np.dtype(dtype)]
    np.testing.assert_allclose(jac, softmax_jacobian(p.astype(np.float64)), rtol=tol, atol=tol)
    assert softmax_jacobian([1, 0]).dtype == np.float64
    assert softmax_jacobian(np.float32(1.0)).shape == (1, 1)
    assert softmax_jacobian(np.empty((2, 0))).shape == (2, 0, 0)
    with pytest.raises(TypeError):
        softmax_jacobian(np.array([0.5 + 1j, 0.5]))


# --------------------------------------------------------------------------
# smoothed targets
# --------------------------------------------------------------------------
def test_smoothed_target_worked_example():
    np.testing.assert_allclose(smoothed_target(4, 0, 0.1), [0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3], rtol=1e-15)
    np.testing.assert_allclose(smoothed_target(4, 0, 0.1, "others")[1:], [0.0333333333] * 3, rtol=1e-8)
    np.testing.assert_allclose(smoothed_target(4, 0, 0.1, "pytorch"), [0.925, 0.025, 0.025, 0.025], rtol=1e-15)
    np.testing.assert_array_equal(smoothed_target(3, 2), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(smoothed_target(3, 2, 0.0, "pytorch"), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(smoothed_target(2, 1, 1.0), [1.0, 0.0])  # all mass moved
    for conv in ("others", "pytorch"):
        np.testing.assert_array_equal(smoothed_target(1, 0, 0.3, conv), [1.0])


@pytest.mark.parametrize("convention", ["others", "pytorch"])
@pytest.mark.parametrize("a", [0.0, 0.05, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_smoothed_target_matches_loop(k, a, convention):
    for t in range(k):
        y = smoothed_target(k, t, a, convention)
        assert y.dtype == np.float64 and y.shape == (k,)
        np.testing.assert_allclose(y, loop_target(k, t, a, convention), rtol=1e-15, atol=1e-17)
        assert abs(y.sum() - 1) <= 4 * EPS[np.dtype(np.float64)]


def test_smoothed_target_batched():
    t = np.array([[0, 2], [1, 1]])
    y = smoothed_target(3, t, 0.3)
    assert y.shape == (2, 2, 3)
    for idx in np.ndindex(2, 2):
        np.testing.assert_array_equal(y[idx], smoothed_target(3, int(t[idx]), 0.3))
    assert smoothed_target(3, np.array([], dtype=int)).shape == (0, 3)
    assert smoothed_target(3, np.uint8(2)).shape == (3,)


@pytest.mark.parametrize(("bad", "text"), [(-0.1, "-0.1"), (1.5, "1.5"), (NAN, "nan"), (INF, "inf")])
def test_smoothed_target_bad_smoothing(bad, text):
    with pytest.raises(ValueError, match="label_smoothing") as info:
        smoothed_target(3, 0, bad)
    assert str(info.value) == f"label_smoothing must be in [0, 1], got {text}"
    with pytest.raises(ValueError, match=text):
        cross_entropy([1.0, 2.0, 3.0], 0, label_smoothing=bad)


@pytest.mark.parametrize("bad", [3, -1, 10, np.array([0, 3])])
def test_smoothed_target_bad_target(bad):
    with pytest.raises(ValueError, match=r"target must be in \[0, 3\)"):
        smoothed_target(3, bad)
    with pytest.raises(ValueError, match="target"):
        cross_entropy(np.zeros((2, 3)), bad)


def test_smoothed_target_other_errors():
    with pytest.raises(ValueError, match="'tensorflow'"):
        smoothed_target(3, 0, 0.1, convention="tensorflow")
    with pytest.raises(ValueError, match="convention"):
        cross_entropy([1.0, 2.0], 0, convention="Others")
    with pytest.raises(ValueError, match="n_classes must be >= 1, got 0"):
        smoothed_target(0, 0)
    for bad_k in (2.0, "3", True):
        with pytest.raises(TypeError, match="n_classes"):
            smoothed_target(bad_k, 0)
    for bad_t in (1.0, np.array([0.0, 1.0]), True, "1"):
        with pytest.raises(TypeError, match="target"):
            smoothed_target(3, bad_t)
    for bad_a in ("0.1", None, 0.1j, True):
        with pytest.raises(TypeError, match="label_smoothing"):
            smoothed_target(3, 0, bad_a)


# --------------------------------------------------------------------------
# cross-entropy
# --------------------------------------------------------------------------
def test_cross_entropy_hand_values():
    out = cross_entropy([1000.0, 0.0], 1)
    assert out.shape == () and out.dtype == np.float64
    assert out == 1000.0
    assert cross_entropy([1000.0, 0.0], 0) == 0.0
    assert cross_entropy([0.0, 0.0], 0) == pytest.approx(math.log(2), rel=1e-15)
    assert cross_entropy([0.0, 0.0, 0.0, 0.0], 3, 0.1) == pytest.approx(math.log(4), rel=1e-15)
    assert cross_entropy([5.0], 0) == 0.0 and not math.copysign(1, cross_entropy([5.0], 0)) < 0
    np.testing.assert_allclose(cross_entropy_grad([1000.0, 0.0], 1), [1.0, -1.0])
    np.testing.assert_array_equal(cross_entropy_grad([0.0, 0.0], 0), [-0.5, 0.5])


def test_cross_entropy_masked_logits():
    # a -inf logit with no target mass contributes nothing (no 0 * -inf = NaN)
    x = [-INF, 0.0, 1.0]
    assert cross_entropy(x, 2) == pytest.approx(loop_cross_entropy([0.0, 1.0], 1), rel=1e-15)
    np.testing.assert_allclose(cross_entropy_grad(x, 2), [0.0, *(softmax([0.0, 1.0]) - [0, 1])], rtol=1e-15)
    # ... but with label smoothing ("others" gives it mass) the loss is inf
    assert cross_entropy(x, 2, 0.1) == INF
    assert cross_entropy(x, 0) == INF  # the target itself is masked
    assert np.all(np.isfinite(cross_entropy_grad(x, 0)))
    assert np.isnan(cross_entropy([NAN, 0.0, 1.0], 1))
    assert np.isnan(cross_entropy([-INF, -INF], 1))
    assert np.all(np.isnan(cross_entropy_grad([NAN, 0.0, 1.0], 1)))
    assert cross_entropy([INF, 0.0], 0) == 0.0
    assert cross_entropy([INF, 0.0], 1) == INF


@pytest.mark.parametrize("convention", ["others", "pytorch"])
@pytest.mark.parametrize("a", [0.0, 0.1, 0.7])
@pytest.mark.parametrize("scale", [0.1, 2.0, 300.0])
def test_cross_entropy_matches_loop(convention, a, scale):
    rng = np.random.default_rng(int(scale * 10) + int(a * 100))
    x = rng.normal(size=(6, 5)) * scale
    t = rng.integers(0, 5, size=6)
    got = cross_entropy(x, t, a, convention)
    assert got.shape == (6,)
    want = [loop_cross_entropy(row, int(c), a, convention) for row, c in zip(x, t, strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    # and the gradient: p - y
    y = np.array([loop_target(5, int(c), a, convention) for c in t])
    np.testing.assert_allclose(cross_entropy_grad(x, t, a, convention), ref(sps.softmax, x, axis=-1) - y,
                               rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("convention", ["others", "pytorch"])
@pytest.mark.parametrize("a", [0.0, 0.1, 0.6])
@pytest.mark.parametrize("seed", range(3))
def test_cross_entropy_grad_matches_finite_differences(seed, a, convention):
    rng = np.random.default_rng(seed)
    n = 3 + seed
    x = rng.normal(size=n) * 2
    t = int(rng.integers(0, n))
    fd = central_diff(lambda v: cross_entropy(v, t, a, convention), x)
    np.testing.assert_allclose(cross_entropy_grad(x, t, a, convention), fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_cross_entropy_batched_along_any_axis(axis):
    rng = np.random.default_rng(11)
    x = rng.normal(size=(2, 3, 4)) * 3
    moved = np.moveaxis(x, axis, -1)
    k = moved.shape[-1]
    t = rng.integers(0, k, size=moved.shape[:-1])
    loss = cross_entropy(x, t, 0.2, axis=axis)
    grad = cross_entropy_grad(x, t, 0.2, axis=axis)
    assert loss.shape == moved.shape[:-1] and grad.shape == x.shape
    grad_moved = np.moveaxis(grad, axis, -1)
    for idx in np.ndindex(moved.shape[:-1]):
        assert loss[idx] == pytest.approx(loop_cross_entropy(moved[idx], int(t[idx]), 0.2), rel=1e-13)
        np.testing.assert_array_equal(grad_moved[idx], cross_entropy_grad(moved[idx], int(t[idx]), 0.2))
    # a scalar target broadcasts over every row
    np.testing.assert_array_equal(cross_entropy(x, 1, axis=axis), cross_entropy(x, np.ones_like(t), axis=axis))


def test_cross_entropy_target_shape_mismatch():
    with pytest.raises(ValueError, match="target shape"):
        cross_entropy(np.zeros((2, 3)), [0, 1, 2])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_cross_entropy_dtype(dtype):
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 20.0]], dtype=dtype)
    t = np.array([0, 2])
    loss = cross_entropy(x, t, 0.1)
    grad = cross_entropy_grad(x, t, 0.1)
    assert loss.dtype == dtype and grad.dtype == dtype
    tol = 8 * EPS[np.dtype(dtype)]
    np.testing.assert_allclose(loss, cross_entropy(x.astype(np.float64), t, 0.1), rtol=tol, atol=tol)
    np.testing.assert_allclose(grad, cross_entropy_grad(x.astype(np.float64), t, 0.1), rtol=tol, atol=tol)
    assert cross_entropy([1, 2], 0).dtype == np.float64
    # float16 logits are computed in float32: a huge loss is still exact before the cast
    assert cross_entropy(np.float16([60000.0, -60000.0]), 1) == np.float16(np.inf)
    assert cross_entropy(np.float16([600.0, 0.0]), 1) == np.float16(600.0)


def test_no_warnings_on_nasty_input():
    nasty = np.array([[1e308, -1e308, 0.0], [INF, INF, -INF], [-INF, -INF, -INF], [NAN, 1.0, INF],
                      [0.0, -1e308, 1e-320], [-INF, 0.0, 0.0]])
    t = np.array([0, 1, 2, 0, 1, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in FLOAT_DTYPES:
            with np.errstate(all="ignore"):
                x = nasty.astype(dtype)
            for a in (0.0, 0.1, 1.0):
                for conv in ("others", "pytorch"):
                    cross_entropy(x, t, a, conv)
                    cross_entropy_grad(x, t, a, conv)
                    cross_entropy(x.T, t, a, conv, axis=0)
            softmax_jacobian(x)
        softmax_jacobian(np.array([1e300, 1e300]))
        softmax_jacobian(np.float16([300.0, 1.0]))  # 300**2 overflows float16
        cross_entropy(np.float16([60000.0, -60000.0]), 1)  # the loss overflows float16


def test_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.normal(size=(7, 5)) * 3
    t = rng.integers(0, 5, size=7)
    for a in (0.0, 0.1, 0.5):
        want = torch.nn.functional.cross_entropy(
            torch.tensor(x), torch.tensor(t), label_smoothing=a, reduction="none"
        ).numpy()
        np.testing.assert_allclose(cross_entropy(x, t, a, convention="pytorch"), want, rtol=1e-12)
        xt = torch.tensor(x, requires_grad=True)
        torch.nn.functional.cross_entropy(xt, torch.tensor(t), label_smoothing=a, reduction="sum").backward()
        np.testing.assert_allclose(cross_entropy_grad(x, t, a, convention="pytorch"), xt.grad.numpy(), rtol=1e-12,
                                   atol=1e-15)


# --------------------------------------------------------------------------
# Hypothesis properties
# --------------------------------------------------------------------------
TIES = st.sampled_from([-1.0, 0.0, 0.5, 2.0])
MODERATE = st.floats(-50, 50, allow_nan=False)
EXTREME = st.sampled_from([1e300, -1e300, 1e-300, -1e-300, 1.7e308, -1.7e308])
ELEMENTS = st.one_of(TIES, MODERATE, EXTREME, st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def rows(draw, elements=ELEMENTS, min_size=1, max_size=10):
    n = draw(st.integers(min_size, max_size))
    return draw(hnp.arrays(np.float64, n, elements=elements))


@settings(max_examples=200, deadline=None)
@given(x=rows(), t=st.sampled_from([0.1, 1.0, 10.0]))
def test_prop_jacobian(x, t):
    p = softmax(x, temperature=t)
    jac = softmax_jacobian(p)
    n = x.size
    assert np.array_equal(jac, jac.T)  # exactly symmetric
    np.testing.assert_allclose(jac.sum(axis=-1), 0.0, atol=(n + 2) * EPS[np.dtype(np.float64)])
    assert np.linalg.eigvalsh(jac).min() >= -1e-12
    assert np.all(np.diag(jac) >= 0) and np.all(np.diag(jac) <= 0.25)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_prop_cross_entropy(data):
    x = data.draw(rows())
    k = x.size
    t = data.draw(st.integers(0, k - 1))
    a = data.draw(st.one_of(st.just(0.0), st.floats(0.0, 1.0)))
    conv = data.draw(st.sampled_from(["others", "pytorch"]))
    loss = float(cross_entropy(x, t, a, conv))
    grad = cross_entropy_grad(x, t, a, conv)
    assert not math.isnan(loss)
    assert np.all(np.isfinite(grad))
    assert abs(math.fsum(grad)) <= (k + 2) * EPS[np.dtype(np.float64)]
    if a == 0.0:
        assert loss >= 0.0
        with np.errstate(over="ignore"):
            representable = np.isfinite(x.max() - x.min())
        assert loss < INF or not representable  # the loss is at most max - min
        assert loss == pytest.approx(loop_cross_entropy(x, t), rel=1e-12, abs=1e-12)
    else:
        # Gibbs: cross-entropy >= entropy of the target
        y = smoothed_target(k, t, a, conv)
        assert loss >= float(entropy(y)) - 1e-12 * max(1.0, abs(loss))
