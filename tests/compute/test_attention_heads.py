"""compute.attention_parts(weights=False) and head-by-head calls give the full call's bits.

The Attention view computes the score matrices of every head at once and the
weights and output of the head it shows only, from ``attention_parts`` of
that head's slices; these tests check that this equals the full call exactly
(and, as a sanity check, a plain NumPy softmax within rounding).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute


def _mask(kind, rng, heads, n_q, n_k):
    if kind == "none":
        return None
    shape = {"keys": (n_k,), "matrix": (n_q, n_k), "heads": (heads, n_q, n_k)}[kind]
    return rng.random(shape) < 0.7


def _slice_mask(mask, h):
    return mask[h:h + 1] if mask is not None and mask.ndim == 3 else mask


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 4), n_q=st.integers(1, 7), n_k=st.integers(1, 7), d=st.integers(1, 6),
       causal=st.booleans(), kind=st.sampled_from(["none", "keys", "matrix", "heads"]),
       scale=st.sampled_from([None, 1.0, 0.37, 3.0]), seed=st.integers(0, 2**16))
def test_each_head_alone_is_the_full_call_to_the_bit(heads, n_q, n_k, d, causal, kind, scale, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((heads, n_q, d)) * 3, rng.standard_normal((heads, n_k, d)) * 3
    v = rng.standard_normal((heads, n_k, d + 1))
    mask = _mask(kind, rng, heads, n_q, n_k)
    full = compute.attention_parts(q, k, v, scale=scale, causal=causal, mask=mask)
    scores_only = compute.attention_parts(q, k, v, scale=scale, causal=causal, mask=mask, weights=False)
    assert scores_only.weights is None and scores_only.output is None
    np.testing.assert_array_equal(scores_only.raw, full.raw)
    np.testing.assert_array_equal(scores_only.scores, full.scores)
    for h in range(heads):
        one = compute.attention_parts(q[h:h + 1], k[h:h + 1], v[h:h + 1], scale=scale, causal=causal,
                                      mask=_slice_mask(mask, h))
        np.testing.assert_array_equal(one.raw[0], full.raw[h])
        np.testing.assert_array_equal(one.scores[0], full.scores[h])
        np.testing.assert_array_equal(one.weights[0], full.weights[h])
        np.testing.assert_array_equal(one.output[0], full.output[h])


def test_head_by_head_matches_a_plain_softmax():
    """An independent reference: exp / sum by hand (masked keys left out), within rounding."""
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((3, 9, 4)) for _ in range(3))
    mask = compute.padding_mask(9, 2)
    for h in range(3):
        w = compute.attention_parts(q[h:h + 1], k[h:h + 1], v[h:h + 1], causal=True, mask=mask).weights[0]
        s = q[h] @ k[h].T / 2.0
        allowed = np.tril(np.ones((9, 9), dtype=bool)) & mask
        e = np.where(allowed, np.exp(s - np.where(allowed, s, -np.inf).max(axis=1, keepdims=True)), 0.0)
        np.testing.assert_allclose(w, e / e.sum(axis=1, keepdims=True), rtol=1e-12, atol=1e-15)


def test_scores_only_still_checks_v_and_the_mask():
    q = k = np.zeros((2, 3, 4))
    with pytest.raises(ValueError, match="same number of keys"):
        compute.attention_parts(q, k, np.zeros((2, 5, 4)), weights=False)
    with pytest.raises(ValueError):
        compute.attention_parts(q, k, np.zeros((2, 3, 4)), mask=np.ones((4, 4), dtype=bool), weights=False)
