"""compute.attention_parts(..., raw=...) uses a product computed earlier, and keeps every bit.

The Attention view computes every head's product once (``weights=False``) and then the weights
and output of the head shown from that head's slice of it, so the product is not computed twice.
These tests check that a given ``raw`` gives the call without it exactly, that it is really the
one used, that a wrong one is refused, and that the scaled scores are still ``raw * scale``
(also for a scale that is not a normal number in float32) and ``attention_scores``' bits.
"""

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st

import compute


def _mask(kind, rng, heads, n_q, n_k):
    if kind == "none":
        return None
    shape = {"keys": (n_k,), "matrix": (n_q, n_k), "heads": (heads, n_q, n_k)}[kind]
    return rng.random(shape) < 0.7


@settings(max_examples=40, deadline=None)
@given(heads=st.integers(1, 4), n_q=st.integers(1, 7), n_k=st.integers(1, 7), d=st.integers(1, 6),
       causal=st.booleans(), kind=st.sampled_from(["none", "keys", "matrix", "heads"]),
       scale=st.sampled_from([None, 1.0, 0.37, 3.0]), dtype=st.sampled_from([np.float64, np.float32]),
       seed=st.integers(0, 2**16))
def test_a_heads_slice_of_the_product_gives_the_call_without_it(heads, n_q, n_k, d, causal, kind, scale,
                                                                  dtype, seed):
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((heads, n_q, d)) * 3).astype(dtype)
    k = (rng.standard_normal((heads, n_k, d)) * 3).astype(dtype)
    v = rng.standard_normal((heads, n_k, d + 1)).astype(dtype)
    mask = _mask(kind, rng, heads, n_q, n_k)
    every = compute.attention_parts(q, k, v, scale=scale, causal=causal, mask=mask, weights=False)
    for h in range(heads):
        one = slice(h, h + 1)
        m = mask[one] if mask is not None and mask.ndim == 3 else mask
        fresh = compute.attention_parts(q[one], k[one], v[one], scale=scale, causal=causal, mask=m)
        given_raw = compute.attention_parts(q[one], k[one], v[one], scale=scale, causal=causal, mask=m,
                                            raw=every.raw[one])
        for a, b in zip(given_raw, fresh, strict=True):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype


def test_the_given_product_is_the_one_used():
    """A product of zeros gives uniform weights (a plain softmax of zeros), whatever q and k are."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 5, 4)) * 4 for _ in range(3))
    parts = compute.attention_parts(q, k, v, raw=np.zeros((1, 5, 5)))
    np.testing.assert_allclose(parts.weights, scipy.special.softmax(np.zeros((1, 5, 5)), axis=-1))
    np.testing.assert_allclose(parts.output[0], np.tile(v[0].mean(axis=0), (5, 1)), rtol=1e-12, atol=1e-15)
    plain = compute.attention_parts(q, k, v)
    np.testing.assert_allclose(plain.weights, scipy.special.softmax(q @ np.swapaxes(k, -1, -2) / 2.0, axis=-1),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("bad", [np.zeros((1, 5, 4)), np.zeros((2, 5, 5)), np.zeros((1, 5, 5), dtype=np.float32),
                                 [[[0.0] * 5] * 5]])
def test_a_product_of_the_wrong_shape_or_dtype_is_refused(bad):
    q, k, v = (np.ones((1, 5, 4)) for _ in range(3))
    with pytest.raises(ValueError, match="raw must be the product"):
        compute.attention_parts(q, k, v, raw=bad)


@pytest.mark.parametrize(("dtype", "scale"), [(np.float64, None), (np.float64, 1.0), (np.float64, 0.3),
                                              (np.float32, None), (np.float32, 1e-40), (np.float32, 1e50),
                                              (np.float16, 0.125)])
def test_the_scores_are_the_raw_product_times_the_scale(dtype, scale):
    rng = np.random.default_rng(11)
    q, k, v = ((rng.standard_normal((2, 6, 8)) * 2).astype(dtype) for _ in range(3))
    parts = compute.attention_parts(q, k, v, scale=scale, weights=False)
    s = 1.0 / np.sqrt(8) if scale is None else scale
    work = parts.raw.dtype
    with np.errstate(over="ignore"):  # 1e50 in float32: inf, as compute's own float64 path gives
        reference = (parts.raw.astype(np.float64) * s).astype(work)  # in float64, rounded once
        normal = np.isfinite(work.type(s)) and work.type(s) >= np.finfo(work).tiny
    if normal:
        np.testing.assert_array_equal(parts.scores, parts.raw * work.type(s))
    else:  # a scale that is no normal float32 is applied in float64 (1e-40 in float32 would round)
        np.testing.assert_array_equal(parts.scores, reference)
    np.testing.assert_allclose(parts.scores, reference, rtol=4 * np.finfo(work).eps, atol=0)
    np.testing.assert_array_equal(parts.scores.astype(dtype), compute.attention_scores(q, k, scale))
    assert parts.scores is not parts.raw and not np.shares_memory(parts.scores, parts.raw)
