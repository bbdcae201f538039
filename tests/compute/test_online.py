"""compute.online: the primitives and the traced algorithms the Online-softmax view steps through,
against compute.softmax / log_softmax / logsumexp / attention in float64.

pyproject.toml turns every warning into an error, so a RuntimeWarning from NumPy inside
``compute.online`` (an exp of inf, 0/0 on an all -inf row) fails these tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from compute import (
    MEMORY_METHODS,
    attention,
    finish_softmax,
    flash_attention,
    flash_attention_trace,
    log_softmax,
    logsumexp,
    memory_passes,
    online_softmax_trace,
    softmax,
    tree_merge_trace,
)
from compute._online import block_partial, finish_log_softmax, finish_logsumexp, merge, rescale

INF, NAN = np.inf, np.nan

special = st.sampled_from([INF, -INF, NAN])
finite = st.floats(-1e3, 1e3, allow_nan=False)
rows = hnp.arrays(np.float64, st.integers(1, 40), elements=st.one_of(finite, finite, finite, special))
finite_rows = hnp.arrays(np.float64, st.integers(1, 40), elements=finite)
blocks = st.integers(1, 45)
temperatures = st.sampled_from([0.05, 0.5, 1.0, 3.0, 100.0])

EDGE_ROWS = [
    [2.0, 1.0, 0.5, -1.0],
    [7.0],
    [INF],
    [-INF],
    [NAN],
    [-INF, -INF, -INF],
    [INF, INF, 1.0],
    [INF, -INF],
    [1.0, NAN, 0.0],
    [-INF, 3.0, -INF, 2.0],
    [1e308, -1e308, 0.0],
    [-1e308, -1e308],
]


def same(a, b, rtol=1e-12, atol=1e-15):
    """allclose with NaN == NaN and equal infinities."""
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=atol, equal_nan=True)


def bits_equal(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


# -- the primitives ------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(x=rows, t=temperatures)
def test_one_partial_finishes_to_softmax_and_log_softmax(x, t):
    m, d = block_partial(x, t)
    same(finish_softmax(x, m, d, t), softmax(x, temperature=t))
    same(finish_log_softmax(x, m, d, t), log_softmax(x, temperature=t), rtol=1e-10, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(x=rows)
def test_logsumexp_from_a_partial(x):
    m, d = block_partial(x)
    same(finish_logsumexp(m, d), logsumexp(x), rtol=1e-13)


@settings(max_examples=100, deadline=None)
@given(x=finite_rows, split=st.integers(0, 40), t=temperatures)
def test_merging_two_halves_is_one_partial(x, split, t):
    a, b = x[:split], x[split:]
    m, d = merge(*block_partial(a, t), *block_partial(b, t), t)
    m1, d1 = block_partial(x, t)
    assert m == m1
    same(d, d1)
    # commutative, bit for bit (the same two products, added in the other order)
    m2, d2 = merge(*block_partial(b, t), *block_partial(a, t), t)
    assert m2 == m and d2 == d


def test_rescale_special_cases():
    assert rescale(INF, INF) == 1.0 and rescale(-INF, -INF) == 1.0
    assert rescale(-INF, 2.0) == 0.0 and math.isnan(rescale(NAN, 1.0))
    assert rescale(1.0, 3.0, 2.0) == pytest.approx(math.exp(-1.0))
    m, d = block_partial(np.array([]))
    assert m == -INF and d == 0.0


# -- the sequential trace ------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(x=rows, block=blocks, t=temperatures)
def test_sequential_trace_invariants_and_result(x, block, t):
    steps = online_softmax_trace(x, block, t)
    n = len(x)
    assert len(steps) == math.ceil(n / block)
    assert [s.start for s in steps] == list(range(0, n, block)) and steps[-1].stop == n
    assert steps[0].m_before == -INF and steps[0].d_before == 0.0
    for prev, s in zip([None, *steps], steps):
        if prev is not None:  # the running partial is handed on unchanged
            assert bits_equal(s.m_before, prev.m_after) and bits_equal(s.d_before, prev.d_after)
        block_m, block_d = block_partial(x[s.start:s.stop], t)
        assert bits_equal(s.m_block, block_m) and bits_equal(s.d_block, block_d)
        with np.errstate(all="ignore"):
            assert bits_equal(s.d_after, s.d_before * s.rescale + s.d_block * s.rescale_block)
            assert bits_equal(s.rescale, rescale(s.m_before, s.m_after, t))
        if not math.isnan(s.m_after):
            assert s.m_after >= s.m_before and s.m_after == max(s.m_before, s.m_block)
            assert s.max_changed == (s.m_after != s.m_before)
            if not s.max_changed:
                assert s.rescale == 1.0
        assert len(s.partial) == s.stop
        same(s.partial, finish_softmax(x[:s.stop], s.m_after, s.d_after, t))
    # the end: the online result is full softmax, and (m, d) is the row's own partial
    same(steps[-1].partial, softmax(x, temperature=t))
    m, d = block_partial(x, t)
    assert bits_equal(steps[-1].m_after, m)
    same(steps[-1].d_after, d)


@pytest.mark.parametrize("values", EDGE_ROWS)
@pytest.mark.parametrize("block", [1, 2, 3, 10])
def test_special_rows_match_softmax(values, block):
    x = np.array(values)
    steps = online_softmax_trace(x, block)
    expected = softmax(x)
    assert bits_equal(np.isnan(steps[-1].partial), np.isnan(expected))
    same(steps[-1].partial, expected)


def test_the_default_row_step_by_step():
    x = np.array([-1.0, 0.5, 2.0, 1.0])  # rising: the max moves twice
    steps = online_softmax_trace(x, 1)
    assert [s.m_after for s in steps] == [-1.0, 0.5, 2.0, 2.0]
    assert steps[0].rescale == 0.0  # exp(-inf - (-1)): the empty sum is 0 anyway
    assert steps[1].rescale == pytest.approx(math.exp(-1.5)) and steps[1].max_changed
    assert steps[1].d_after == pytest.approx(math.exp(-1.5) + 1.0)
    assert steps[3].rescale == 1.0 and not steps[3].max_changed
    assert steps[3].d_after == pytest.approx(sum(math.exp(v - 2.0) for v in x))
    same(steps[1].partial, softmax(x[:2]))  # the softmax of what has been read


def test_float32_rows_stay_float32():
    x = np.float32([3.0, 1.0, 2.0])
    last = online_softmax_trace(x, 2)[-1]
    assert last.partial.dtype == np.float32
    np.testing.assert_allclose(last.partial, softmax(x), rtol=1e-6)


@pytest.mark.parametrize(("row", "block", "error"), [
    ([], 1, ValueError), ([[1.0, 2.0]], 1, ValueError), ([1.0], 0, ValueError), ([1.0], 1.5, ValueError),
    (["a"], 1, TypeError),
])
def test_bad_rows_and_blocks(row, block, error):
    with pytest.raises(error):
        online_softmax_trace(np.array(row), block)
    with pytest.raises(error):
        tree_merge_trace(np.array(row), block)


# -- the tree ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(x=rows, block=blocks, t=temperatures)
def test_tree_merge_reaches_the_sequential_result(x, block, t):
    levels = tree_merge_trace(x, block, t)
    leaves = levels[0]
    assert len(leaves) == math.ceil(len(x) / block)
    assert len(levels) == 1 + math.ceil(math.log2(len(leaves))) if len(leaves) > 1 else len(levels) == 1
    for leaf in leaves:
        m, d = block_partial(x[leaf.start:leaf.stop], t)
        assert leaf.is_leaf and bits_equal(leaf.m, m) and bits_equal(leaf.d, d)
    for below, level in zip(levels, levels[1:]):
        assert len(level) == math.ceil(len(below) / 2)
        for node in level:
            a = below[node.left]
            assert node.start == a.start
            if node.right is None:  # carried up
                assert bits_equal((node.m, node.d), (a.m, a.d)) and node.stop == a.stop
                continue
            b = below[node.right]
            assert node.right == node.left + 1 and node.stop == b.stop
            m, d = merge(a.m, a.d, b.m, b.d, t)
            assert bits_equal(node.m, m) and bits_equal(node.d, d)
            with np.errstate(all="ignore"):
                assert bits_equal(node.d, a.d * node.rescale_left + b.d * node.rescale_right)
    (root,) = levels[-1]
    assert (root.start, root.stop) == (0, len(x))
    seq = online_softmax_trace(x, block, t)[-1]
    assert bits_equal(root.m, seq.m_after)
    same(root.d, seq.d_after)
    same(finish_softmax(x, root.m, root.d, t), softmax(x, temperature=t))


def test_tree_of_five_leaves_carries_the_odd_one():
    levels = tree_merge_trace(np.arange(5.0), 1)
    assert [len(level) for level in levels] == [5, 3, 2, 1]
    carried = levels[1][2]
    assert carried.right is None and carried.m == 4.0 and carried.d == 1.0
    assert levels[2][1].right is None  # carried again
    assert levels[-1][0].m == 4.0


# -- attention -----------------------------------------------------------------------------


def masked_scores(q, k, scale, causal):
    s = (q @ k.T) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool)), s, -INF)
    return s


@settings(max_examples=60, deadline=None)
@given(
    n_q=st.integers(1, 12), n_k=st.integers(1, 12), d=st.integers(1, 6), d_v=st.integers(1, 5),
    tile=st.integers(1, 14), causal=st.booleans(), seed=st.integers(0, 2**16),
    spread=st.sampled_from([0.1, 1.0, 10.0, 100.0]),
)
def test_flash_attention_matches_attention(n_q, n_k, d, d_v, tile, causal, seed, spread):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(0, spread, (n_q, d)), rng.normal(0, spread, (n_k, d))
    v = rng.normal(size=(n_k, d_v))
    out, lse = flash_attention(q, k, v, causal=causal, tile=tile)
    _w, ref = attention(q, k, v, causal=causal)
    assert out.shape == (n_q, d_v) and lse.shape == (n_q,)
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lse, logsumexp(masked_scores(q, k, 1 / math.sqrt(d), causal)), rtol=1e-12)
    trace = flash_attention_trace(q, k, v, tile, causal=causal)
    assert len(trace.steps) == math.ceil(n_k / tile)
    assert bits_equal(trace.output, out) and bits_equal(trace.lse, lse)


def test_flash_trace_rescales_tile_by_tile():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(7, 4)), rng.normal(size=(10, 4)), rng.normal(size=(10, 3))
    trace = flash_attention_trace(q, k, v, tile=3, scale=0.5, causal=True)
    assert [(s.start, s.stop) for s in trace.steps] == [(0, 3), (3, 6), (6, 9), (9, 10)]
    scores = masked_scores(q, k, 0.5, True)
    prev_m, prev_l = np.full(7, -INF), np.zeros(7)
    for s in trace.steps:
        assert bits_equal(s.m_before, prev_m) and bits_equal(s.l_before, prev_l)
        assert np.all(s.m_after >= s.m_before)
        assert bits_equal(s.rescale, rescale(s.m_before, s.m_after))
        tile = scores[:, s.start:s.stop]
        assert bits_equal(s.m_tile, tile.max(axis=1))
        # the partial output is attention over the keys read so far
        seen = scores[:, :s.stop]
        allowed = np.isfinite(seen).any(axis=1)
        np.testing.assert_allclose(s.l_after[allowed], np.exp(seen[allowed] - s.m_after[allowed, None]).sum(1))
        w = softmax(seen[allowed])
        np.testing.assert_allclose(s.out_partial[allowed], w @ v[:s.stop], rtol=1e-12, atol=1e-14)
        assert np.all(s.out_partial[~allowed] == 0)  # no key yet: zeros, not NaN
        np.testing.assert_allclose(s.acc_after, s.acc_before * s.rescale[:, None] + np.where(
            np.isfinite(tile), np.exp(tile - s.m_after[:, None]), 0) @ v[s.start:s.stop], rtol=1e-12, atol=1e-14)
        prev_m, prev_l = s.m_after, s.l_after
    # query 0 sees only key 0 under the causal mask; its l is 1 from the first tile on
    assert trace.steps[-1].l_after[0] == 1.0 and np.all(trace.steps[1].rescale[0] == 1.0)
    np.testing.assert_allclose(trace.output, attention(q, k, v, scale=0.5, causal=True)[1], rtol=1e-12)


def test_flash_attention_batched_float32_and_masked_rows():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 3, 6, 4)).astype(np.float32) for _ in range(3))
    out, lse = flash_attention(q, k, v, tile=4, causal=True)
    assert out.dtype == np.float32 and lse.dtype == np.float32 and out.shape == (2, 3, 6, 4)
    np.testing.assert_allclose(out, attention(q, k, v, causal=True)[1], rtol=1e-5, atol=1e-6)
    # more queries than keys with the causal mask: query 0 sees key 0 only, queries past n_k see all
    q2, k2, v2 = rng.normal(size=(5, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(flash_attention(q2, k2, v2, causal=True, tile=2)[0],
                               attention(q2, k2, v2, causal=True)[1], rtol=1e-12)
    # a scale that sends the scores to +-inf: rows still follow softmax's rules, no warning
    big, lse_big = flash_attention(q2 * 1e200, k2 * 1e200, v2, scale=1.0, tile=2)
    assert np.isinf(lse_big).all()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"tile": 0}, "tile"), ({"scale": 0.0}, "scale"), ({"scale": math.inf}, "scale"),
])
def test_flash_attention_refuses_bad_arguments(kwargs, message):
    x = np.ones((2, 2))
    with pytest.raises(ValueError, match=message):
        flash_attention(x, x, x, **kwargs)
    with pytest.raises(ValueError, match="same d"):
        flash_attention(np.ones((2, 3)), x, x)
    with pytest.raises(ValueError, match="2-D"):
        flash_attention_trace(np.ones((1, 2, 2)), x, x, 1)


# -- memory passes ------------------------------------------------------------------------


def test_memory_passes():
    assert MEMORY_METHODS == ("safe", "online", "fused")
    counts = {m: (memory_passes(m).passes, memory_passes(m).reads, memory_passes(m).writes) for m in MEMORY_METHODS}
    assert counts == {"safe": (3, 3, 1), "online": (2, 2, 1), "fused": (1, 1, 1)}
    assert memory_passes("safe").bytes(1024) == 4 * 1024 * 4
    assert memory_passes("fused").bytes(1000, itemsize=2) == 2 * 1000 * 2
    with pytest.raises(ValueError, match="safe, online, fused"):
        memory_passes("naive")


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("t", [1e50, 1e-50])
def test_temperatures_outside_the_dtype_give_no_nan(dtype, t):
    # 1e50 rounds to inf in float32 (-inf / inf = NaN) and 1e-50 to 0: divided in float64 instead
    row = np.array([-np.inf, 1.0, 2.0], dtype=dtype)
    m, d = block_partial(row, t)
    got = finish_softmax(row, m, d, t)
    want = softmax(row, temperature=t)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3)
