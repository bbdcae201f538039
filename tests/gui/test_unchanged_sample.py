"""unchanged.same compares a strided sample of a large array first: it must still say exactly what a full
comparison (np.array_equal, NaN equal to NaN for floats) says, wherever the difference lies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gui.widgets import unchanged


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), where=st.floats(0, 1), value=st.sampled_from([np.nan, 0.5, -0.0, np.inf]),
       nan_both=st.booleans(), layout=st.sampled_from(["c", "f", "strided"]))
def test_same_agrees_with_a_full_comparison(n, where, value, nan_both, layout):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, 3))
    if nan_both:  # a NaN held by both arrays is equal
        a[n // 2, 1] = np.nan
    b = a.copy()
    i = min(int(where * a.size), a.size - 1)
    b.reshape(-1)[i] = value  # one entry changed (or not, when it held that value already)
    if layout == "f":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "strided":
        a, b = a[:, ::2], b[:, ::2]
    want = bool(np.array_equal(a, b, equal_nan=True))
    assert unchanged.same(a, b) is want
    assert unchanged.same(a, a.copy()) is True


def test_a_difference_off_the_sample_is_still_found():
    a = np.zeros((512, 512))
    step = a.size // unchanged.SAMPLE_ABOVE
    b = a.copy()
    b.reshape(-1)[step + 1] = 1.0  # not on the sample's stride
    assert unchanged._samples_equal(a, b, True)  # the sample cannot tell ...
    assert not unchanged.same(a, b)  # ... so the full comparison does
    c = a.copy()
    c.reshape(-1)[step] = 1.0  # on the stride: told by the sample alone
    assert not unchanged._samples_equal(a, c, True)
    assert not unchanged.same(a, c)


def test_integer_and_bool_arrays_compare_exactly():
    a = np.arange(10_000)
    b = a.copy()
    b[-1] += 1
    assert not unchanged.same(a, b)
    assert unchanged.same(a, a.copy())
    m = np.zeros(5000, dtype=bool)
    assert unchanged.same(m, m.copy())
    m2 = m.copy()
    m2[1] = True
    assert not unchanged.same(m, m2)


def test_pooled_heatmap_draws_non_finite_cells_as_zero_and_levels_from_the_finite_ones(qtbot):
    from gui.widgets.heatmap import PooledHeatmap

    m = np.random.default_rng(3).standard_normal((6, 5))
    for diverging in (True, False):
        heatmap = PooledHeatmap("w", diverging=diverging)
        qtbot.addWidget(heatmap)
        labels = [str(i) for i in range(6)], [str(j) for j in range(5)]
        heatmap.show_matrix(m, *labels, auto_levels=True)
        np.testing.assert_array_equal(heatmap.image.image, m)
        assert heatmap.image.image is not m  # a copy: the caller may fill its array again
        bad = m.copy()
        bad[1, 2], bad[4, 0], bad[0, 4] = np.nan, np.inf, -np.inf
        heatmap.show_matrix(bad, *labels, auto_levels=True)
        np.testing.assert_array_equal(heatmap.image.image, np.nan_to_num(bad, nan=0.0, posinf=0.0, neginf=0.0))
        finite = bad[np.isfinite(bad)]
        top = np.abs(finite).max()
        want = (-top, top) if diverging else (finite.min(), finite.max())
        assert tuple(heatmap.image.levels) == pytest.approx(want, rel=0, abs=0)
