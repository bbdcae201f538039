"""Tests for compute.normalizers: hand values, independent references (plain
Python loops, SciPy's expit and SLSQP, the KKT conditions), special values,
dtype rules, batching along any axis and Hypothesis properties.

pyproject.toml turns every warning into an error, so any RuntimeWarning from
NumPy inside ``compute`` fails these tests.  Reference values are computed
with warnings silenced: only *our* code has to be warning-free.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize as spo
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    entmax,
    hardmax,
    linear_normalize,
    shifted_linear_normalize,
    sigmoid,
    softmax,
    sparsemax,
)
from compute._normalizers import _entmax_bisect
from tests.compute.support import EPS, FLOAT_DTYPES, INF, NAN, ref


def entmax15(x, axis=-1):
    return entmax(x, 1.5, axis=axis)


# Every map that should return a probability vector, with its name.
DISTRIBUTIONS = {
    "softmax": softmax,
    "shifted_linear": shifted_linear_normalize,
    "hardmax": hardmax,
    "sparsemax": sparsemax,
    "entmax15": entmax15,
    "entmax1.3": lambda x, axis=-1: entmax(x, 1.3, axis=axis),
    "entmax2.5": lambda x, axis=-1: entmax(x, 2.5, axis=axis),
}
ALL_MAPS = {**DISTRIBUTIONS, "linear": linear_normalize}


# --------------------------------------------------------------------------
# independent references (plain Python, no NumPy vectorisation)
# --------------------------------------------------------------------------
def loop_linear(row):
    total = math.fsum(row)
    return [v / total for v in row]


def loop_hardmax(row):
    best = max(row)
    hits = [1.0 if v == best else 0.0 for v in row]
    k = sum(hits)
    return [h / k for h in hits]


def loop_sparsemax(row):
    """Martins & Astudillo 2016, Algorithm 1, literally (no max shift)."""
    z = sorted(row, reverse=True)
    cumsum, k_z, cumsum_kz = 0.0, 0, 0.0
    for k, zk in enumerate(z, start=1):
        cumsum += zk
        if 1 + k * zk > cumsum:
            k_z, cumsum_kz = k, cumsum
    tau = (cumsum_kz - 1) / k_z
    return [max(v - tau, 0.0) for v in row]


def loop_entmax(row, alpha, iters=200):
    """Plain bisection on tau for p_i = [(alpha-1) z_i - tau]_+ ** (1/(alpha-1))."""
    row = [float(v) for v in row]
    m = max(row)
    z = [max((alpha - 1) * (v - m), -2.0) for v in row]  # max 0, so tau in [-1, 0]

    def probs(tau):
        return [max(zi - tau, 0.0) ** (1 / (alpha - 1)) for zi in z]

    lo, hi = -1.0, 0.0
    for _ in range(iters):
        mid = (lo + hi) / 2
        if math.fsum(probs(mid)) >= 1:
            lo = mid
        else:
            hi = mid
    p = probs(lo)
    total = math.fsum(p)
    return [v / total for v in p]


def assert_entmax_close(got, want, alpha, atol=1e-12):
    """Compare entmax results where they are well conditioned.

    p_i ** (alpha - 1) = (alpha - 1) z_i - tau is what the scores determine
    to ~1e-16; for alpha > 2 a small p_i = that ** (1 / (alpha - 1)) is
    ill-conditioned (both sides lose digits, and the final renormalisation
    spreads that to the other entries at the ~1e-11 level), so compare
    p ** (alpha - 1) there, and p itself for alpha <= 2.
    """
    got, want = np.asarray(got), np.asarray(want)
    if alpha > 2:
        np.testing.assert_allclose(got ** (alpha - 1), want ** (alpha - 1), rtol=0, atol=max(atol, 1e-10))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)


def entmax15_two(a, b):
    """Closed form of 1.5-entmax for two scores (solve the quadratic by hand).

    With X = (z - max) / 2 = [0, -d] and both entries in the support,
    tau^2 + (d + tau)^2 = 1 gives tau = (-d - sqrt(2 - d^2)) / 2; the second
    entry is in the support iff -d > tau, i.e. d < 1.
    """
    hi, lo = max(a, b), min(a, b)
    d = (hi - lo) / 2
    if d >= 1:
        big, small = 1.0, 0.0
    else:
        tau = (-d - math.sqrt(2 - d * d)) / 2
        big, small = tau * tau, (d + tau) ** 2
    return [big, small] if a >= b else [small, big]


def slsqp_entmax(z, alpha):
    """argmax_p p.z + H^T_alpha(p) over the simplex, by SciPy's SLSQP.

    H^T_alpha(p) = sum(p - p**alpha) / (alpha (alpha - 1)); alpha = 2 is the
    projection argmin ||p - z||^2.  Independent of the threshold formula.
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.size

    def objective(p):
        p = np.clip(p, 0, 1)
        return -(p @ z + np.sum(p - p**alpha) / (alpha * (alpha - 1)))

    def gradient(p):
        p = np.clip(p, 0, 1)
        return -(z + (1 - alpha * p ** (alpha - 1)) / (alpha * (alpha - 1)))

    return _slsqp_simplex(objective, gradient, n)


def _slsqp_simplex(objective, gradient, n):
    # A strict ftol sometimes ends in "Positive directional derivative for
    # linesearch" right at the optimum, so the result, not res.success, is
    # what the callers check (to 1e-6; SLSQP gets ~1e-7 here).
    res = ref(
        spo.minimize,
        objective,
        np.full(n, 1.0 / n),
        jac=gradient,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * n,
        constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1.0, "jac": lambda p: np.ones(n)}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert np.all(np.isfinite(res.x)), res.message
    return res.x


def slsqp_sparsemax(z):
    """argmin ||p - z||^2 over the simplex, by SLSQP (the definition)."""
    z = np.asarray(z, dtype=np.float64)
    return _slsqp_simplex(lambda p: np.sum((p - z) ** 2), lambda p: 2 * (p - z), z.size)


def assert_sparsemax_kkt(z, p, tol=1e-9):
    """KKT of min ||p - z||^2 on the simplex: z_i - p_i = tau on the support,
    z_i <= tau off it, p >= 0, sum(p) = 1."""
    z = np.asarray(z, dtype=np.float64)
    assert np.all(p >= 0)
    assert abs(p.sum() - 1) <= tol
    on = p > 0
    assert on.any()
    taus = z[on] - p[on]
    tau = taus.mean()
    np.testing.assert_allclose(taus, tau, rtol=0, atol=tol)
    assert np.all(z[~on] <= tau + tol)


# --------------------------------------------------------------------------
# worked examples (the numbers the app's texts quote)
# --------------------------------------------------------------------------
def test_linear_worked_examples():
    np.testing.assert_array_equal(linear_normalize([3, -1, 2]), [0.75, -0.25, 0.5])
    assert np.all(np.isnan(linear_normalize([1, -1])))
    assert np.all(np.isnan(linear_normalize([0.0, 0.0, 0.0])))
    np.testing.assert_array_equal(linear_normalize([1.0, 3.0]), [0.25, 0.75])
    np.testing.assert_array_equal(linear_normalize([5.0]), [1.0])


def test_shifted_linear_worked_examples():
    np.testing.assert_allclose(shifted_linear_normalize([1, 2, 3]), [0, 1 / 3, 2 / 3], rtol=1e-15)
    np.testing.assert_allclose(shifted_linear_normalize([3, -1, 2]), [4 / 7, 0, 3 / 7], rtol=1e-15)
    # ties (sum of shifted scores is 0): the uniform distribution
    np.testing.assert_array_equal(shifted_linear_normalize([2.0, 2.0, 2.0, 2.0]), [0.25] * 4)
    np.testing.assert_array_equal(shifted_linear_normalize([7.0]), [1.0])


def test_hardmax_worked_examples():
    np.testing.assert_array_equal(hardmax([1, 3, 3]), [0, 0.5, 0.5])
    np.testing.assert_array_equal(hardmax([2.0, 1.0, 0.1]), [1, 0, 0])
    np.testing.assert_array_equal(hardmax([4.0, 4.0, 4.0]), [1 / 3] * 3)


def test_sparsemax_worked_examples():
    # [0.5, 0.2, 0.1], by hand: cumulative sums 0.5, 0.7, 0.8; the test
    # 1 + k z_(k) > cumsum holds for k = 1 (1.5 > 0.5), 2 (1.4 > 0.7) and
    # 3 (1.3 > 0.8), so k(z) = 3, tau = (0.8 - 1) / 3 = -1/15, p = z + 1/15.
    np.testing.assert_allclose(sparsemax([0.5, 0.2, 0.1]), [17 / 30, 8 / 30, 5 / 30], rtol=1e-14)
    # [1, 0.5, -1]: k = 2 (1 + 2 * 0.5 = 2 > 1.5; 1 - 3 = -2 < 0.5),
    # tau = (1.5 - 1) / 2 = 0.25, p = [0.75, 0.25, 0].
    np.testing.assert_array_equal(sparsemax([1.0, 0.5, -1.0]), [0.75, 0.25, 0.0])
    # widely separated scores: exactly one-hot
    np.testing.assert_array_equal(sparsemax([10.0, 0.0, -10.0]), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(sparsemax([0.0, 0.0]), [0.5, 0.5])
    np.testing.assert_array_equal(sparsemax([3.0]), [1.0])


@pytest.mark.parametrize(("a", "b"), [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.3, -0.9), (2.0, 0.0), (5.0, 1.0)])
def test_entmax15_two_scores_closed_form(a, b):
    want = entmax15_two(a, b)
    np.testing.assert_allclose(entmax([a, b], 1.5), want, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(_entmax_bisect([a, b], 1.5), want, rtol=1e-12, atol=1e-14)


def test_sigmoid_worked_examples():
    assert sigmoid(0) == 0.5
    assert sigmoid(1000) == 1.0
    assert sigmoid(-1000) == 0.0
    assert sigmoid(INF) == 1.0 and sigmoid(-INF) == 0.0
    assert np.isnan(sigmoid(NAN))
    assert sigmoid(0).shape == ()
    np.testing.assert_allclose(sigmoid([1.0, -1.0]), [1 / (1 + math.e**-1), 1 / (1 + math.e)], rtol=1e-15)


# --------------------------------------------------------------------------
# agreement with independent implementations
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_matches_expit(dtype):
    x = np.concatenate(
        [
            np.linspace(-60, 60, 241),
            [0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e-8, -1e-8, 88.0, -88.0, 700.0, -700.0, 745.0, -745.0],
            [1000.0, -1000.0, 1e300, -1e300, 1.7e308, -1.7e308, INF, -INF],
        ]
    )
    with np.errstate(all="ignore"):
        x = x.astype(dtype)
    got = sigmoid(x)
    assert got.dtype == dtype
    # atol: expit(-745) is 0.0 but exp(-745) rounds to the subnormal 5e-324
    np.testing.assert_allclose(got, ref(sps.expit, x), rtol=4 * EPS[np.dtype(dtype)], atol=1e-300)
    assert np.all((got >= 0) & (got <= 1))
    assert np.all(np.diff(got[:241]) >= 0)


def test_sigmoid_float16():
    x = np.float16([-20, -5, -1, 0, 1, 5, 20, 1000, -1000, 65504, -65504])
    got = sigmoid(x)
    assert got.dtype == np.float16
    want = ref(sps.expit, x.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got, want, rtol=EPS[np.dtype(np.float16)], atol=0)


def test_sigmoid_keeps_shape():
    x = np.arange(24.0).reshape(2, 3, 4) - 12
    got = sigmoid(x)
    assert got.shape == x.shape
    np.testing.assert_allclose(got, ref(sps.expit, x), rtol=1e-15)
    assert sigmoid([1, 2]).dtype == np.float64


@pytest.mark.parametrize("seed", range(6))
def test_linear_matches_plain_division(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 10, size=(5, 7)) * 10.0 ** rng.integers(-300, 300)
    got = linear_normalize(x)
    want = np.array([loop_linear(list(row)) for row in x])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # power-of-two scaling is exact: the very bits of x / x.sum()
    np.testing.assert_array_equal(got, x / x.sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(linear_normalize(x.T, axis=0), want.T, rtol=1e-14)


def test_linear_negative_and_special_rows():
    x = np.array(
        [
            [3.0, -1.0, 2.0],
            [1.0, -1.0, 0.0],  # sum 0
            [1.0, INF, 2.0],
            [NAN, 1.0, 2.0],
            [1e308, 1e308, 1e308],  # the plain sum overflows
            [-2.0, -2.0, -4.0],
        ]
    )
    p = linear_normalize(x)
    np.testing.assert_array_equal(p[0], [0.75, -0.25, 0.5])
    assert np.all(np.isnan(p[1:4]))
    np.testing.assert_allclose(p[4], [1 / 3] * 3, rtol=1e-15)
    np.testing.assert_array_equal(p[5], [0.25, 0.25, 0.5])


@pytest.mark.parametrize("seed", range(10))
def test_hardmax_matches_loop(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=(8, 6)).astype(np.float64)  # plenty of ties
    x[0, :2] = [-INF, INF]
    x[1, 3] = -INF
    got = hardmax(x)
    want = np.array([loop_hardmax(list(row)) for row in x])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(hardmax(x.T, axis=0), want.T)


def test_hardmax_special_rows():
    x = np.array([[1.0, -INF, 0.0], [-INF, -INF, -INF], [NAN, 1.0, 2.0], [INF, 3.0, INF], [INF, -INF, 0.0]])
    p = hardmax(x)
    np.testing.assert_array_equal(p[0], [1, 0, 0])
    assert np.all(np.isnan(p[1])) and np.all(np.isnan(p[2]))
    np.testing.assert_array_equal(p[3], [0.5, 0, 0.5])
    np.testing.assert_array_equal(p[4], [1, 0, 0])


SMALL_ROWS = [
    [0.5, 0.2, 0.1],
    [1.0, 0.5, -1.0],
    [0.3, 0.3, 0.3, 0.1],
    [2.0, 1.9, -0.2, 1.5, 0.0],
    [0.0],
    [-3.0, -3.2],
    [1.0, 0.9, 0.8, 0.7, 0.6, 0.5],
]


@pytest.mark.parametrize("seed", range(12))
def test_sparsemax_matches_loop_slsqp_and_kkt(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    z = rng.normal(size=n) * rng.choice([0.1, 0.5, 1.0, 3.0])
    got = sparsemax(z)
    np.testing.assert_allclose(got, loop_sparsemax(list(z)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, slsqp_sparsemax(z), rtol=0, atol=1e-6)
    assert_sparsemax_kkt(z, got)


@pytest.mark.parametrize("z", SMALL_ROWS)
def test_sparsemax_small_rows(z):
    got = sparsemax(z)
    np.testing.assert_allclose(got, loop_sparsemax(z), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got, slsqp_sparsemax(z), rtol=0, atol=1e-6)
    assert_sparsemax_kkt(z, got)


@pytest.mark.parametrize("alpha", [1.25, 1.5, 1.8, 2.5, 3.0])
@pytest.mark.parametrize("z", SMALL_ROWS[:5])
def test_entmax_convention_matches_slsqp(alpha, z):
    """The (alpha - 1) scaling is right: the result maximises p.z + H^T_alpha(p)."""
    got = entmax(z, alpha)
    np.testing.assert_allclose(got, slsqp_entmax(z, alpha), rtol=0, atol=1e-6)
    assert_entmax_close(got, loop_entmax(z, alpha), alpha)


@pytest.mark.parametrize("alpha", [1.1, 1.3, 1.5, 1.7, 2.0, 2.3, 4.0, 10.0])
@pytest.mark.parametrize("seed", range(4))
def test_entmax_bisect_matches_loop(alpha, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(6, 5)) * rng.choice([0.3, 1.0, 4.0])
    x[0] = [1.0, 1.0, 1.0, 0.0, -1.0]  # ties
    want = np.array([loop_entmax(list(row), alpha) for row in x])
    assert_entmax_close(_entmax_bisect(x, alpha), want, alpha)
    assert_entmax_close(entmax(x, alpha), want, alpha)


@pytest.mark.parametrize("seed", range(8))
def test_entmax15_sort_equals_bisection_and_loop(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(10, 1 + seed)) * rng.choice([0.1, 1.0, 3.0, 30.0])
    exact = entmax(x, 1.5)
    np.testing.assert_allclose(_entmax_bisect(x, 1.5), exact, rtol=0, atol=1e-6)
    np.testing.assert_allclose(_entmax_bisect(x, 1.5), exact, rtol=0, atol=1e-12)  # in fact
    want = np.array([loop_entmax(list(row), 1.5) for row in x])
    np.testing.assert_allclose(exact, want, rtol=0, atol=1e-12)


def test_entmax_special_alphas_are_exact():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 6)) * 2
    np.testing.assert_array_equal(entmax(x, 1.0), softmax(x))
    np.testing.assert_array_equal(entmax(x, 1), softmax(x))
    np.testing.assert_array_equal(entmax(x.T, 1.0, axis=0), softmax(x.T, axis=0))
    np.testing.assert_array_equal(entmax(x, 2.0), sparsemax(x))
    np.testing.assert_array_equal(entmax(x, np.float32(2.0)), sparsemax(x))
    np.testing.assert_allclose(_entmax_bisect(x, 2.0), sparsemax(x), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_entmax_is_continuous_in_alpha(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 6)) * 2
    np.testing.assert_allclose(entmax(x, 1.0001), softmax(x), rtol=0, atol=1e-3)
    np.testing.assert_allclose(entmax(x, 1 + 1e-9), softmax(x), rtol=0, atol=1e-7)
    np.testing.assert_allclose(entmax(x, 1.9999), sparsemax(x), rtol=0, atol=1e-3)
    np.testing.assert_allclose(entmax(x, 2.0001), sparsemax(x), rtol=0, atol=1e-3)
    np.testing.assert_allclose(entmax(x, 1.5 + 1e-9), entmax(x, 1.5), rtol=0, atol=1e-7)
    np.testing.assert_allclose(entmax(x, 1.5 - 1e-9), entmax(x, 1.5), rtol=0, atol=1e-7)


@pytest.mark.parametrize("alpha", [1.25, 1.5, 2.0, 3.0, 7.0])
def test_widely_separated_scores_give_exact_zeros(alpha):
    np.testing.assert_array_equal(entmax([10.0, 0.0, -10.0], alpha), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(entmax([-10.0, 10.0, 0.0], alpha), [0.0, 1.0, 0.0])
    # a gap below 1 / (alpha - 1) keeps both in the support
    p = entmax([1.0, 0.95, -10.0, -INF], alpha)
    assert p[2] == 0.0 and p[3] == 0.0 and p[0] > p[1] > 0


def test_entmax_near_one_is_softmax_like_not_sparse():
    p = entmax([1.0, 0.0, -3.0], 1.0001)
    assert np.all(p > 0)


@pytest.mark.parametrize(
    ("bad", "text"), [(0.5, "0.5"), (0.999, "0.999"), (-1.0, "-1.0"), (NAN, "nan"), (INF, "inf"), (-INF, "-inf")]
)
def test_entmax_bad_alpha(bad, text):
    with pytest.raises(ValueError, match="alpha") as info:
        entmax([1.0, 2.0], bad)
    assert str(info.value) == f"alpha must be finite and >= 1, got {text}"


@pytest.mark.parametrize("bad", ["1.5", None, 1.5j, True, [1.5]])
def test_entmax_non_real_alpha(bad):
    with pytest.raises(TypeError, match="alpha"):
        entmax([1.0, 2.0], bad)


# --------------------------------------------------------------------------
# special values, batching, dtypes
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sparsemax", "entmax15", "entmax1.3", "entmax2.5"])
def test_sparse_maps_special_rows(name):
    fn = DISTRIBUTIONS[name]
    x = np.array(
        [
            [1.0, -INF, 0.5, -INF],
            [INF, 3.0, INF, -INF],
            [-INF, -INF, -INF, -INF],
            [NAN, 1.0, 2.0, 3.0],
            [1e308, -1e308, 0.0, 1e308],
            [1e-300, 2e-300, -1e-300, 0.0],
        ]
    )
    p = fn(x)
    assert p[0, 1] == 0.0 and p[0, 3] == 0.0
    np.testing.assert_allclose(p[0, [0, 2]], fn(x[0, [0, 2]]), rtol=1e-12)
    np.testing.assert_allclose(p[1], [0.5, 0.0, 0.5, 0.0], rtol=1e-15, atol=0)
    assert np.all(np.isnan(p[2])) and np.all(np.isnan(p[3]))
    np.testing.assert_allclose(p[4], [0.5, 0.0, 0.0, 0.5], rtol=1e-15, atol=0)
    np.testing.assert_allclose(p[5], [0.25] * 4, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(ALL_MAPS))
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_batched_along_any_axis(name, axis):
    fn = ALL_MAPS[name]
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 4, 5)) + 2.0
    x[0, 0] = 1.0  # some ties
    got = fn(x, axis=axis)
    assert got.shape == x.shape and got.flags.c_contiguous
    moved = np.moveaxis(x, axis, -1)
    want = np.empty_like(moved)
    for idx in np.ndindex(moved.shape[:-1]):
        want[idx] = fn(moved[idx])
    np.testing.assert_array_equal(got, np.moveaxis(want, -1, axis))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(ALL_MAPS))
def test_dtype_preserved(name, dtype):
    fn = ALL_MAPS[name]
    x = np.array([[1.0, 2.0, 3.0], [0.5, 0.25, -1.0], [2.0, 2.0, 2.0]], dtype=dtype)
    got = fn(x)
    assert got.dtype == dtype and got.shape == x.shape
    want = fn(x.astype(np.float64))
    tol = 8 * EPS[np.dtype(dtype)]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)
    if name != "linear":
        np.testing.assert_allclose(got.astype(np.float64).sum(axis=-1), 1.0, atol=4 * tol)
    assert sigmoid(x).dtype == dtype


@pytest.mark.parametrize("name", sorted(ALL_MAPS))
def test_ints_lists_zero_d_and_empty(name):
    fn = ALL_MAPS[name]
    assert fn([1, 2, 3]).dtype == np.float64
    np.testing.assert_array_equal(fn([1, 2, 3]), fn(np.array([1.0, 2.0, 3.0])))
    out = fn(np.float32(3.0))
    assert out.shape == () and out.dtype == np.float32 and out == 1.0
    assert fn(np.empty((2, 0))).shape == (2, 0)
    assert fn(np.empty((0, 3))).shape == (0, 3)
    with pytest.raises(TypeError):
        fn(np.array([1 + 2j, 3]))
    with pytest.raises(TypeError):
        fn(np.array([1.0, None], dtype=object))
    with pytest.raises(np.exceptions.AxisError):
        fn([[1.0, 2.0]], axis=2)


def test_input_not_modified():
    x = np.array([[3.0, 1.0, -INF], [2.0, 2.0, 0.5]])
    keep = x.copy()
    for fn in [*ALL_MAPS.values(), sigmoid]:
        out = fn(x)
        assert not np.shares_memory(out, x)
    np.testing.assert_array_equal(x, keep)


def test_no_warnings_on_nasty_input():
    """Explicit (besides pyproject's filterwarnings=error): nothing warns."""
    nasty = [
        [1e308, -1e308, 0.0],
        [INF, INF, -INF],
        [-INF, -INF, -INF],
        [NAN, 1.0, INF],
        [0.0, -1e308, 1e-320],
        [0.0, 0.0, 0.0],
        [1.0, -1.0, 0.0],
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in FLOAT_DTYPES:
            with np.errstate(all="ignore"):
                x = np.array(nasty, dtype=dtype)  # the cast itself may overflow
            for fn in ALL_MAPS.values():
                fn(x)
                fn(x, axis=0)
            for alpha in (1.0001, 1.5, 1.9999, 3.0, 50.0, 1e6):
                entmax(x, alpha)
                _entmax_bisect(x, alpha)
            sigmoid(x)


# --------------------------------------------------------------------------
# Hypothesis properties
# --------------------------------------------------------------------------
TIES = st.sampled_from([-1.0, 0.0, 0.5, 2.0])
MODERATE = st.floats(-50, 50, allow_nan=False)
EXTREME = st.sampled_from([1e300, -1e300, 1e-300, -1e-300, 1.7e308, -1.7e308, 5e-324])
ELEMENTS = st.one_of(TIES, MODERATE, EXTREME, st.floats(allow_nan=False, allow_infinity=False))
ALPHAS = st.one_of(st.sampled_from([1.0, 1.0001, 1.5, 1.9999, 2.0]), st.floats(1.0, 4.0))


@st.composite
def rows(draw, elements=ELEMENTS, min_size=1, max_size=10):
    n = draw(st.integers(min_size, max_size))
    return draw(hnp.arrays(np.float64, n, elements=elements))


def sum_tol(fn_name, n):
    return 1e-6 if fn_name.startswith("entmax") else (n + 2) * EPS[np.dtype(np.float64)]


@settings(max_examples=200, deadline=None)
@given(x=rows(), alpha=ALPHAS)
def test_prop_distributions(x, alpha):
    maps = {**DISTRIBUTIONS, "entmax_any": lambda v: entmax(v, alpha)}
    for name, fn in maps.items():
        p = fn(x)
        assert p.shape == x.shape and p.dtype == np.float64
        assert not np.isnan(p).any(), name
        assert np.all((p >= 0) & (p <= 1)), (name, p)
        assert abs(math.fsum(p) - 1) <= sum_tol(name, x.size), (name, p)


@settings(max_examples=200, deadline=None)
@given(x=rows(), alpha=ALPHAS)
def test_prop_order_preserved(x, alpha):
    bigger = x[:, None] > x[None, :]  # bigger[i, j]: x_i > x_j
    maps = {**DISTRIBUTIONS, "linear": linear_normalize, "sigmoid": sigmoid,
            "entmax_any": lambda v: entmax(v, alpha)}
    for name, fn in maps.items():
        p = fn(x)
        if name == "linear" and not np.all(x > 0):
            continue  # dividing by a negative sum reverses the order
        assert np.all((p[:, None] >= p[None, :])[bigger]), (name, x, p)


@settings(max_examples=200, deadline=None)
@given(x=rows(elements=st.one_of(TIES, MODERATE)), c=st.floats(-1e3, 1e3), alpha=ALPHAS)
def test_prop_shift_invariance(x, c, alpha):
    for fn in (softmax, sparsemax, entmax15, lambda v: entmax(v, alpha), lambda v: _entmax_bisect(v, 1.7)):
        np.testing.assert_allclose(fn(x + c), fn(x), rtol=0, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(x=rows(elements=st.integers(-20, 20).map(float)), c=st.integers(-1000, 1000))
def test_prop_hardmax_and_shifted_linear_shift_invariance(x, c):
    # integer scores and shifts: x + c is exact, so ties stay ties
    np.testing.assert_array_equal(hardmax(x + c), hardmax(x))
    np.testing.assert_allclose(shifted_linear_normalize(x + c), shifted_linear_normalize(x), rtol=1e-15)


@settings(max_examples=200, deadline=None)
@given(x=rows())
def test_prop_sparsemax_kkt_and_loop(x):
    p = sparsemax(x)
    # The problem is shift invariant: check the KKT conditions on x - max(x),
    # clipped at -2 (an entry that far below is outside the support, and the
    # subtraction may overflow for huge gaps).
    with np.errstate(over="ignore"):
        z = np.maximum(x - x.max(), -2.0)
    assert_sparsemax_kkt(z, p, tol=1e-12 * max(1, x.size))
    if np.all(np.abs(x) <= 1e3):
        np.testing.assert_allclose(p, loop_sparsemax(list(x)), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(hardmax(x), loop_hardmax(list(x)))


@settings(max_examples=150, deadline=None)
@given(x=rows(), alpha=st.floats(1.05, 5.0))
def test_prop_entmax_matches_loop(x, alpha):
    assert_entmax_close(entmax(x, alpha), loop_entmax(list(x), alpha), alpha, atol=1e-9)
    np.testing.assert_allclose(_entmax_bisect(x, 1.5), entmax(x, 1.5), rtol=0, atol=1e-6)


@settings(max_examples=200, deadline=None)
@given(x=rows(elements=st.one_of(ELEMENTS, st.sampled_from([INF, -INF, 1.0, -1.0]))))
def test_prop_linear_matches_exact_division(x):
    p = linear_normalize(x)
    if not np.all(np.isfinite(x)):
        assert np.all(np.isnan(p))
        return
    exact = [Fraction(float(v)) for v in x]
    total = sum(exact)  # exact rational arithmetic: the true sum
    if total == 0:
        # Infinitely ill-conditioned: the float sum may round to a tiny non-zero
        # (2 + 1e-300 - 1 - 1 - 1e-300 sums to -1e-300), so only a float sum of
        # exactly 0 promises the NaN row.
        if math.fsum(x.tolist()) == 0 and np.sum(x) == 0:
            assert np.all(np.isnan(p))
        return
    # Our float sum has error <= (n + 1) eps sum|x|, so p is good to that
    # relative to |total|; skip the hopelessly ill-conditioned rows.
    cond_exact = sum(abs(v) for v in exact) / abs(total)
    if cond_exact > 10**8:
        return
    cond = float(cond_exact)
    want = []
    for v in exact:
        q = v / total
        want.append(math.copysign(INF, q) if abs(q) > Fraction(1.7e308) else float(q))
    rtol = (x.size + 2) * EPS[np.dtype(np.float64)] * cond
    np.testing.assert_allclose(p, want, rtol=rtol, atol=1e-300)


@settings(max_examples=200, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(1, 20), elements=st.floats(allow_nan=False)))
def test_prop_sigmoid(x):
    got = sigmoid(x)
    np.testing.assert_allclose(got, ref(sps.expit, x), rtol=2 * EPS[np.dtype(np.float64)], atol=1e-300)
    np.testing.assert_allclose(got + sigmoid(-x), 1.0, atol=2 * EPS[np.dtype(np.float64)])
