"""The LM head (filters, draws, router, chi-square, curves) against independent implementations.

References: a plain Python loop over sorted probabilities for the knobs, a
NumPy transcription of transformers' logits warpers (and the real ones when
``transformers`` and ``torch`` are importable), SciPy for the chi-square
test and its p-value, plain loops for the router.  Draws are checked with a
chi-square test at fixed seeds (deterministic, not a flaky bound).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import compute._draws as draws_mod
import compute._filters as filters_mod
from compute import (
    STAGE_KEPT,
    STAGE_MASKED,
    STAGE_MIN_P,
    STAGE_TOP_K,
    STAGE_TOP_P,
    Cancelled,
    chi2_sf,
    chi_square_test,
    entropy,
    expert_load,
    filter_probs,
    filter_result,
    gumbel_max_sample,
    gumbel_max_steps,
    gumbel_softmax,
    moe_route,
    sample,
    sample_counts,
    sampling_curves,
    softmax,
    top_indices,
    zipf_logits,
)
from tests.compute.support import ref

# --------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------


def loop_filter(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """Plain-Python reference: returns (kept list of bools, filtered list, stage list)."""
    x = [float(v) for v in logits]
    n = len(x)
    finite = [v for v in x if v != -math.inf]
    m = max(finite)
    e = [0.0 if v == -math.inf else math.exp((v - m) / temperature) for v in x]
    kept = [v != -math.inf for v in x]
    stage = [STAGE_KEPT if k else STAGE_MASKED for k in kept]

    def renorm():
        z = sum(e[i] for i in range(n) if kept[i])
        return [e[i] / z if kept[i] else 0.0 for i in range(n)]

    if top_k is not None and top_k < n:
        kth = sorted(x, reverse=True)[top_k - 1]
        for i in range(n):
            if kept[i] and x[i] < kth:
                kept[i], stage[i] = False, STAGE_TOP_K
    if top_p is not None:
        p = renorm()
        order = sorted(range(n), key=lambda i: -p[i])
        mass_before, cut = 0.0, None
        for i in order:
            if mass_before < top_p and p[i] > 0:
                cut = p[i]
            mass_before += p[i]
        for i in range(n):
            if kept[i] and p[i] < cut:
                kept[i], stage[i] = False, STAGE_TOP_P
    if min_p is not None:
        p = renorm()
        top = max(p)
        for i in range(n):
            if kept[i] and p[i] < min_p * top:
                kept[i], stage[i] = False, STAGE_MIN_P
    return kept, renorm(), stage


def hf_filter(logits, temperature=1.0, top_k=None, top_p=None, min_p=None):
    """NumPy transcription of transformers' Temperature/TopK/TopP/MinP warpers (1-D)."""
    scores = np.asarray(logits, dtype=np.float64) / temperature
    if top_k is not None:
        k = min(top_k, scores.size)
        scores = np.where(scores < np.sort(scores)[::-1][k - 1], -np.inf, scores)
    if top_p is not None:
        order = np.argsort(scores, kind="stable")  # ascending
        cum = np.cumsum(ref(softmax, scores[order]))
        remove = cum <= 1 - top_p
        remove[-1:] = False
        rm = np.zeros(scores.size, bool)
        rm[order] = remove
        scores = np.where(rm, -np.inf, scores)
    if min_p is not None:
        probs = ref(softmax, scores)
        scores = np.where(probs < min_p * probs.max(), -np.inf, scores)
    return np.isfinite(scores), ref(softmax, scores)


def partial_sums_near(p, top_p, eps=1e-9):
    """True when a cumulative sum of the sorted probabilities is within eps of top_p."""
    c = np.cumsum(np.sort(p)[::-1])
    return bool(np.any(np.abs(c - top_p) < eps) or np.any(np.abs((1 - top_p) - np.cumsum(np.sort(p))) < eps))


logit_rows = st.lists(
    st.floats(-20, 20, allow_nan=False).map(lambda v: round(v, 2)), min_size=1, max_size=40
)
knob_t = st.floats(0.05, 5.0)
knob_k = st.none() | st.integers(1, 45)
knob_p = st.none() | st.floats(0.01, 1.0)
knob_m = st.none() | st.floats(0.0, 1.0)


# --------------------------------------------------------------------------
# filter_probs / filter_result
# --------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(logit_rows, knob_t, knob_k, knob_p, knob_m)
def test_filter_matches_plain_loop(x, t, k, p, m):
    assume(p is None or not partial_sums_near(ref(softmax, np.array(x), temperature=t), p, 1e-9))
    res = filter_result(x, t, top_k=k, top_p=p, min_p=m)
    kept, filt, stage = loop_filter(x, t, k, p, m)
    np.testing.assert_array_equal(res.kept, kept)
    np.testing.assert_array_equal(res.stage, stage)
    np.testing.assert_allclose(res.filtered, filt, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(res.filtered.sum(), 1.0, rtol=1e-12)
    assert np.all(res.filtered[~res.kept] == 0.0)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 60), knob_t, knob_k, knob_p, knob_m)
def test_filter_matches_transformers_warpers_without_ties(seed, v, t, k, p, m):
    x = np.random.default_rng(seed).normal(0, 3, v)
    assume(np.unique(x).size == v)
    probs = ref(softmax, x, temperature=t)
    assume(p is None or not partial_sums_near(probs, p, 1e-9))
    kept, filt = hf_filter(x, t, k, p, m)
    res = filter_result(x, t, k, p, m)
    np.testing.assert_array_equal(res.kept, kept)
    np.testing.assert_allclose(res.filtered, filt, rtol=1e-10, atol=1e-300)


def test_filter_matches_real_transformers_when_installed():
    torch = pytest.importorskip("torch")
    lp = pytest.importorskip("transformers.generation.logits_process")
    if not hasattr(lp, "MinPLogitsWarper"):
        pytest.skip("this transformers has no MinPLogitsWarper")
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.normal(0, 2, 300)
        scores = torch.tensor(x[None, :], dtype=torch.float64)
        t, k, p, m = 0.7, 120, 0.8, 0.02
        for warper in (
            lp.TemperatureLogitsWarper(t),
            lp.TopKLogitsWarper(k),
            lp.TopPLogitsWarper(p),
            lp.MinPLogitsWarper(m),
        ):
            scores = warper(None, scores)
        hf = torch.softmax(scores, dim=-1).numpy()[0]
        np.testing.assert_allclose(filter_probs(x, t, k, p, m), hf, rtol=1e-9, atol=1e-300)


def test_long_rows_take_the_bucketed_top_p_path_and_agree():
    # V > 2048 goes through the bucketed cut; compare with a full sort.
    rng = np.random.default_rng(11)
    for v, scale in [(5000, 1.0), (20_000, 3.0), (50_257, 0.3)]:
        x = rng.normal(0, scale, v)
        x[rng.integers(0, v, 50)] = x[0]  # ties
        for t in (0.3, 1.0, 2.0):
            for p in (0.05, 0.5, 0.9, 0.99, 0.999999):
                probs = softmax(x, temperature=t)
                if partial_sums_near(probs, p, 1e-10):
                    continue
                kept_hf, _ = hf_filter(x, t, top_p=p)
                res = filter_result(x, t, top_p=p)
                # identical except that we keep every token tied with the last kept one
                cut = probs[res.kept].min()
                np.testing.assert_array_equal(res.kept, kept_hf | (probs == cut))
                assert res.kept.sum() - kept_hf.sum() <= np.count_nonzero(probs == cut)


def test_long_rows_top_k_then_top_p_uses_only_survivors():
    x = zipf_logits(30_000, seed=4)
    for k, p in [(5000, 0.5), (3000, 0.95), (100, 0.3)]:
        kept, filt, _ = loop_filter(x, 0.9, k, p)
        res = filter_result(x, 0.9, top_k=k, top_p=p)
        np.testing.assert_array_equal(res.kept, kept)
        np.testing.assert_allclose(res.filtered, filt, rtol=1e-9, atol=1e-300)


def test_knob_order_is_transformers():
    logits = np.log([0.5, 0.3, 0.2])
    # top-k first: renormalised [0.625, 0.375], so top_p = 0.6 keeps one token;
    # top-p first would keep two.
    np.testing.assert_array_equal(filter_result(logits, top_k=2, top_p=0.6).kept, [True, False, False])
    logits = np.log([0.4, 0.3, 0.2, 0.1])
    # top-p first keeps 3 (0.4 + 0.3 < 0.75); min-p 0.3 (threshold 0.4 * 0.3 = 0.12 after
    # renormalising) keeps them; min-p first would leave 0.444/0.333/0.222 and top-p 2 tokens.
    res = filter_result(logits, top_p=0.75, min_p=0.3)
    np.testing.assert_array_equal(res.kept, [True, True, True, False])
    np.testing.assert_array_equal(res.stage, [0, 0, 0, STAGE_TOP_P])


def test_ties_at_the_boundary_are_kept():
    res = filter_result([3.0, 2.0, 2.0, 2.0, 1.0], top_k=2)
    np.testing.assert_array_equal(res.kept, [1, 1, 1, 1, 0])
    # probabilities 0.4, 0.2, 0.2, 0.2: top_p 0.5 reaches the mass inside the tie
    res = filter_result(np.log([0.4, 0.2, 0.2, 0.2]), top_p=0.5)
    np.testing.assert_array_equal(res.kept, [1, 1, 1, 1])
    res = filter_result(np.log([0.4, 0.2, 0.2, 0.2]), top_p=0.39)
    np.testing.assert_array_equal(res.kept, [1, 0, 0, 0])


def test_top_p_exact_boundary_is_transformers():
    # transformers removes a token when its ascending cumulative sum is <= 1 - top_p,
    # so mass that reaches top_p exactly is enough (the 0.25s are removed).
    x = [math.log(2), 0.0, 0.0]
    assert softmax(x).tolist() == [0.5, 0.25, 0.25]  # exact, so the boundary is hit exactly
    np.testing.assert_array_equal(filter_result(x, top_p=0.5).kept, [1, 0, 0])
    np.testing.assert_array_equal(hf_filter(x, top_p=0.5)[0], [1, 0, 0])
    np.testing.assert_array_equal(filter_result(x, top_p=0.75).kept, [1, 1, 1])  # tie kept
    # the bucketed long-row path: one token of 1/2 and 4096 of 2**-13 (all exact)
    p = np.concatenate([[0.5], np.full(4096, 2.0**-13)])
    assert filters_mod._top_p_cut(p, 0.5) == 0.5
    assert filters_mod._top_p_cut(p, 0.5 + 2.0**-13) == 2.0**-13
    assert filters_mod._top_p_cut(p, 0.25) == 0.5
    # the boundary inside one bucket (a and b share exponent and top mantissa bits)
    a, b = 2.0**-4, 2.0**-4 + 2.0**-9
    for pad in (0, 3000):  # sorted path, bucketed path
        p = np.concatenate([np.zeros(pad), [a, b, 1 - a - b]])
        assert filters_mod._top_p_cut(p, 1 - a) == b  # a's tail is exactly 1 - top_p: removed
        assert filters_mod._top_p_cut(p, 1 - a + 2.0**-20) == a


def test_stages_and_fields():
    x = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -np.inf, -10.0])
    res = filter_result(x, 1.0, top_k=6, top_p=0.99, min_p=0.1)
    assert res.stage[6] == STAGE_MASKED and res.stage[7] == STAGE_TOP_K
    assert res.stage[5] == STAGE_TOP_P  # mass of the 5 best is > 0.99
    assert res.stage[3] == STAGE_MIN_P and res.stage[4] == STAGE_MIN_P
    np.testing.assert_array_equal(res.kept, res.stage == STAGE_KEPT)
    np.testing.assert_allclose(res.probs, softmax(x))
    assert int(res.n_kept) == 3
    assert res.kept.dtype == bool and res.stage.dtype == np.int8
    assert (res.top_k, res.top_p, res.min_p, res.temperature) == (6, 0.99, 0.1, 1.0)


def test_no_knobs_is_softmax_and_batches_are_row_by_row():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 2, (3, 4, 3000))
    np.testing.assert_array_equal(filter_probs(x, 0.7), softmax(x, temperature=0.7))
    got = filter_probs(x, 0.7, top_k=900, top_p=0.8, min_p=0.01)
    for idx in np.ndindex(3, 4):
        np.testing.assert_array_equal(got[idx], filter_probs(x[idx], 0.7, top_k=900, top_p=0.8, min_p=0.01))
    small = rng.normal(0, 2, (50, 30))  # the vectorised short-row path
    got = filter_probs(small, 1.3, top_p=0.7)
    for i in range(50):
        np.testing.assert_allclose(got[i], loop_filter(small[i], 1.3, None, 0.7)[1], rtol=1e-12)


def test_dtypes():
    x = [1.0, 2.0, 3.0]
    assert filter_probs(x).dtype == np.float64
    assert filter_probs(np.float32(x), top_p=0.5).dtype == np.float32
    assert filter_probs(np.float16(x), top_k=1).dtype == np.float16
    assert filter_probs(np.array([1, 2, 3])).dtype == np.float64


@settings(max_examples=100, deadline=None)
@given(logit_rows, knob_t, st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_kept_set_is_monotone_in_top_p(x, t, p1, p2):
    lo, hi = sorted((p1, p2))
    a, b = filter_result(x, t, top_p=lo).kept, filter_result(x, t, top_p=hi).kept
    assert np.all(b[a])


@settings(max_examples=100, deadline=None)
@given(logit_rows, knob_t, st.integers(1, 45), st.integers(1, 45))
def test_kept_set_is_monotone_in_top_k(x, t, k1, k2):
    lo, hi = sorted((k1, k2))
    a, b = filter_result(x, t, top_k=lo).kept, filter_result(x, t, top_k=hi).kept
    assert np.all(b[a]) and a.sum() >= min(lo, len(x))


@settings(max_examples=100, deadline=None)
@given(logit_rows, knob_t, st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_kept_set_is_antitone_in_min_p(x, t, m1, m2):
    lo, hi = sorted((m1, m2))
    a, b = filter_result(x, t, min_p=lo).kept, filter_result(x, t, min_p=hi).kept
    assert np.all(a[b]) and b.any()


@settings(max_examples=100, deadline=None)
@given(logit_rows, knob_t, knob_k, knob_p, knob_m)
def test_always_a_distribution_with_the_top_token(x, t, k, p, m):
    f = filter_probs(x, t, top_k=k, top_p=p, min_p=m)
    assert np.all(f >= 0) and abs(f.sum() - 1.0) < 1e-12
    assert f[int(np.argmax(x))] > 0


@given(st.lists(st.floats(-10, 10), min_size=2, max_size=30, unique=True))
def test_temperature_to_zero_gives_argmax(x):
    x = np.array(x)
    assume(np.sort(x)[-1] - np.sort(x)[-2] > 1e-3)
    f = filter_probs(x, temperature=1e-6, top_p=0.9)
    np.testing.assert_array_equal(f, np.eye(x.size)[np.argmax(x)])


def test_top_p_one_keeps_everything_with_mass():
    x = np.array([0.0, -1.0, -2000.0, -np.inf])  # exp(-2000) underflows to 0
    res = filter_result(x, top_p=1.0)
    np.testing.assert_array_equal(res.kept, [True, True, False, False])
    np.testing.assert_array_equal(filter_result(x).kept, [True, True, True, False])


def test_non_finite_logits():
    res = filter_result([-np.inf, 1.0, -np.inf], top_k=3)
    np.testing.assert_array_equal(res.kept, [False, True, False])
    np.testing.assert_array_equal(res.filtered, [0, 1, 0])
    np.testing.assert_array_equal(res.stage, [STAGE_MASKED, 0, STAGE_MASKED])
    np.testing.assert_array_equal(filter_probs([np.inf, 1.0, np.inf]), [0.5, 0, 0.5])
    with pytest.raises(ValueError, match="NaN"):
        filter_probs([1.0, np.nan])
    with pytest.raises(ValueError, match=r"row 1"):
        filter_probs([[1.0, 2.0], [np.nan, 0.0]])
    with pytest.raises(ValueError, match="every logit is -inf"):
        filter_probs([-np.inf, -np.inf])
    with pytest.raises(ValueError, match="empty"):
        filter_probs([])
    with pytest.raises(ValueError, match="scalar"):
        filter_probs(1.0)


@pytest.mark.parametrize(
    ("kwargs", "exc", "msg"),
    [
        ({"temperature": 0}, ValueError, "temperature"),
        ({"temperature": "hot"}, TypeError, "temperature"),
        ({"top_k": 0}, ValueError, "top_k must be >= 1"),
        ({"top_k": 2.0}, TypeError, "top_k must be an integer"),
        ({"top_k": True}, TypeError, "top_k must be an integer"),
        ({"top_p": 0.0}, ValueError, r"top_p must be in \(0, 1\]"),
        ({"top_p": 1.5}, ValueError, r"top_p must be in \(0, 1\]"),
        ({"top_p": float("nan")}, ValueError, "top_p must be finite"),
        ({"top_p": "0.9"}, TypeError, "top_p must be a real number"),
        ({"min_p": -0.1}, ValueError, r"min_p must be in \[0, 1\]"),
        ({"min_p": 1.01}, ValueError, r"min_p must be in \[0, 1\]"),
    ],
)
def test_knob_validation(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        filter_probs([1.0, 2.0], **kwargs)


def test_knob_edge_values_accepted():
    x = [3.0, 1.0, 2.0]
    np.testing.assert_array_equal(filter_probs(x, top_k=np.int64(99)), softmax(x))
    np.testing.assert_array_equal(filter_probs(x, min_p=0.0), softmax(x))
    np.testing.assert_array_equal(filter_probs(x, min_p=1.0), [1, 0, 0])
    np.testing.assert_array_equal(filter_probs(x, top_p=1e-9), [1, 0, 0])


def test_top_indices():
    x = np.array([1.0, 5.0, 3.0, 5.0, np.nan, 3.0, -np.inf])
    np.testing.assert_array_equal(top_indices(x, 3), [1, 3, 2])
    np.testing.assert_array_equal(top_indices(x, 4), [1, 3, 2, 5])
    np.testing.assert_array_equal(top_indices(x, 100), [1, 3, 2, 5, 0, 4, 6])
    assert top_indices(x, 0).size == 0
    y = np.random.default_rng(0).normal(size=10_000)
    np.testing.assert_array_equal(top_indices(y, 50), np.argsort(-y, kind="stable")[:50])


# --------------------------------------------------------------------------
# draws
# --------------------------------------------------------------------------
ROW = np.array([2.0, 1.0, 0.5, -1.0, 0.0, 1.5, -np.inf, -3.0, 0.7, 1.2])


def test_sample_is_reproducible_and_matches_counts():
    a = sample(ROW, 50_000, seed=7, temperature=0.8, top_k=6)
    b = sample(ROW, 50_000, seed=7, temperature=0.8, top_k=6)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64 and a.shape == (50_000,)
    assert not np.array_equal(a, sample(ROW, 50_000, seed=8, temperature=0.8, top_k=6))
    counts = sample_counts(ROW, 50_000, 7, temperature=0.8, top_k=6)
    np.testing.assert_array_equal(np.bincount(a, minlength=ROW.size), counts)
    # draws come in random order, not sorted
    assert np.count_nonzero(np.diff(a) < 0) > 10_000


@pytest.mark.parametrize(
    "knobs",
    [{}, {"temperature": 0.5}, {"top_k": 3}, {"top_p": 0.8, "temperature": 1.7}, {"min_p": 0.2}],
)
def test_sample_chi_square_against_expected(knobs):
    n = 200_000
    p = filter_probs(ROW, **knobs)
    counts = sample_counts(ROW, n, 2024, **knobs)
    assert counts.sum() == n
    assert np.all(counts[p == 0] == 0)  # never a cut token
    stat, dof, pval = chi_square_test(counts, n * p)
    assert pval > 1e-3, (stat, dof, pval)
    # and the same draws are a terrible fit to the unfiltered softmax when something is cut
    if np.any(p == 0) and np.any(softmax(ROW, temperature=knobs.get("temperature", 1.0))[p == 0] > 1e-3):
        assert chi_square_test(counts, n * softmax(ROW, temperature=knobs.get("temperature", 1.0)))[2] < 1e-10


def test_sample_large_vocabulary_never_hits_zero_probability():
    x = zipf_logits(50_257, seed=1)
    draws = sample(x, 300_000, seed=5, top_p=0.5)
    p = filter_probs(x, top_p=0.5)
    assert np.all(p[draws] > 0)
    counts = np.bincount(draws, minlength=x.size)
    assert chi_square_test(counts, draws.size * p)[2] > 1e-3


def test_sample_last_bin_guard():
    # the last token has all the remaining mass; tiny probabilities before it
    x = np.array([-800.0, -800.0, 0.0, -np.inf, -np.inf])
    assert set(np.unique(sample(x, 10_000, 0))) == {2}
    assert sample(x, 0, 0).shape == (0,)


def test_sample_argument_checks():
    with pytest.raises(ValueError, match="1-D"):
        sample(np.zeros((2, 3)), 10, 0)
    with pytest.raises(ValueError, match="n must be >= 0"):
        sample(ROW, -1, 0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        sample(ROW, 10, 1.5)
    with pytest.raises(TypeError, match="unknown knob"):
        sample(ROW, 10, 0, top_q=0.5)


def test_gumbel_max_agrees_with_inverse_cdf():
    n = 100_000
    for knobs in ({}, {"temperature": 0.6, "top_k": 5}, {"top_p": 0.9, "min_p": 0.05}):
        p = filter_probs(ROW, **knobs)
        g = np.bincount(gumbel_max_sample(ROW, n, 99, **knobs), minlength=ROW.size)
        s = sample_counts(ROW, n, 99, **knobs)
        assert np.all(g[p == 0] == 0)
        assert chi_square_test(g, n * p)[2] > 1e-3
        # two-sample test: both samples from the same law
        table = np.array([g[p > 0], s[p > 0]])
        assert scipy.stats.chi2_contingency(table)[1] > 1e-3


def test_gumbel_max_chunking_progress_and_cancel(monkeypatch):
    whole = gumbel_max_sample(ROW, 5000, 3, temperature=1.3)
    monkeypatch.setattr(draws_mod, "_GUMBEL_CHUNK_ELEMENTS", 64)  # 7 draws per chunk (9 tokens)
    seen = []
    chunked = gumbel_max_sample(ROW, 5000, 3, temperature=1.3, progress=lambda d, t: seen.append((d, t)))
    np.testing.assert_array_equal(whole, chunked)
    assert seen[-1] == (5000, 5000) and len(seen) > 100
    calls = []

    def cancelled():
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(Cancelled):
        gumbel_max_sample(ROW, 5000, 3, cancelled=cancelled)
    assert gumbel_max_sample(ROW, 0, 3).shape == (0,)


def _run_steps(steps):
    """Drive a steps generator by hand: (what it yielded, what it returned)."""
    seen = []
    while True:
        try:
            seen.append(next(steps))
        except StopIteration as stop:
            return seen, stop.value


def test_gumbel_max_steps_returns_the_draws_of_gumbel_max_sample(monkeypatch):
    monkeypatch.setattr(draws_mod, "_GUMBEL_CHUNK_ELEMENTS", 64)  # 7 draws per chunk (9 tokens)
    calls = []
    expected = gumbel_max_sample(ROW, 50, 3, temperature=1.3, top_k=6,
                                 progress=lambda d, t: calls.append((d, t)))
    seen, got = _run_steps(gumbel_max_steps(ROW, 50, 3, temperature=1.3, top_k=6))
    assert got.dtype == np.int64 and np.array_equal(got, expected)
    assert seen == calls
    chunk = 64 // int(np.count_nonzero(filter_probs(ROW, 1.3, top_k=6)))
    assert seen == [(min(d, 50), 50) for d in range(chunk, 50 + chunk, chunk)]
    seen, got = _run_steps(gumbel_max_steps(ROW, 0, 3))
    assert seen == [] and got.shape == (0,)


def test_gumbel_max_steps_one_chunk_per_draw_and_eager_checks(monkeypatch):
    monkeypatch.setattr(draws_mod, "_GUMBEL_CHUNK_ELEMENTS", 1)  # one draw per chunk
    seen, got = _run_steps(gumbel_max_steps(ROW, 6, 11))
    assert seen == [(i, 6) for i in range(1, 7)]
    assert np.array_equal(got, gumbel_max_sample(ROW, 6, 11))
    with pytest.raises(ValueError):
        gumbel_max_steps(ROW, -1, 0)  # checked at the call, before any next()
    with pytest.raises(ValueError):
        gumbel_max_steps(np.zeros((2, 3)), 1, 0)


def test_gumbel_softmax_properties():
    x = np.array([1.0, 0.0, -1.0, 2.0, -np.inf])
    y = gumbel_softmax(x, 1.0, seed=4)
    assert y.shape == x.shape and abs(y.sum() - 1) < 1e-12 and y[-1] == 0
    np.testing.assert_array_equal(y, gumbel_softmax(x, 1.0, seed=4))
    hard = gumbel_softmax(x, 1.0, seed=4, hard=True)
    assert hard.sum() == 1 and set(np.unique(hard)) == {0.0, 1.0}
    assert hard[np.argmax(y)] == 1.0
    # the same noise sharpens towards the hard sample as tau -> 0
    maxima = [gumbel_softmax(x, tau, seed=4).max() for tau in (10.0, 1.0, 0.3, 0.1, 0.01)]
    assert all(a < b for a, b in zip(maxima, maxima[1:]))
    np.testing.assert_allclose(gumbel_softmax(x, 1e-4, seed=4), hard, atol=1e-12)
    np.testing.assert_allclose(gumbel_softmax(x, 1e6, seed=4)[:4], 0.25, atol=1e-4)


def test_gumbel_softmax_hard_draws_follow_softmax():
    x = np.array([1.0, 0.2, -0.5, 0.7])
    n = 100_000
    hard = gumbel_softmax(np.tile(x, (n, 1)), 0.5, seed=12, hard=True)
    assert hard.shape == (n, 4) and np.all(hard.sum(axis=1) == 1)
    relaxed = gumbel_softmax(np.tile(x, (n, 1)), 0.5, seed=12)
    np.testing.assert_array_equal(np.argmax(relaxed, axis=1), np.argmax(hard, axis=1))
    assert chi_square_test(hard.sum(axis=0), n * softmax(x))[2] > 1e-3
    with pytest.raises(ValueError, match="tau"):
        gumbel_softmax(x, 0.0, seed=1)
    assert gumbel_softmax(np.float32(x), 1.0, 0).dtype == np.float32


# --------------------------------------------------------------------------
# router
# --------------------------------------------------------------------------
def test_moe_route_matches_plain_loop():
    rng = np.random.default_rng(5)
    g = rng.normal(0, 1.5, (40, 16))
    g[3, [2, 9]] = g[3, 5]  # ties: lower index first
    for k in (1, 2, 4, 16):
        for t in (0.5, 1.0):
            route = moe_route(g, k, temperature=t)
            for i, row in enumerate(g):
                order = sorted(range(16), key=lambda j: (-row[j], j))[:k]
                e = [math.exp((row[j] - row[order[0]]) / t) for j in order]
                np.testing.assert_array_equal(route.indices[i], order)
                np.testing.assert_allclose(route.weights[i], [v / sum(e) for v in e], rtol=1e-12)
            np.testing.assert_allclose(route.probs, softmax(g, temperature=t))
    indices, weights = moe_route(g, 2)
    assert indices.shape == weights.shape == (40, 2) and indices.dtype == np.int64
    np.testing.assert_array_equal(moe_route(g[0], 2).indices, indices[:1])
    with pytest.raises(ValueError, match="k must be <="):
        moe_route(g, 17)
    with pytest.raises(ValueError, match="k must be >= 1"):
        moe_route(g, 0)


def test_expert_load():
    idx = np.array([[0, 3], [3, 1], [3, 0]])
    np.testing.assert_array_equal(expert_load(idx, 5), [2, 1, 0, 3, 0])
    w = np.array([[0.6, 0.4], [0.9, 0.1], [0.5, 0.5]])
    np.testing.assert_allclose(expert_load(idx, 5, w), [1.1, 0.1, 0, 1.8, 0])
    route = moe_route(np.random.default_rng(1).normal(size=(300, 8)), 2)
    load = expert_load(route.indices, 8)
    assert load.sum() == 600
    with pytest.raises(ValueError, match="expert indices"):
        expert_load(idx, 3)


# --------------------------------------------------------------------------
# chi-square
# --------------------------------------------------------------------------
def test_chi_square_matches_scipy_without_pooling():
    rng = np.random.default_rng(0)
    for bins in (2, 5, 30, 400):
        p = rng.dirichlet(np.ones(bins) * 5)
        n = 100_000
        obs = rng.multinomial(n, p)
        stat, dof, pval = chi_square_test(obs, n * p, min_expected=0)
        want = ref(scipy.stats.chisquare, obs, n * p)
        assert dof == bins - 1
        np.testing.assert_allclose(stat, want.statistic, rtol=1e-12)
        np.testing.assert_allclose(pval, want.pvalue, rtol=1e-9)


def test_chi_square_pools_small_bins():
    obs = np.array([50, 30, 12, 3, 2, 1, 2])
    exp = np.array([48.0, 32.0, 10.0, 4.0, 3.0, 2.0, 1.0])
    stat, dof, pval = chi_square_test(obs, exp)
    want = ref(scipy.stats.chisquare, [50, 30, 12, 8], [48.0, 32.0, 10.0, 10.0])
    assert dof == 3
    np.testing.assert_allclose([stat, pval], [want.statistic, want.pvalue], rtol=1e-10)
    # pooled bin still too small: merged into the smallest remaining bin
    stat, dof, pval = chi_square_test([50, 30, 3, 1], [49.0, 31.0, 2.0, 2.0])
    want = ref(scipy.stats.chisquare, [50, 34], [49.0, 35.0])
    assert dof == 1
    np.testing.assert_allclose([stat, pval], [want.statistic, want.pvalue], rtol=1e-10)


def test_chi_square_special_cases():
    assert chi_square_test([5, 1], [6.0, 0.0]) == (math.inf, 0, 0.0)
    stat, dof, pval = chi_square_test([10], [10.0])
    assert (stat, dof) == (0.0, 0) and math.isnan(pval)
    with pytest.raises(ValueError, match="totals differ"):
        chi_square_test([10, 10], [10.0, 11.0])
    with pytest.raises(ValueError, match="same length"):
        chi_square_test([10, 10], [20.0])
    with pytest.raises(ValueError, match=">= 0"):
        chi_square_test([-1, 21], [10.0, 10.0])


def test_chi2_sf_matches_scipy_over_a_broad_range():
    worst = 0.0
    for dof in (1, 2, 3, 5, 10, 31, 100, 999, 5000, 20_000, 100_000):
        sd = math.sqrt(2 * dof)
        xs = [1e-8, 0.1, 1.0] + list(np.linspace(max(1e-3, dof - 5 * sd), dof + 60 * sd, 25)) + [10 * dof]
        for x in xs:
            want = float(scipy.stats.chi2.sf(x, dof))
            got = chi2_sf(x, dof)
            if want < 1e-290:
                assert got < 1e-280
                continue
            worst = max(worst, abs(got - want) / want)
    assert worst < 1e-10, worst
    assert chi2_sf(0.0, 4) == 1.0 and chi2_sf(math.inf, 4) == 0.0
    assert 0 < chi2_sf(2000.0, 10) < 1e-300 or chi2_sf(2000.0, 10) == 0.0
    np.testing.assert_allclose(chi2_sf(1300.0, 10), scipy.stats.chi2.sf(1300.0, 10), rtol=1e-10)
    with pytest.raises(ValueError):
        chi2_sf(-1.0, 3)
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)


# --------------------------------------------------------------------------
# curves and synthetic logits
# --------------------------------------------------------------------------
def test_sampling_curves_match_direct_computation():
    x = zipf_logits(3000, seed=2)
    x[5] = -np.inf
    ts = np.geomspace(0.05, 5, 17)
    c = sampling_curves(x, ts)
    p = np.array([softmax(x, temperature=t) for t in ts])
    np.testing.assert_allclose(c["entropy"], entropy(p), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(c["perplexity"], np.exp(entropy(p)), rtol=1e-10)
    np.testing.assert_array_equal(c["above_1pct"], np.count_nonzero(p > 0.01, axis=1))
    top2 = np.sort(p, axis=1)[:, -2:]
    np.testing.assert_allclose(c["top2_gap"], top2[:, 1] - top2[:, 0], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(c["temperature"], ts)
    assert np.all(np.diff(c["entropy"]) > 0)  # entropy rises with T
    # +inf rows go the general way
    c = sampling_curves([np.inf, 1.0, np.inf], [0.5, 2.0])
    np.testing.assert_allclose(c["entropy"], math.log(2))
    np.testing.assert_array_equal(c["above_1pct"], [2, 2])
    np.testing.assert_array_equal(c["top2_gap"], [0, 0])
    c = sampling_curves([3.0], [1.0])
    assert c["top2_gap"][0] == 1.0 and c["entropy"][0] == 0.0


def test_sampling_curves_blocks_progress_and_cancel():
    x = zipf_logits(300_000, seed=0)  # 6 temperatures per block
    seen = []
    c = sampling_curves(x, np.linspace(0.5, 2, 13), progress=lambda d, t: seen.append((d, t)))
    assert seen == [(6, 13), (12, 13), (13, 13)]
    np.testing.assert_allclose(c["entropy"][12], entropy(softmax(x, temperature=2.0)), rtol=1e-10)
    with pytest.raises(Cancelled):
        sampling_curves(x, [1.0, 2.0], cancelled=lambda: True)
    with pytest.raises(ValueError, match="temperature"):
        sampling_curves(x, [1.0, -1.0])


def test_zipf_logits():
    x = zipf_logits(50_257)
    assert x.shape == (50_257,) and x.dtype == np.float64
    np.testing.assert_array_equal(x, zipf_logits(50_257))
    assert not np.array_equal(x, zipf_logits(50_257, seed=1))
    assert np.argmax(x) != 0
    clean = zipf_logits(1000, exponent=1.3, noise=0.0)
    ranks = np.arange(1, 1001.0)
    np.testing.assert_allclose(np.sort(softmax(clean))[::-1], ranks**-1.3 / np.sum(ranks**-1.3), rtol=1e-12)
    assert zipf_logits(1).shape == (1,)
    with pytest.raises(ValueError, match="v must be >= 1"):
        zipf_logits(0)
    with pytest.raises(ValueError, match="exponent"):
        zipf_logits(10, exponent=0)
