"""Tests for compute.attention: scaled dot-product attention against a plain
Python loop (and PyTorch when it is installed), masks and fully masked rows,
dtype rules, the display max-pooling, the memory count and the d_k sweep.

pyproject.toml turns every warning into an error, so any RuntimeWarning from
NumPy inside ``compute`` fails these tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import compute
from compute import (
    Cancelled,
    attention,
    attention_memory,
    attention_scores,
    causal_mask,
    dk_sweep,
    dk_sweep_steps,
    entropy,
    masked_rows,
    max_pool2d,
    padding_mask,
    softmax,
)

POW2 = [2**i for i in range(2, 11)]  # 4 .. 1024


# --------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------
def loop_attention(q, k, v, scale=None, causal=False, mask=None):
    """Attention written out: loop over batch, query and key; math.exp with a max shift."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n_q, d = q.shape[-2:]
    n_k, d_v = v.shape[-2:]
    lead = [q.shape[:-2], k.shape[:-2], v.shape[:-2]]
    if mask is not None:
        mask = np.asarray(mask)
        lead.append(mask.shape[:-2])
    batch = np.broadcast_shapes(*lead)
    qb = np.broadcast_to(q, batch + (n_q, d))
    kb = np.broadcast_to(k, batch + (n_k, d))
    vb = np.broadcast_to(v, batch + (n_k, d_v))
    mb = np.broadcast_to(True if mask is None else mask, batch + (n_q, n_k))
    s = 1.0 / math.sqrt(d) if scale is None else scale
    weights = np.zeros(batch + (n_q, n_k))
    output = np.zeros(batch + (n_q, d_v))
    for b in np.ndindex(*batch):
        for i in range(n_q):
            keys = [j for j in range(n_k) if mb[b][i, j] and (not causal or j <= i)]
            if not keys:
                continue  # no allowed key: zeros
            scores = {j: math.fsum(qb[b][i, t] * kb[b][j, t] for t in range(d)) * s for j in keys}
            m = max(scores.values())
            e = {j: math.exp(scores[j] - m) for j in keys}
            z = math.fsum(e.values())
            for j in keys:
                weights[b][i, j] = e[j] / z
            for c in range(d_v):
                output[b][i, c] = math.fsum(weights[b][i, j] * vb[b][j, c] for j in keys)
    return weights, output


def loop_max_pool(a, max_rows, max_cols):
    """Block maxima with explicit loops, ignoring NaN unless a block is all NaN."""
    a = np.asarray(a, dtype=np.float64)
    rows, cols = a.shape[-2:]
    if rows <= max_rows and cols <= max_cols:
        return a.copy(), (1, 1)
    fr, fc = max(1, math.ceil(rows / max_rows)), max(1, math.ceil(cols / max_cols))
    out_r, out_c = math.ceil(rows / fr), math.ceil(cols / fc)
    out = np.empty(a.shape[:-2] + (out_r, out_c))
    for b in np.ndindex(*a.shape[:-2]):
        for bi in range(out_r):
            for bj in range(out_c):
                vals = [
                    a[b][i, j]
                    for i in range(bi * fr, min((bi + 1) * fr, rows))
                    for j in range(bj * fc, min((bj + 1) * fc, cols))
                    if not math.isnan(a[b][i, j])
                ]
                out[b][bi, bj] = max(vals) if vals else math.nan
    return out, (fr, fc)


# --------------------------------------------------------------------------
# strategies
# --------------------------------------------------------------------------
@st.composite
def sub_shape(draw, batch):
    """A shape that broadcasts to ``batch``: drop leading axes, set some to 1."""
    drop = draw(st.integers(0, len(batch)))
    return tuple(draw(st.sampled_from([size, 1])) for size in batch[drop:])


VALUES = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)


@st.composite
def attention_case(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    n_q, n_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    q = draw(hnp.arrays(np.float64, draw(sub_shape(batch)) + (n_q, d), elements=VALUES))
    k = draw(hnp.arrays(np.float64, draw(sub_shape(batch)) + (n_k, d), elements=VALUES))
    v = draw(hnp.arrays(np.float64, draw(sub_shape(batch)) + (n_k, d_v), elements=VALUES))
    kind = draw(st.sampled_from(["none", "padding", "full"]))
    if kind == "none":
        mask = None
    elif kind == "padding":
        mask = draw(hnp.arrays(np.bool_, (n_k,)))
    else:
        tail = (draw(st.sampled_from([1, n_q])), draw(st.sampled_from([1, n_k])))
        mask = draw(hnp.arrays(np.bool_, draw(sub_shape(batch)) + tail))
    scale = draw(st.one_of(st.none(), st.floats(0.05, 3.0)))
    causal = draw(st.booleans())
    return q, k, v, scale, causal, mask


# --------------------------------------------------------------------------
# attention
# --------------------------------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(case=attention_case())
def test_attention_matches_a_python_loop(case):
    q, k, v, scale, causal, mask = case
    weights, output = attention(q, k, v, scale=scale, causal=causal, mask=mask)
    ref_w, ref_o = loop_attention(q, k, v, scale=scale, causal=causal, mask=mask)
    assert weights.shape == ref_w.shape and output.shape == ref_o.shape
    assert weights.dtype == output.dtype == np.float64
    assert not np.isnan(weights).any() and not np.isnan(output).any()
    np.testing.assert_allclose(weights, ref_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(output, ref_o, rtol=1e-12, atol=1e-12)
    # structure: masked cells exactly 0, rows sum to 1 or (no allowed key) 0
    n_q, n_k = weights.shape[-2:]
    allowed = np.broadcast_to(True if mask is None else mask, weights.shape)
    if causal:
        allowed = allowed & causal_mask(n_q, n_k)
    assert np.all(weights[~allowed] == 0.0)
    dead = np.broadcast_to(masked_rows(causal, mask, n_q, n_k), weights.shape[:-1])
    sums = weights.sum(axis=-1)
    np.testing.assert_allclose(sums[~dead], 1.0, rtol=1e-13)
    assert np.all(sums[dead] == 0.0)
    assert np.all(output[dead] == 0.0)


def test_fully_masked_rows_are_zero_not_nan():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 2))
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False  # query 1 may attend to nothing
    mask[3, :2] = False
    weights, output = attention(q, k, v, mask=mask, causal=True)
    assert not np.isnan(weights).any() and not np.isnan(output).any()
    np.testing.assert_array_equal(weights[:, 1], 0.0)
    np.testing.assert_array_equal(output[:, 1], 0.0)
    np.testing.assert_allclose(weights[:, [0, 2, 3]].sum(axis=-1), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(masked_rows(True, mask, 4, 5), [False, True, False, False])
    # everything masked (all keys are padding), float32 too
    for dtype in (np.float64, np.float32, np.float16):
        w, o = attention(q.astype(dtype), k.astype(dtype), v.astype(dtype), mask=padding_mask(5, 5))
        assert w.dtype == o.dtype == dtype
        assert np.all(w == 0) and np.all(o == 0)
    # a NaN (or inf) in a fully masked row's values cannot leak into it either
    v_bad = v.copy()
    v_bad[:, 0, 0] = np.nan
    _, o = attention(q, k, v_bad, mask=mask)
    np.testing.assert_array_equal(o[:, 1], 0.0)


def test_masked_keys_never_contribute_scores():
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [np.nan, 0.0], [0.0, 2.0]])  # key 1's score is NaN
    v = np.array([[1.0], [5.0], [3.0]])
    w, o = attention(q, k, v, mask=np.array([True, False, True]))
    assert not np.isnan(w).any() and not np.isnan(o).any()
    np.testing.assert_array_equal(w[:, 1], 0.0)
    # unmasked, the NaN score spoils every row (compute.softmax's NaN rule)
    w, o = attention(q, k, v)
    assert np.isnan(w).all() and np.isnan(o).all()


def test_nan_query_spoils_only_its_row_and_huge_scores_stay_finite():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    q[1, 0] = np.nan
    w, o = attention(q, k, v)
    assert np.isnan(w[1]).all() and np.isnan(o[1]).all()
    assert np.isfinite(w[[0, 2]]).all() and np.isfinite(o[[0, 2]]).all()
    w, o = attention(q[[0, 2]] * 1e150, k * 1e150, v)  # scores ~1e300: no overflow in exp
    assert np.isfinite(w).all() and np.isfinite(o).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


def test_causal_upper_triangle_is_exactly_zero():
    rng = np.random.default_rng(3)
    for n_q, n_k in [(7, 7), (4, 9), (9, 4)]:
        q, k, v = rng.normal(size=(2, 3, n_q, 8)), rng.normal(size=(2, 3, n_k, 8)), rng.normal(size=(n_k, 5))
        w, o = attention(q, k, v, causal=True)
        assert w.shape == (2, 3, n_q, n_k) and o.shape == (2, 3, n_q, 5)
        upper = ~np.tri(n_q, n_k, dtype=bool)
        assert np.all(w[..., upper] == 0.0)
        assert np.all(w[..., ~upper] > 0.0)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-14)
        # the first query sees only the first key
        np.testing.assert_array_equal(w[..., 0, 0], 1.0)
        np.testing.assert_allclose(o[..., 0, :], np.broadcast_to(v[0], (2, 3, 5)), rtol=1e-15)


def test_scale_none_is_one_over_sqrt_d_and_scores_agree_bit_for_bit():
    rng = np.random.default_rng(4)
    for dtype in (np.float64, np.float32):
        q = rng.normal(size=(3, 6, 7)).astype(dtype)
        k = rng.normal(size=(3, 5, 7)).astype(dtype)
        v = rng.normal(size=(3, 5, 2)).astype(dtype)
        w_none, o_none = attention(q, k, v)
        w_expl, o_expl = attention(q, k, v, scale=1 / math.sqrt(7))
        np.testing.assert_array_equal(w_none, w_expl)
        np.testing.assert_array_equal(o_none, o_expl)
        scores = attention_scores(q, k)
        assert scores.dtype == dtype and scores.shape == (3, 6, 5)
        np.testing.assert_array_equal(w_none, softmax(scores, axis=-1))
        np.testing.assert_array_equal(o_none, w_none @ v)
        np.testing.assert_array_equal(attention_scores(q, k, scale=1.0), q @ np.swapaxes(k, -1, -2))
        np.testing.assert_allclose(scores, q @ np.swapaxes(k, -1, -2) / math.sqrt(7), rtol=1e-6)
    # scale as given; scale=1.0 means none; other scales just sharpen/flatten
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    for scale in (1.0, 0.25, 3.0):
        ref_w, ref_o = loop_attention(q, k, v, scale=scale)
        w, o = attention(q, k, v, scale=scale)
        np.testing.assert_allclose(w, ref_w, rtol=1e-13)
        np.testing.assert_allclose(o, ref_o, rtol=1e-12, atol=1e-15)
    # a scale outside float32's range is applied in float64, not rounded to 0
    s32 = attention_scores(np.float32([[1e19]]), np.float32([[1e19]]), scale=1e-50)
    assert s32.dtype == np.float32 and float(s32[0, 0]) == pytest.approx(1e-12, rel=1e-6)


def test_dtypes():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 6, 3)), rng.normal(size=(2, 6, 5))
    ref_w, ref_o = attention(q, k, v, causal=True)
    w, o = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), causal=True)
    assert w.dtype == o.dtype == np.float32
    np.testing.assert_allclose(w, ref_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o, ref_o, rtol=1e-5, atol=1e-6)
    w, o = attention(q.astype(np.float16), k.astype(np.float16), v.astype(np.float16), causal=True)
    assert w.dtype == o.dtype == np.float16
    np.testing.assert_allclose(w, ref_w, rtol=1e-2, atol=2e-3)
    np.testing.assert_allclose(o, ref_o, rtol=1e-2, atol=1e-2)
    assert attention_scores(q.astype(np.float16), k.astype(np.float16)).dtype == np.float16
    # mixed precision promotes; ints and lists become float64
    w, o = attention(q.astype(np.float32), k, v.astype(np.float32))
    assert w.dtype == o.dtype == np.float64
    w, o = attention([[1, 0]], [[1, 0], [0, 1]], [[1], [2]])
    assert w.dtype == o.dtype == np.float64
    w0 = 1 / (1 + math.exp(-1 / math.sqrt(2)))  # scores [1/sqrt(2), 0]
    np.testing.assert_allclose(w, [[w0, 1 - w0]], rtol=1e-15)
    np.testing.assert_allclose(o, [[w0 + 2 * (1 - w0)]], rtol=1e-15)


def test_leading_axes_broadcast():
    rng = np.random.default_rng(6)
    q = rng.normal(size=(2, 1, 4, 3))
    k = rng.normal(size=(1, 3, 5, 3))
    v = rng.normal(size=(5, 2))
    mask = rng.random((4, 1, 1, 4, 5)) < 0.7  # an extra leading axis from the mask
    w, o = attention(q, k, v, mask=mask)
    assert w.shape == (4, 2, 3, 4, 5) and o.shape == (4, 2, 3, 4, 2)
    assert w.flags.c_contiguous
    ref_w, ref_o = loop_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(o, ref_o, rtol=1e-12, atol=1e-12)
    # v's leading axes alone: weights still get the full leading shape
    w, o = attention(q[0, 0], k[0, 0], rng.normal(size=(3, 5, 2)))
    assert w.shape == (3, 4, 5) and o.shape == (3, 4, 2)
    np.testing.assert_array_equal(w[0], w[2])


def test_empty_key_set():
    w, o = attention(np.ones((3, 2)), np.ones((0, 2)), np.ones((0, 4)))
    assert w.shape == (3, 0) and o.shape == (3, 4) and np.all(o == 0)
    np.testing.assert_array_equal(masked_rows(False, None, 3, 0), [True, True, True])
    w, o = attention(np.ones((0, 2)), np.ones((3, 2)), np.ones((3, 4)))
    assert w.shape == (0, 3) and o.shape == (0, 4)


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, math.inf, -math.inf])
def test_bad_scale_is_named(scale):
    q = np.ones((2, 3))
    with pytest.raises(ValueError, match=rf"scale must be finite and > 0, got {scale!r}"):
        attention(q, q, q, scale=scale)
    with pytest.raises(ValueError, match="scale"):
        attention_scores(q, q, scale=scale)


def test_validation():
    q = np.ones((2, 3))
    with pytest.raises(TypeError, match="scale"):
        attention(q, q, q, scale="1")
    with pytest.raises(ValueError, match="last dimension"):
        attention(q, np.ones((2, 4)), q)
    with pytest.raises(ValueError, match="number of keys"):
        attention(q, q, np.ones((3, 3)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        attention(np.ones(3), q, q)
    with pytest.raises(ValueError, match="d must be >= 1"):
        attention(np.ones((2, 0)), np.ones((2, 0)), q)
    with pytest.raises(ValueError, match="do not broadcast"):
        attention(np.ones((2, 2, 3)), np.ones((3, 2, 3)), q)
    with pytest.raises(TypeError, match="boolean"):
        attention(q, q, q, mask=np.ones((2, 2)))
    with pytest.raises(ValueError, match="does not broadcast"):
        attention(q, q, q, mask=np.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match="does not broadcast"):
        attention(q, q, q, mask=np.ones(5, dtype=bool))
    with pytest.raises(TypeError, match="causal"):
        attention(q, q, q, causal=np.ones((2, 2), dtype=bool))
    with pytest.raises(TypeError, match="complex"):
        attention(q * 1j, q, q)


def test_torch_scaled_dot_product_attention():
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    rng = np.random.default_rng(7)
    for n_q, n_k, causal, use_mask, scale in [
        (5, 5, False, False, None),
        (5, 5, True, False, None),
        (4, 7, True, True, 0.3),
        (7, 4, False, True, 1.0),
    ]:
        q = rng.normal(size=(2, 3, n_q, 8))
        k = rng.normal(size=(2, 3, n_k, 8))
        v = rng.normal(size=(2, 3, n_k, 4))
        mask = rng.random((n_q, n_k)) < 0.6 if use_mask else None
        _, ours = attention(q, k, v, scale=scale, causal=causal, mask=mask)
        combined = masked = None
        if mask is not None:
            combined = mask & causal_mask(n_q, n_k) if causal else mask
            masked = masked_rows(causal, mask, n_q, n_k)
        theirs = functional.scaled_dot_product_attention(
            torch.from_numpy(q),
            torch.from_numpy(k),
            torch.from_numpy(v),
            attn_mask=None if combined is None else torch.from_numpy(combined),
            is_causal=causal and combined is None,  # torch refuses both at once
            scale=scale,
        ).numpy()
        keep = slice(None) if masked is None else ~masked  # older torch gives NaN there
        np.testing.assert_allclose(ours[..., keep, :], theirs[..., keep, :], rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------
# masks
# --------------------------------------------------------------------------
def test_mask_helpers():
    np.testing.assert_array_equal(causal_mask(3, 4), [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]])
    assert causal_mask(3, 4).dtype == np.bool_
    np.testing.assert_array_equal(causal_mask(3, 2), [[1, 0], [1, 1], [1, 1]])
    np.testing.assert_array_equal(padding_mask(5, 2), [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(padding_mask(3, 0), [1, 1, 1])
    np.testing.assert_array_equal(padding_mask(3, 3), [0, 0, 0])
    assert padding_mask(4, 1).dtype == np.bool_
    with pytest.raises(ValueError):
        padding_mask(3, 4)
    with pytest.raises(ValueError):
        padding_mask(3, -1)
    with pytest.raises(TypeError):
        causal_mask(2.5, 3)
    # masked_rows: causal alone never empties a row; padding everything does
    assert not masked_rows(True, None, 4, 3).any()
    assert masked_rows(False, padding_mask(3, 3), 4, 3).all()
    assert masked_rows(False, None, 4, 3).shape == (4,)
    m = np.ones((2, 4, 3), dtype=bool)
    m[1, 2] = False
    dead = masked_rows(False, m, 4, 3)
    assert dead.shape == (2, 4) and dead.sum() == 1 and dead[1, 2]
    # row 0 may only see key 2; causal forbids it
    m2 = np.ones((4, 3), dtype=bool)
    m2[0] = [False, False, True]
    np.testing.assert_array_equal(masked_rows(True, m2, 4, 3), [True, False, False, False])
    with pytest.raises(TypeError, match="causal"):
        masked_rows(m2, None, 4, 3)  # arguments swapped


# --------------------------------------------------------------------------
# max_pool2d
# --------------------------------------------------------------------------
POOL_VALUES = st.one_of(
    st.floats(-100, 100, allow_nan=False), st.just(math.nan), st.sampled_from([math.inf, -math.inf])
)


@settings(max_examples=100, deadline=None)
@given(
    a=hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 2), st.integers(1, 20), st.integers(1, 20)),
        elements=POOL_VALUES,
    ),
    max_rows=st.integers(1, 8),
    max_cols=st.integers(1, 8),
)
def test_max_pool_matches_a_loop(a, max_rows, max_cols):
    pooled, factors = max_pool2d(a, max_rows, max_cols)
    ref, ref_factors = loop_max_pool(a, max_rows, max_cols)
    assert factors == ref_factors
    assert all(isinstance(f, int) for f in factors)
    assert pooled.shape == ref.shape
    np.testing.assert_array_equal(pooled, ref)  # NaN positions must match too
    if factors != (1, 1):
        assert pooled.shape[-2] <= max_rows and pooled.shape[-1] <= max_cols


def test_isolated_peak_survives():
    a = np.zeros((2048, 2048))
    a[1234, 567] = 1.0
    pooled, factors = max_pool2d(a, 256, 256)
    assert factors == (8, 8) and pooled.shape == (256, 256)
    assert pooled.max() == 1.0 and pooled.sum() == 1.0
    assert pooled[1234 // 8, 567 // 8] == 1.0


def test_max_pool_nan_partial_blocks_and_passthrough():
    a = np.array(
        [
            [np.nan, np.nan, 1.0, np.nan, 7.0],
            [np.nan, np.nan, np.nan, 2.0, np.nan],
            [-np.inf, 3.0, np.nan, np.nan, np.nan],
        ]
    )
    pooled, factors = max_pool2d(a, 2, 2)
    assert factors == (2, 3)
    # blocks: rows {0,1} x cols {0,1,2}, {3,4}; rows {2} x the same
    np.testing.assert_array_equal(pooled, [[1.0, 7.0], [3.0, np.nan]])
    all_nan, _ = max_pool2d(np.full((4, 4), np.nan), 2, 2)
    assert np.isnan(all_nan).all()
    # only one axis too big: the other is not pooled
    pooled, factors = max_pool2d(np.arange(12.0).reshape(2, 6), 4, 3)
    assert factors == (1, 2)
    np.testing.assert_array_equal(pooled, [[1, 3, 5], [7, 9, 11]])
    # small enough: the same array object, unchanged
    small = np.arange(6.0).reshape(2, 3)
    same, factors = max_pool2d(small, 2, 3)
    assert same is small and factors == (1, 1)
    assert max_pool2d(np.float32([[1, 2, 3, 4]]), 1, 2)[0].dtype == np.float32
    ints, _ = max_pool2d([[1, 5, 2, 0]], 1, 2)
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints, [[5, 2]])
    with pytest.raises(ValueError):
        max_pool2d(np.ones(4), 2, 2)
    with pytest.raises(ValueError):
        max_pool2d(np.ones((4, 4)), 0, 2)
    with pytest.raises(TypeError):
        max_pool2d(np.ones((4, 4)), 2.0, 2)


# --------------------------------------------------------------------------
# attention_memory
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_attention_memory_counts_the_real_arrays(dtype):
    heads, n_q, n_k, d, d_v = 3, 5, 7, 4, 6
    rng = np.random.default_rng(8)
    q = rng.normal(size=(heads, n_q, d)).astype(dtype)
    k = rng.normal(size=(heads, n_k, d)).astype(dtype)
    v = rng.normal(size=(heads, n_k, d_v)).astype(dtype)
    scores = attention_scores(q, k)
    weights, output = attention(q, k, v)
    actual = sum(a.nbytes for a in (q, k, v, scores, weights, output))
    assert attention_memory(n_q, n_k, d, d_v, heads=heads, dtype=dtype) == actual
    assert attention_memory(n_q, n_k, d, d_v, dtype=dtype) * heads == actual


def test_attention_memory_is_exact_for_huge_sizes():
    n = 1_000_000
    got = attention_memory(n, n, 128, 128, heads=32, dtype=np.float32)
    assert isinstance(got, int)
    assert got == 32 * 4 * (4 * n * 128 + 2 * n * n)
    with pytest.raises(ValueError):
        attention_memory(-1, 2, 3, 4)
    with pytest.raises(TypeError):
        attention_memory(1.5, 2, 3, 4)


# --------------------------------------------------------------------------
# dk_sweep
# --------------------------------------------------------------------------
KEYS = {
    "d_k",
    "entropy_scaled",
    "entropy_unscaled",
    "max_weight_scaled",
    "max_weight_unscaled",
    "std_qk",
    "sqrt_dk",
}


def test_dk_sweep_is_deterministic_and_per_d():
    a = dk_sweep(48, [4, 16, 64], seed=3, heads=2)
    b = dk_sweep(48, [4, 16, 64], seed=3, heads=2)
    assert set(a) == KEYS
    for key in KEYS:
        np.testing.assert_array_equal(a[key], b[key])
        assert a[key].shape == (3,)
    assert a["d_k"].dtype == np.int64 and a["std_qk"].dtype == np.float64
    np.testing.assert_array_equal(a["sqrt_dk"], [2.0, 4.0, 8.0])
    # a d's numbers do not depend on which other d's are asked for
    c = dk_sweep(48, [64, 8, 4], seed=3, heads=2)
    for key in KEYS:
        assert c[key][0] == a[key][2] and c[key][2] == a[key][0]
    other = dk_sweep(48, [4, 16, 64], seed=4, heads=2)
    assert not np.array_equal(other["std_qk"], a["std_qk"])


def test_dk_sweep_matches_softmax_and_entropy():
    """Recompute from the documented stream with compute.softmax/entropy in float64."""
    n, heads, seed = 40, 2, 11
    got = dk_sweep(n, [1, 8, 256], seed=seed, heads=heads)
    for i, d in enumerate([1, 8, 256]):
        rng = np.random.default_rng([seed, d])
        q = rng.standard_normal((heads, n, d), dtype=np.float32).astype(np.float64)
        k = rng.standard_normal((heads, n, d), dtype=np.float32).astype(np.float64)
        raw = q @ np.swapaxes(k, -1, -2)
        for name, scores in (("unscaled", raw), ("scaled", raw / math.sqrt(d))):
            p = softmax(scores, axis=-1)
            assert got[f"entropy_{name}"][i] == pytest.approx(entropy(p).mean(), rel=1e-4, abs=1e-5)
            assert got[f"max_weight_{name}"][i] == pytest.approx(p.max(axis=-1).mean(), rel=1e-4)
        assert got["std_qk"][i] == pytest.approx(raw.std(), rel=1e-5)


def test_dk_sweep_std_is_sqrt_dk():
    """std(q . k) ~ sqrt(d).

    The n*n entries share their q rows and k columns, so they are not
    independent and the error does not shrink like 1/sqrt(n*n): the sample
    variance is tr(S_q S_k) for the two d x d sample covariances, whose
    relative error is about 2/sqrt(n d) + 1/n; for the std, half.  Measured
    over many seeds the RMS relative error is 0.5-1.2 x (1/sqrt(n d) + 1/n)
    and the worst of ~5000 draws 3.7 x; the test allows 6 x.
    """
    d_ks = [1, 2, *POW2]
    for n, seed in [(64, 0), (256, 1)]:
        r = dk_sweep(n, d_ks, seed=seed)
        d = r["d_k"].astype(float)
        tol = 6 * (1 / np.sqrt(n * d) + 1 / n)
        rel = np.abs(r["std_qk"] / r["sqrt_dk"] - 1)
        assert np.all(rel < tol), (rel, tol)


def test_dk_sweep_unscaled_saturates_scaled_does_not():
    n = 64
    for seed in range(3):
        r = dk_sweep(n, POW2, seed=seed)
        hu, hs = r["entropy_unscaled"], r["entropy_scaled"]
        # nearly monotone: big steps down, any rise (sampling noise near one-hot) tiny
        assert np.all(np.diff(hu) < 0.1)
        assert np.all(np.diff(hu[:5]) < 0)  # d = 4 .. 64: strictly
        assert hu[-1] < 0.1 * hu[0] and hu[-1] < 0.3
        assert r["max_weight_unscaled"][-1] > 0.8
        # scaled: about log(n) - 1/2 (Gaussian scores of variance 1), whatever d
        assert np.all(np.abs(hs - (math.log(n) - 0.5)) < 0.4)
        assert np.ptp(hs) < 0.45
        assert np.all(r["max_weight_scaled"] < 0.2)
        assert np.all(hs <= math.log(n)) and np.all(hu >= 0)


def test_dk_sweep_progress_and_cancel():
    calls = []
    dk_sweep(16, [4, 8, 16], progress=lambda i, total: calls.append((i, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]

    calls.clear()
    polls = []

    def cancelled():
        polls.append(1)
        return len(polls) > 2  # allow two d's, stop before the third

    with pytest.raises(Cancelled):
        dk_sweep(16, [4, 8, 16, 32], progress=lambda i, total: calls.append(i), cancelled=cancelled)
    assert calls == [1, 2] and len(polls) == 3
    with pytest.raises(Cancelled):
        dk_sweep(16, [4], cancelled=lambda: True)
    assert issubclass(Cancelled, Exception)


def test_dk_sweep_steps_yields_per_d_and_returns_the_sweep():
    steps = dk_sweep_steps(16, [4, 8, 16, 2], seed=5, heads=2)
    seen = []
    while True:
        try:
            seen.append(next(steps))
        except StopIteration as stop:
            got = stop.value
            break
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    expected = dk_sweep(16, [4, 8, 16, 2], seed=5, heads=2)
    assert set(got) == set(expected) == KEYS
    for key in expected:
        assert got[key].dtype == expected[key].dtype and np.array_equal(got[key], expected[key])
    with pytest.raises(ValueError):
        dk_sweep_steps(0, [4])  # checked at the call, before any next()
    empty = dk_sweep_steps(8, [])
    with pytest.raises(StopIteration) as stop:
        next(empty)
    assert all(v.shape == (0,) for v in stop.value.value.values())


def test_dk_sweep_validation():
    empty = dk_sweep(8, [])
    assert set(empty) == KEYS and all(v.shape == (0,) for v in empty.values())
    for bad in ([0], [4.0], [True]):
        with pytest.raises((ValueError, TypeError)):
            dk_sweep(8, bad)
    with pytest.raises(ValueError):
        dk_sweep(0, [4])
    with pytest.raises(ValueError):
        dk_sweep(8, [4], seed=-1)
    with pytest.raises(ValueError):
        dk_sweep(8, [4], heads=0)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.integers(1, 5), st.booleans(),
       st.sampled_from([None, 1.0, 0.37, 1e-50]), st.integers(0, 2**31 - 1))
def test_attention_parts_are_attention_and_its_scores_bit_for_bit(heads, n_q, n_k, d, causal, scale, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((heads, n_q, d))
    k = rng.standard_normal((heads, n_k, d))
    v = rng.standard_normal((heads, n_k, 3))
    mask = rng.random(n_k) > 0.3
    parts = compute.attention_parts(q, k, v, scale=scale, causal=causal, mask=mask)
    weights, output = compute.attention(q, k, v, scale=scale, causal=causal, mask=mask)
    assert np.array_equal(parts.weights, weights)
    assert np.array_equal(parts.output, output)
    assert np.array_equal(parts.raw, compute.attention_scores(q, k, scale=1.0))
    assert np.array_equal(parts.scores, compute.attention_scores(q, k, scale=scale))
    np.testing.assert_allclose(parts.raw, np.einsum("hid,hjd->hij", q, k), rtol=1e-12, atol=1e-12)
