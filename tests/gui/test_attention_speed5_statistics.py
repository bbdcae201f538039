"""The Attention core's statistics (gui.model.attention.statistics), counted block by block on every core, are still NumPy's to the bit.

``core.spreads`` sums a C-contiguous float64 array in the parts NumPy's pairwise sum splits it into
(each part summed by ``np.add.reduce``, the parts added in NumPy's order), the deviations made in a
small scratch per thread; ``core.sample_histograms`` finds the largest magnitude and counts the bins
block by block. These tests compare them with ``np.std``, ``np.abs(x).max()`` and ``np.histogram``
on sizes that are not powers of two, with the block sizes made small (so an array is many parts and
the parts' tree is deep), on one thread and on the pool, and with NaN and empty inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute._pool import threads
from gui.model.attention import statistics as core_module
from gui.model.attention.statistics import HIST_BINS, many_binned_counts, sample_histograms, spreads


def test_the_parts_cover_the_array_in_order_as_numpy_splits_it():
    for size, block in [(2**21, 1 << 16), (1_000_003, 1 << 16), (1000, 7), (129, 1), (128, 1), (5, 64)]:
        parts = core_module._pairwise_blocks(size, block)
        starts = [lo for lo, _ in parts]
        assert starts == sorted(starts) and starts[0] == 0
        assert all(lo + m == nxt for (lo, m), nxt in zip(parts, starts[1:] + [size]))
        assert all(m <= max(block, 128) for _, m in parts)  # numpy never splits 128 entries or fewer
    assert core_module._pairwise_blocks(2**21, 1 << 16) == [(i << 16, 1 << 16) for i in range(32)]


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 60_000), block=st.sampled_from([1, 8, 100, 129, 1000, 1 << 16]),
       offset=st.sampled_from([0.0, 1e3, -7.5, 1e8]), spread=st.sampled_from([1e-6, 1.0, 300.0]),
       one_thread=st.booleans(), seed=st.integers(0, 2**16))
def test_blocked_spreads_are_numpys_std_to_the_bit(size, block, offset, spread, one_thread, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(size) * spread + offset
    b = (rng.standard_normal(size) * spread * 3 - offset).reshape(-1, 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core_module, "SPREAD_BLOCK", block)
        patch.setattr(core_module, "SPLIT_ENTRIES", 0)  # the pool however small the arrays
        if one_thread:
            with threads(1):
                got = spreads(a, b, a[::-1].copy())
        else:
            got = spreads(a, b, a[::-1].copy())
    assert got == (float(a.std()), float(b.std()), float(a[::-1].std()))


@pytest.mark.parametrize("size", [2**21, 3 * 2**19 + 17, 1_000_003])
def test_blocked_spreads_at_the_attention_views_sizes(size):
    """8 heads of 512 x 512 scores (2**21 entries: 32 parts) and two sizes numpy splits unevenly."""
    rng = np.random.default_rng(size)
    a = rng.standard_normal(size) * 40 + 3
    mixed = [a, a * 0.125, np.asfortranarray(a[: size // 8 * 8].reshape(-1, 8)[:, :5]), a.astype(np.float32)]
    assert spreads(*mixed) == tuple(float(x.std()) for x in mixed)


def test_spreads_of_nan_inf_and_a_single_entry_are_numpys():
    with np.errstate(invalid="ignore"):
        arrays = [np.array([1.0, np.nan, 2.0] * 50_000), np.array([np.inf, 1.0] * 70_000), np.array([5.0])]
        expected = tuple(float(x.std()) for x in arrays)
        got = spreads(*arrays)
    assert np.array_equal(got, expected, equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 5000), stride=st.integers(1, 3), block=st.sampled_from([1, 7, 64, 1 << 16]),
       nan_at=st.one_of(st.none(), st.integers(0, 4999)), one_thread=st.booleans(), seed=st.integers(0, 2**16))
def test_largest_magnitudes_are_numpys_abs_max(size, stride, block, nan_at, one_thread, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size * stride) * rng.choice([1e-3, 1.0, 1e6])
    if nan_at is not None:
        x[nan_at % x.size] = np.nan
    sample, other = x[::stride], -x[::-1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core_module, "COUNT_BLOCK", block)
        patch.setattr(core_module, "SPLIT_ENTRIES", 0)
        if one_thread:
            with threads(1):
                got = core_module._largest_magnitudes([sample, other])
        else:
            got = core_module._largest_magnitudes([sample, other])
    assert np.array_equal(got, [np.abs(sample).max(), np.abs(other).max()], equal_nan=True)


def test_an_empty_sample_raises_numpys_error():
    with pytest.raises(ValueError, match="zero-size"):
        core_module._largest_magnitudes([np.zeros(3), np.zeros(0)])


@settings(max_examples=30, deadline=None)
@given(size=st.integers(1, 3000), block=st.sampled_from([1, 7, 64, 1 << 16]), near=st.sampled_from([0.0, 1e-6]),
       ends=st.booleans(), seed=st.integers(0, 2**16))
def test_counts_on_the_pool_are_numpys_histogram(size, block, near, ends, seed):
    """Whatever the blocks and however many threads; with NEAR_EDGE 0 (no entry checked against the
    edges) the entries at the right end still land in the last bin."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(size) * 5
    b = a * 0.125
    if ends:
        a[: min(3, size)] = np.abs(a).max()  # exactly the right edge
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(core_module, "COUNT_BLOCK", block)
        patch.setattr(core_module, "SPLIT_ENTRIES", 0)
        patch.setattr(core_module, "NEAR_EDGE", near)
        edges, counts_a, counts_b = sample_histograms(a, b)
        again = many_binned_counts([b, a], edges)
    top = max(np.abs(a).max(), np.abs(b).max(), 1e-12)
    np.testing.assert_array_equal(edges, np.linspace(-top, top, HIST_BINS + 1))
    if near:  # numpy's definition, entry for entry
        np.testing.assert_array_equal(counts_a, np.histogram(a, edges)[0])
        np.testing.assert_array_equal(counts_b, np.histogram(b, edges)[0])
    assert counts_a.sum() == counts_b.sum() == size
    assert counts_a[-1] >= np.count_nonzero(a == edges[-1])
    np.testing.assert_array_equal(again[0], counts_b)
    np.testing.assert_array_equal(again[1], counts_a)
