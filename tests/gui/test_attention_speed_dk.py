"""The Attention core's histograms are counted in O(n) and are still np.histogram's, to the entry.

``core.binned_counts`` puts each entry in the bin its position (x - lo) * bins / (hi - lo) falls in,
and entries whose position is near a whole number (near an edge) in the bin the edges themselves
give. These tests compare it with ``np.histogram(x, edges)`` (which sorts and searches the edges)
on samples with entries exactly on every edge, one float either side of them, ties, both ends of
the range, and in several blocks; and compare the core's histograms of integer-valued inputs (whose
scores lie on the edges often) with np.histogram of the core's own score matrices. A head's weights
computed from the core's product are the full ``compute.attention`` call's to the bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.attention import AttentionModel, LoadedArrays
from gui.model.attention import core as core_module
from gui.model.attention import statistics as stats_module
from gui.model.attention.core import compute_core
from gui.model.attention.statistics import HIST_BINS, binned_counts, sample_histograms


def _edges(x: np.ndarray) -> np.ndarray:
    top = float(max(np.abs(x).max(), 1e-12))
    return np.linspace(-top, top, HIST_BINS + 1)


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 400), spread=st.sampled_from([1e-13, 1e-3, 1.0, 7.0, 1e6, 1e300]),
       on_edges=st.integers(0, 61), beside=st.booleans(), ties=st.booleans(), block=st.sampled_from([7, 64, 1 << 16]),
       seed=st.integers(0, 2**16))
def test_binned_counts_are_numpys_histogram(size, spread, on_edges, beside, ties, block, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size) * spread
    if ties:
        x[: size // 2] = np.round(x[: size // 2] / spread * 3) * spread / 3
    edges = _edges(x)
    m = min(on_edges, size)
    x[:m] = edges[rng.permutation(HIST_BINS + 1)[:m]]  # exactly on edges (both ends among them)
    if beside and size > m:
        near = edges[rng.integers(0, HIST_BINS + 1, size - m)]
        x[m:] = np.clip(np.nextafter(near, rng.choice([-np.inf, np.inf], size - m)), edges[0], edges[-1])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stats_module, "COUNT_BLOCK", block)
        counts = binned_counts(x, edges)
    np.testing.assert_array_equal(counts, np.histogram(x, edges)[0])
    assert counts.sum() == size  # every entry lies in the edges' range


def test_binned_counts_of_a_strided_view_are_those_of_its_copy():
    rng = np.random.default_rng(2)
    raw = rng.standard_normal((3, 50, 40)) * 5
    view = raw.reshape(-1)[::3]
    edges = _edges(view)
    np.testing.assert_array_equal(binned_counts(view, edges), np.histogram(np.array(view), edges)[0])


def test_sample_histograms_take_both_samples_range_and_a_floor():
    raw = np.array([-1.0, 0.5, 3.0])
    scaled = raw * 2.5
    edges, counts_raw, counts_scaled = sample_histograms(raw, scaled)
    np.testing.assert_array_equal(edges, np.linspace(-7.5, 7.5, HIST_BINS + 1))
    np.testing.assert_array_equal(counts_raw, np.histogram(raw, edges)[0])
    np.testing.assert_array_equal(counts_scaled, np.histogram(scaled, edges)[0])
    zeros = np.zeros(4)
    edges, counts, _ = sample_histograms(zeros, zeros)
    np.testing.assert_array_equal(edges, np.linspace(-1e-12, 1e-12, HIST_BINS + 1))
    assert counts.sum() == 4 and counts[HIST_BINS // 2] == 4  # 0 is the left edge of the middle bin


def test_a_huge_range_goes_the_sorted_way():
    """2 * top overflows: the O(n) path is not taken; the counts are the sorted path's (histograms)."""
    x = np.array([-1e308, 0.0, 1e308, 5e307])
    with np.errstate(over="ignore", invalid="ignore"):  # np.linspace's own overflow, as before
        edges, counts_raw, counts_scaled = sample_histograms(x, x)
    ordered = np.sort(x)
    np.testing.assert_array_equal(counts_raw, stats_module.sorted_counts(ordered, edges))
    np.testing.assert_array_equal(counts_scaled, counts_raw)


@pytest.mark.parametrize(("scaling", "causal"), [("sqrt_dk", "off"), ("none", "on"), ("custom", "off")])
def test_integer_inputs_on_the_edges_are_counted_as_numpy_counts_them(scaling, causal):
    """Integer q and k: integer scores, many of them on the edges (top is an integer, 60 bins)."""
    rng = np.random.default_rng(8)
    q, k = (rng.integers(-3, 4, (2, 30, 4)).astype(float) for _ in range(2))
    v = rng.standard_normal((2, 30, 3))
    m = AttentionModel(source="file", scaling=scaling, temperature=0.5, causal=causal)
    m.loaded = LoadedArrays(q, k, v, None, "ints.npz")
    core = compute_core(m.snapshot(), head=1)
    raw = q @ np.swapaxes(k, -1, -2)
    np.testing.assert_array_equal(core.raw, raw)  # integers: exact in any order
    on_edges = np.isin(core.raw, core.hist_edges).sum() + np.isin(core.scores, core.hist_edges).sum()
    assert on_edges > 100  # the case this test is about
    for counts, matrix in ((core.hist_raw, core.raw), (core.hist_scaled, core.scores)):
        np.testing.assert_array_equal(counts, np.histogram(matrix.reshape(-1), core.hist_edges)[0] / matrix.size)
    w, out = compute.attention(q, k, v, scale=m.snapshot().scale_factor(), causal=causal == "on")
    np.testing.assert_array_equal(core.head_weights(1), w[1])
    np.testing.assert_array_equal(core.head_output(1), out[1])
    np.testing.assert_array_equal(core.weights, w)


def test_a_changed_d_k_gives_new_histograms_and_each_is_a_fresh_cores():
    m = AttentionModel(n=64, d_k=16, heads=3, seed=5)
    first = m.core()
    m.d_k = 17
    second = m.core()
    assert second is not first and not np.array_equal(second.hist_raw, first.hist_raw)
    fresh = compute_core(m.snapshot())
    for name in ("hist_edges", "hist_raw", "hist_scaled"):
        np.testing.assert_array_equal(getattr(second, name), getattr(fresh, name))
    raw = compute.attention_scores(*core_module.random_qkv(64, 17, 3, 5)[:2], 1.0)
    np.testing.assert_array_equal(second.hist_raw, np.histogram(raw.reshape(-1), second.hist_edges)[0] / raw.size)
    assert second.std_raw == float(raw.std())


def test_number_labels_are_made_once_per_n_and_label_the_core():
    from gui.model.attention.core import number_labels

    assert number_labels(12) == tuple(f"{i}" for i in range(1, 13))
    assert number_labels(12) is number_labels(12) and number_labels(3) == ("1", "2", "3")
    core = compute_core(AttentionModel(n=12, d_k=5, heads=2).snapshot())
    assert core.q_labels == core.k_labels == tuple(f"{i}" for i in range(1, 13))


def _layouts(a: np.ndarray, how: str) -> np.ndarray:
    if how == "fortran":
        return np.asfortranarray(a)
    if how == "transposed":
        return a.T
    if how == "strided":
        return a[..., ::2] if a.shape[-1] > 1 else a
    return a


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3), offset=st.sampled_from([0.0, 1e3, -7.5, 1e8]),
       spread=st.sampled_from([1e-6, 1.0, 300.0]), how=st.sampled_from(["c", "fortran", "transposed", "strided"]),
       dtype=st.sampled_from([np.float64, np.float32]), seed=st.integers(0, 2**16))
def test_spreads_are_numpys_std_to_the_bit(shape, offset, spread, how, dtype, seed):
    from gui.model.attention.statistics import spreads

    rng = np.random.default_rng(seed)
    a = _layouts((rng.standard_normal(shape) * spread + offset).astype(dtype), how)
    b = _layouts((rng.standard_normal(shape) * spread * 3 - offset).astype(dtype), how)
    big = rng.standard_normal(20_000) * spread + offset  # past the pairwise sum's blocks
    got = spreads(a, b, big, a * 0.125)
    assert got == (float(a.std()), float(b.std()), float(big.std()), float((a * 0.125).std()))


def test_the_core_spreads_are_numpys_at_a_large_size():
    core = compute_core(AttentionModel(n=300, d_k=20, heads=3, seed=9).snapshot())
    assert core.std_raw == float(core.raw.std()) and core.std_scaled == float(core.scores.std())
    assert core.std_raw == float(compute.attention_scores(*core_module.random_qkv(300, 20, 3, 9)[:2], 1.0).std())


@pytest.mark.parametrize("how", ["fortran", "transposed"])
def test_spreads_sum_in_the_arrays_own_order(how):
    """In another layout the deviations are summed in another order (a different last bit for about one
    array in four of these): the scratch follows each array's layout, as ``a - mean`` does in np.std."""
    from gui.model.attention.statistics import spreads

    rng = np.random.default_rng(4)
    arrays = [_layouts(rng.standard_normal((300, 201)) * 3 + 1e3, how) for _ in range(20)]
    shape = arrays[0].shape
    arrays += [x for _ in range(10) for x in (rng.standard_normal(shape) * 3 + 1e3, arrays[_])]  # mixed layouts
    assert spreads(*arrays) == tuple(float(a.std()) for a in arrays)
