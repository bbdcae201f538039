"""compute's last edge cases (issue 13, section 8): each regression beside a property that finds it.

References are independent of compute: :mod:`decimal` at 60 digits with an
exponent range no float reaches (plain loops over exact ``Decimal(float)``
values), SciPy, or exact identities.  Warnings are errors in the test
configuration, so calling a function is also the check that it emits none.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compute
from tests.compute import kernel_emulation as emulate
from tests.compute.support import ref
from tests.compute.test_kernel_emulation import assert_matches, small_plan

F32_MAX = float(np.finfo(np.float32).max)
F64_MAX = float(np.finfo(np.float64).max)
CTX = decimal.Context(prec=60, Emin=-(10**9), Emax=10**9)


# --------------------------------------------------------------------------
# high-precision references: exact Decimal(float) inputs, 60-digit arithmetic
# --------------------------------------------------------------------------
def dec_log_softmax(x, t: float) -> list[Decimal]:
    """``d_i - log(sum(exp(d)))`` with ``d = (x - max) / t``, in Decimal (finite ``x``)."""
    with decimal.localcontext(CTX):
        top = max(Decimal(float(v)) for v in x)
        d = [(Decimal(float(v)) - top) / Decimal(float(t)) for v in x]
        lse = sum((v.exp() for v in d), Decimal(0)).ln()
        return [v - lse for v in d]


def dec_softmax(x, t: float) -> list[Decimal]:
    with decimal.localcontext(CTX):
        return [v.exp() for v in dec_log_softmax(x, t)]


def dec_smooth_max(x, t: float) -> Decimal:
    """``t * log(sum(exp(x / t))) = max + t * log(sum(exp((x - max) / t)))`` in Decimal."""
    with decimal.localcontext(CTX):
        top = max(Decimal(float(v)) for v in x)
        d = [(Decimal(float(v)) - top) / Decimal(float(t)) for v in x]
        return top + Decimal(float(t)) * sum((v.exp() for v in d), Decimal(0)).ln()


def as_floats(values, dtype=np.float64) -> np.ndarray:
    """Decimal values rounded once to float64 (then to ``dtype``)."""
    with np.errstate(all="ignore"):
        return np.array([float(v) for v in values]).astype(dtype)


def dec_entmax(x, alpha: float) -> list[float]:
    """alpha-entmax by bisection on ``log u``, ``u = -tau`` (any u > 0 is representable)."""
    with decimal.localcontext(CTX):
        a1 = Decimal(alpha) - 1
        top = max(Decimal(float(v)) for v in x)
        z = [a1 * (Decimal(float(v)) - top) for v in x]  # max 0

        def probs(u: Decimal) -> list[Decimal]:
            return [((v + u).ln() / a1).exp() if v + u > 0 else Decimal(0) for v in z]

        lo, hi = Decimal(-(10**7)), Decimal(1)  # log u: sum(probs) grows with u, >= 1 at u = e
        for _ in range(220):
            mid = (lo + hi) / 2
            if sum(probs(mid.exp())) >= 1:
                hi = mid
            else:
                lo = mid
        p = probs(hi.exp())
        total = sum(p)
        return [float(v / total) for v in p]


# strategies: scores near the float limits (where x - max overflows) mixed with ordinary ones
def scores(limit: float, width: int = 64):
    near = st.floats(0.4 * limit, limit, width=width)
    return st.one_of(near, near.map(lambda v: -v), st.floats(-1e3, 1e3, width=width), st.just(0.0))


def log_uniform(lo_exp: float, hi_exp: float):
    return st.floats(lo_exp, hi_exp).map(lambda e: float(10.0**e))


# --------------------------------------------------------------------------
# 1. x - max overflows while (x - max) / T is finite
# --------------------------------------------------------------------------
def test_overflowing_shift_regressions():
    got = compute.log_softmax(np.float32([F32_MAX, -F32_MAX]), temperature=2)
    np.testing.assert_array_equal(got, np.float32([0.0, -F32_MAX]))
    p = compute.softmax([1e308, -1e308], temperature=1e308)
    np.testing.assert_allclose(p, sps.softmax([1.0, -1.0]), rtol=1e-15)  # was [1, 0]
    steps = compute.softmax_steps([1e308, -1e308], temperature=1e308)
    np.testing.assert_array_equal(steps.probs, p)
    np.testing.assert_array_equal(steps.shifted, [0.0, -2.0])
    np.testing.assert_allclose(compute.smooth_max([1e308, -1e308], 1e308), 1e308 * math.log1p(math.exp(-2.0)) + 1e308,
                               rtol=1e-15)
    # the online partials (and so the kernels' emulation) follow the same rule
    np.testing.assert_allclose(compute.finish_softmax([1e308, -1e308], 1e308, 1 + math.exp(-2.0), 1e308), p,
                               rtol=1e-15)
    np.testing.assert_allclose(emulate.emulate_softmax(np.array([[1e308, -1e308]]), temperature=1e308)[0], p,
                               rtol=1e-15)


@settings(max_examples=120, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_prop_shift_matches_high_precision(data, dtype):
    limit = float(np.finfo(dtype).max)
    width = 32 if dtype == np.float32 else 64
    x = data.draw(hnp.arrays(dtype, st.integers(2, 6), elements=scores(limit, width)))
    t = data.draw(log_uniform(-1, math.log10(limit) + 1 if dtype == np.float32 else 308))
    want_log = dec_log_softmax(x, t)
    tol = 8 * float(np.finfo(dtype).eps)
    log_p = compute.log_softmax(x, temperature=t)
    np.testing.assert_allclose(log_p, as_floats(want_log, dtype), rtol=tol, atol=tol)
    p = compute.softmax(x, temperature=t)
    np.testing.assert_allclose(p, as_floats(dec_softmax(x, t), dtype), rtol=64 * tol, atol=tol)
    assert np.isclose(p.sum(), 1, rtol=0, atol=x.size * tol)
    assert np.array_equal(compute.softmax_steps(x, t).probs, compute.softmax(x.astype(np.float64), temperature=t))
    sm = float(compute.smooth_max(x, t))
    want = as_floats([dec_smooth_max(x, t)], dtype)[0]  # inf where it is beyond the dtype
    assert math.isclose(sm, want, rel_tol=tol, abs_tol=tol * t) or (math.isinf(want) and sm == want)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 40, 65, 250, 450]), t=log_uniform(0, 308),
       threads=st.sampled_from([32, 64]))
def test_prop_kernel_emulation_follows_the_rule(seed, n, t, threads):
    """Every kernel path's partials and merges (emulated) agree with compute on overflowing shifts."""
    rng = np.random.default_rng(seed)
    x = rng.choice([F64_MAX, -F64_MAX, 1e308, -1e308, 0.5e308, 0.0, -3.0], size=(2, n))
    x[:, 0] = rng.uniform(0.5, 1.0, 2) * F64_MAX  # a huge maximum in every row
    plan = small_plan(*x.shape, threads=threads)
    for kind in ("softmax", "log_softmax"):
        want = {"softmax": compute.softmax, "log_softmax": compute.log_softmax}[kind](x, temperature=t)
        got = emulate.emulate_softmax(x, temperature=t, kind=kind, plan=plan)
        assert_matches(got, want, kind)
        if kind == "log_softmax":  # and both are right
            np.testing.assert_allclose(got[0], as_floats(dec_log_softmax(x[0], t)), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("t", [3.0, 1e35, 1e50])
def test_ordinary_entries_keep_their_bits(dtype, t):
    """The rule only touches entries whose x - max overflowed: elsewhere the plain formula's bits."""
    from compute._rows import _shifted

    rng = np.random.default_rng(5)
    big = float(np.finfo(dtype).max)
    x = np.concatenate([rng.uniform(-0.45, 1, 50) * big, [big, -big, 0.0, -1.0]]).astype(dtype)
    with np.errstate(all="ignore"):
        d = x - x.max()
        t_w = dtype(t)
        plain = d / t_w if np.isfinite(t_w) else (d.astype(np.float64) / t).astype(dtype)
        got = _shifted(x, 0, t)
    ok = np.isfinite(d)
    assert (~ok).any() and ok.sum() > 10
    np.testing.assert_array_equal(got[ok], plain[ok])
    assert np.all(np.isfinite(got))  # every true (x - max) / t here is within range
    np.testing.assert_allclose(got[~ok], as_floats(dec_shift(x[~ok], x.max(), t), dtype),
                               rtol=4 * float(np.finfo(dtype).eps))
    if dtype == np.float64:
        np.testing.assert_array_equal(compute.softmax_steps(x, t).shifted, got)


def dec_shift(x, top, t):
    with decimal.localcontext(CTX):
        return [(Decimal(float(v)) - Decimal(float(top))) / Decimal(float(t)) for v in x]


# --------------------------------------------------------------------------
# 2. softmax_over_temperatures outside the row dtype's range
# --------------------------------------------------------------------------
def test_over_temperatures_regression():
    x = np.float32([1.0, 2.0])
    got = compute.softmax_over_temperatures(x, [1e-50, 1e39])
    np.testing.assert_array_equal(got, [[0.0, 1.0], [0.5, 0.5]])


@settings(max_examples=150, deadline=None)
@given(
    x=hnp.arrays(st.sampled_from([np.float32, np.float64]), st.integers(1, 6),
                 elements=st.one_of(st.floats(-F32_MAX, F32_MAX, width=32), st.floats(-10, 10, width=32))),
    ts=st.lists(log_uniform(-60, 60), min_size=1, max_size=6),
)
def test_prop_over_temperatures_is_one_call_per_t(x, ts):
    got = compute.softmax_over_temperatures(x, ts)
    want = np.array([compute.softmax(x, temperature=t) for t in ts])
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------
# 3. flash_attention with a scale outside float32's range
# --------------------------------------------------------------------------
def test_flash_scale_regression():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3))
    out, lse = compute.flash_attention(q, k, v, scale=1e50, tile=2)
    weights, want = compute.attention(q, k, v, scale=1e50)
    assert not np.isnan(out).any()
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    trace = compute.flash_attention_trace(q, k, v, tile=2, scale=1e50)
    np.testing.assert_allclose(trace.output, want, rtol=1e-6, atol=1e-6)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.one_of(log_uniform(-60, 60), st.sampled_from([1e-50, 1e39, 1e50])),
       dtype=st.sampled_from([np.float32, np.float64]),
       causal=st.booleans(), tile=st.integers(1, 5))
def test_prop_flash_matches_attention_at_any_scale(seed, scale, dtype, causal, tile):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((5, 3)).astype(dtype) for _ in range(3))
    out, lse = compute.flash_attention(q, k, v, scale=scale, causal=causal, tile=tile)
    _, want = compute.attention(q, k, v, scale=scale, causal=causal)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    scores = compute.attention_scores(q, k, scale=scale)
    if causal:
        scores = np.where(compute.causal_mask(5, 5), scores, -np.inf)
    np.testing.assert_allclose(lse, ref(sps.logsumexp, scores.astype(np.float64), axis=-1), rtol=tol, atol=tol)


# --------------------------------------------------------------------------
# 4. entmax at huge alpha, warnings from the curves, masked arrays
# --------------------------------------------------------------------------
def test_entmax_huge_alpha_regression():
    np.testing.assert_allclose(compute.entmax(np.zeros(3), alpha=1e4), [1 / 3] * 3, rtol=1e-15)
    np.testing.assert_allclose(compute.entmax([0.0, 0.0, -1.0], alpha=1e4), [0.5, 0.5, 0.0], atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(base=st.lists(st.floats(-3, 3).map(lambda v: round(v, 1)), min_size=1, max_size=4),
       ties=st.integers(0, 4), alpha=st.one_of(log_uniform(0.1, 6), st.floats(1.05, 4.0)))
def test_prop_entmax_matches_high_precision(base, ties, alpha):
    x = np.array(base + [max(base)] * ties)  # integer-like logits tie at the max
    p = compute.entmax(x, alpha)
    assert np.all(np.isfinite(p))
    assert math.isclose(p.sum(), 1.0, abs_tol=1e-12)
    np.testing.assert_allclose(p, dec_entmax(x, alpha), rtol=0, atol=1e-6)


def dec_curves(x, t: float) -> tuple[float, float, int]:
    """(entropy, top-2 gap, tokens above 1 %) of softmax(x / t), in Decimal."""
    p = dec_softmax(x, t)
    with decimal.localcontext(CTX):
        h = -sum((v * v.ln() for v in p if v > 0), Decimal(0))
        top = sorted(p, reverse=True) + [Decimal(0)]
    return float(h), float(top[0] - top[1]), sum(1 for v in p if v > Decimal("0.01"))


def test_sampling_curves_regression():
    ts = [0.5, 1.0, 1e308]
    got = compute.sampling_curves([1e308, -1e308, 0.0], ts)
    for i, t in enumerate(ts):
        h, gap, above = dec_curves([1e308, -1e308, 0.0], t)
        assert math.isclose(got["entropy"][i], h, rel_tol=1e-12, abs_tol=1e-15)
        assert math.isclose(got["top2_gap"][i], gap, rel_tol=1e-12, abs_tol=1e-15)
        assert got["above_1pct"][i] == above


@settings(max_examples=80, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(1, 6), elements=scores(F64_MAX)),
       ts=st.lists(log_uniform(-2, 308), min_size=1, max_size=4))
def test_prop_sampling_curves_match_high_precision(x, ts):
    got = compute.sampling_curves(x, ts)
    for i, t in enumerate(ts):
        h, gap, above = dec_curves(x, t)
        assert math.isclose(got["entropy"][i], h, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(got["perplexity"][i], math.exp(h), rel_tol=1e-9)
        assert math.isclose(got["top2_gap"][i], gap, rel_tol=1e-9, abs_tol=1e-12)
        if all(abs(float(v) - 0.01) > 1e-9 for v in dec_softmax(x, t)):  # no probability at the 1 % edge
            assert got["above_1pct"][i] == above


def test_smooth_max_curve_float16_regression():
    got = compute.smooth_max_curve(np.float16([0, 0, 0]), [59639.0])
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, [np.inf])  # 59639 log 3 = 65520.2 rounds past float16's max
    np.testing.assert_array_equal(got, [compute.smooth_max(np.float16([0, 0, 0]), 59639.0)])


@settings(max_examples=100, deadline=None)
@given(
    x=hnp.arrays(st.sampled_from([np.float16, np.float32, np.float64]), st.integers(1, 5),
                 elements=st.floats(-6e4, 6e4, width=16)),
    ts=st.lists(log_uniform(-3, 30), min_size=1, max_size=4),
)
def test_prop_smooth_max_curve_is_quiet_and_one_call_per_t(x, ts):
    got = compute.smooth_max_curve(x, ts)
    np.testing.assert_array_equal(got, np.array([compute.smooth_max(x, t) for t in ts], dtype=x.dtype))
    mins = compute.smooth_min_curve(x, ts)
    np.testing.assert_array_equal(mins, np.array([compute.smooth_min(x, t) for t in ts], dtype=x.dtype))


ROW = np.ma.masked_array([1.0, 5.0, 2.0, 0.5], mask=[False, True, False, False])
GRID = np.ma.masked_array(np.eye(4), mask=np.eye(4, dtype=bool))
MASKED_CALLS = {
    "softmax": lambda: compute.softmax(ROW),
    "log_softmax": lambda: compute.log_softmax(ROW),
    "logsumexp": lambda: compute.logsumexp(ROW),
    "naive_softmax": lambda: compute.naive_softmax(ROW),
    "softmax_steps": lambda: compute.softmax_steps(ROW),
    "softmax_over_temperatures": lambda: compute.softmax_over_temperatures(ROW, [1.0]),
    "entropy": lambda: compute.entropy(ROW),
    "sparsemax": lambda: compute.sparsemax(ROW),
    "entmax": lambda: compute.entmax(ROW, 1.5),
    "hardmax": lambda: compute.hardmax(ROW),
    "sigmoid": lambda: compute.sigmoid(ROW),
    "smooth_max": lambda: compute.smooth_max(ROW),
    "smooth_max_curve": lambda: compute.smooth_max_curve(ROW, [1.0]),
    "softmax_jacobian": lambda: compute.softmax_jacobian(ROW),
    "cross_entropy": lambda: compute.cross_entropy(ROW, 0),
    "softmax_in": lambda: compute.softmax_in(ROW, "float32"),
    "to_bfloat16": lambda: compute.to_bfloat16(ROW),
    "sample": lambda: compute.sample(ROW, 5, seed=0),
    "gumbel_softmax": lambda: compute.gumbel_softmax(ROW, 1.0, seed=0),
    "filter_probs": lambda: compute.filter_probs(ROW, top_k=2),
    "sampling_curves": lambda: compute.sampling_curves(ROW, [1.0]),
    "moe_route": lambda: compute.moe_route(ROW[None, :], 2),
    "top_indices": lambda: compute.top_indices(ROW, 2),
    "online_softmax_trace": lambda: compute.online_softmax_trace(ROW, 2),
    "tree_merge_trace": lambda: compute.tree_merge_trace(ROW, 2),
    "attention": lambda: compute.attention(GRID, np.eye(4), np.eye(4)),
    "attention_scores": lambda: compute.attention_scores(np.eye(4), GRID),
    "flash_attention": lambda: compute.flash_attention(np.eye(4), np.eye(4), GRID),
    "max_pool2d": lambda: compute.max_pool2d(GRID, 2, 2),
    "attention mask": lambda: compute.attention(np.eye(4), np.eye(4), np.eye(4), mask=GRID > 0.5),
    "smoothed_target": lambda: compute.smoothed_target(4, np.ma.masked_array([0, 1], mask=[0, 1])),
    "expert_load": lambda: compute.expert_load(np.ma.masked_array([0, 1], mask=[0, 1]), 3),
    "chi_square_test": lambda: compute.chi_square_test(ROW, np.ones(4)),
    "finish_softmax": lambda: compute.finish_softmax(ROW, 5.0, 2.0),
    "smooth_min": lambda: compute.smooth_min(ROW),
}


@pytest.mark.parametrize("name", sorted(MASKED_CALLS))
def test_masked_arrays_are_refused(name):
    with pytest.raises(TypeError, match="masked array"):
        MASKED_CALLS[name]()


def test_a_mask_free_masked_array_is_refused_too_but_plain_data_passes():
    with pytest.raises(TypeError, match="masked array"):
        compute.softmax(np.ma.masked_array([1.0, 2.0]))
    np.testing.assert_array_equal(compute.softmax(ROW.filled(-np.inf)), compute.softmax([1.0, -np.inf, 2.0, 0.5]))


# --------------------------------------------------------------------------
# 5. logsumexp keeps a tiny remainder (log1p, as SciPy since gh-18295)
# --------------------------------------------------------------------------
def test_logsumexp_log1p_regression():
    got = float(compute.logsumexp([0.0, -40.0]))
    assert got == pytest.approx(4.248354255291589e-18, rel=1e-15)
    assert got == float(sps.logsumexp([0.0, -40.0]))
    assert float(compute.logsumexp(np.float32([0.0, -20.0]))) == pytest.approx(math.exp(-20.0), rel=1e-6)
    # the max counted, not summed: ties add log(k) exactly
    assert float(compute.logsumexp([3.0, 3.0, 3.0, 3.0 - 50])) == pytest.approx(
        3 + math.log(3) + math.exp(-50) / 3, rel=1e-16)


def test_the_kernels_logsumexp_differs_by_the_rest_only():
    """The kernels (and their emulation) finish with m + log(d): the rest below eps is lost, no more."""
    x = np.array([[0.0, -45.0], [3.0, 3.0 - 40]])
    got = emulate.emulate_softmax(x, kind="logsumexp")
    want = compute.logsumexp(x)
    assert got[0] == 0.0 and want[0] == pytest.approx(math.exp(-45.0), rel=1e-15)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(want, [math.log1p(math.exp(-45.0)), 3 + math.log1p(math.exp(-40.0))], rtol=1e-16)


@settings(max_examples=150, deadline=None)
@given(
    top=st.one_of(st.just(0.0), st.floats(-1e3, 1e3)),
    gaps=st.lists(st.floats(36.0, 700.0), min_size=1, max_size=6),
    ties=st.integers(1, 3),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_prop_logsumexp_dominated_matches_scipy(top, gaps, ties, dtype):
    x = np.array([top] * ties + [top - g for g in gaps]).astype(dtype)
    got = compute.logsumexp(x)
    want = ref(sps.logsumexp, x)
    tol = 4 * float(np.finfo(dtype).eps)
    sub = 2 * float(np.finfo(dtype).smallest_subnormal)  # a rest in the subnormals has an absolute last place
    np.testing.assert_allclose(got, want, rtol=tol, atol=sub)
    rest = math.fsum(math.exp(float(v) - float(x.max())) for v in x[ties:])
    exact = float(x.max()) + math.log(ties) + math.log1p(rest / ties)
    assert math.isclose(float(got), exact, rel_tol=tol, abs_tol=sub) or (dtype == np.float32 and math.isclose(
        float(got), float(dtype(exact)), rel_tol=tol, abs_tol=sub))
    if top == 0.0 and ties == 1 and dtype == np.float64:
        assert float(got) > 0.0  # the term that made it positive survived


def test_smooth_max_curve_of_a_float16_row_keeps_float16s_overflow_rules():
    """Found by Hypothesis: the curve's per-T fallback ran on the float32 working copy, whose shift does not
    overflow where float16's does, and one ulp came out different."""
    x = np.array([-5.69e4, 4.49e4, 0.0], dtype=np.float16)
    np.testing.assert_array_equal(compute.smooth_max_curve(x, [10000.0, 3.0]),
                                  np.array([compute.smooth_max(x, 10000.0), compute.smooth_max(x, 3.0)]))
