"""filter_over_temperatures in whole-array passes: each row still one filter_probs, bit for bit.

Aimed at what the batch changes: rows that no knob cut (returned as their softmax) beside rows that
were cut (renormalised), in the same call, and the Sampling view's acceptance-rate curve.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from compute import filter_over_temperatures, filter_probs
from gui.model.sampling.speculative import DRAFT_T, draft_logits, rate_curve


def same_bits(got, want):
    np.testing.assert_array_equal(np.asarray(got).view(np.uint64), np.asarray(want).view(np.uint64))


@settings(max_examples=60, deadline=None)
@given(v=st.sampled_from([3, 20, 60, 2500]), seed=st.integers(0, 2**31 - 1),
       top_p=st.sampled_from([None, 0.3, 0.999, 1.0]), min_p=st.sampled_from([None, 0.0, 1e-6, 0.3]),
       top_k=st.one_of(st.none(), st.integers(1, 70)))
def test_rows_cut_and_uncut_in_one_call(v, seed, top_p, min_p, top_k):
    rng = np.random.default_rng(seed)
    row = rng.normal(0.0, 2.0, v)
    ts = np.geomspace(0.02, 200.0, 13)  # cold rows lose tokens to top-p / min-p, hot rows may lose none
    got = filter_over_temperatures(row, ts, top_k=top_k, top_p=top_p, min_p=min_p)
    for t, out in zip(ts, got):
        same_bits(out, filter_probs(row, temperature=float(t), top_k=top_k, top_p=top_p, min_p=min_p))


def test_untouched_rows_are_their_softmax():
    """min-p of 1e-9 cuts nothing at a high temperature but cuts at a low one: both kinds in one call."""
    row = np.random.default_rng(2).normal(0.0, 3.0, 40)
    ts = np.array([0.05, 100.0])
    got = filter_over_temperatures(row, ts, min_p=1e-9)
    uncut = compute.softmax(row, temperature=100.0)
    same_bits(got[1], uncut)
    assert np.count_nonzero(got[0]) < row.size  # the cold row did lose tokens
    same_bits(got[0], filter_probs(row, temperature=0.05, min_p=1e-9))


def test_rate_curve_is_a_sum_of_min_p_q_per_draft_temperature():
    """The acceptance-rate curve (batched) against filter_probs of the draft at each temperature."""
    z = compute.zipf_logits(5000, seed=4)
    cuts = {"top_k": 50, "top_p": 0.9, "min_p": None}
    p = filter_probs(z, temperature=1.0, **cuts)
    draft = draft_logits(z, 0.7, 3)
    got = rate_curve(p, draft, cuts)
    want = [np.minimum(p, filter_probs(draft, temperature=float(t), **cuts)).sum() for t in DRAFT_T]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


# -- a long row with top-k on: filtered on the top-k survivors only --------------------------------------

@st.composite
def long_rows(draw):
    v = draw(st.sampled_from([2049, 3000, 20_000]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    row = rng.normal(0.0, draw(st.sampled_from([0.3, 3.0, 30.0])), v)
    if draw(st.booleans()):  # ties, also at the k-th largest
        row = np.round(row * draw(st.sampled_from([1.0, 4.0])))
    if draw(st.booleans()):  # -inf logits: a few, or most of the row
        row[rng.random(v) < draw(st.sampled_from([0.01, 0.5, 0.97]))] = -np.inf
        row[rng.integers(v)] = 0.0
    knobs = dict(
        temperature=draw(st.sampled_from([0.01, 0.3, 1.0, 2.5, 50.0])),
        top_k=draw(st.one_of(st.integers(1, 60), st.sampled_from([v // 8, v // 8 + 1, v // 2]))),
        top_p=draw(st.sampled_from([None, 0.05, 0.5, 0.9, 0.999, 1.0])),
        min_p=draw(st.sampled_from([None, 0.0, 1e-4, 0.05, 0.5, 1.0])),
    )
    return row, knobs


@settings(max_examples=120, deadline=None)
@given(long_rows())
def test_the_top_k_survivors_path_is_the_whole_row_path_bit_for_bit(case):
    import compute._filters as filters

    row, knobs = case
    got = compute.filter_result(row, **knobs)
    saved = filters._SPARSE
    filters._SPARSE = 10**12  # k <= V // _SPARSE never holds: the whole-row code, as it was
    try:
        want = compute.filter_result(row, **knobs)
    finally:
        filters._SPARSE = saved
    same_bits(got.probs, want.probs)
    same_bits(got.filtered, want.filtered)
    np.testing.assert_array_equal(got.kept, want.kept)
    np.testing.assert_array_equal(got.stage, want.stage)
    assert got.stage.dtype == want.stage.dtype and got.kept.dtype == want.kept.dtype


def test_the_top_k_survivors_path_is_taken_and_agrees_with_a_plain_reference():
    """The fast path against an independent plain computation (sort, cumulative sum) on a Zipf row."""
    import compute._filters as filters

    z = compute.zipf_logits(50_000, seed=2)
    seen = []
    original = filters._filter_top_k_row

    def spy(*args):
        out = original(*args)
        seen.append(out is not None)
        return out

    filters._filter_top_k_row = spy
    try:
        got = compute.filter_probs(z, temperature=0.8, top_k=50, top_p=0.9)
    finally:
        filters._filter_top_k_row = original
    assert seen == [True]
    p = compute.softmax(z, temperature=0.8)
    top = np.argsort(-z, kind="stable")[:50]
    q = p[top] / p[top].sum()
    order = np.argsort(q)  # ascending, as transformers' cumulative sum
    tail = np.cumsum(q[order])
    keep = np.zeros(50, bool)
    keep[order[tail > 1 - 0.9]] = True
    want = np.zeros_like(p)
    want[top[keep]] = p[top[keep]] / p[top[keep]].sum()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    assert np.count_nonzero(got) == keep.sum()
