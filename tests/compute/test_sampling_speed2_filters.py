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
