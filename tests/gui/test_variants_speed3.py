"""The QK-norm tab's third round of shortcuts gives the same bits as compute's own functions.

* the curves' softmax and entropy of each block of input scales are done in
  place (:func:`att._softmax_mean_entropy`): the same bits as
  ``compute.entropy(compute.softmax(x)).mean(axis=-1)``, a row with a
  non-finite maximum handed to compute;
* the plain curve's largest |logit| is c² times the largest |q kᵀ / √d|;
* at input scale 1 the plain logits are the curves' product q kᵀ times
  1/√d (no second product): ``compute.attention_scores(q, k)`` to the bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import compute
from gui.model.variants import VariantsModel
from gui.model.variants import attention as att
from tests.gui.test_variants_speed import old_curves


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal to the bit (the sign of a zero and NaN included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def reference(x: np.ndarray) -> np.ndarray:
    """compute's own softmax and entropy, one scale (one 2-D stack entry) at a time."""
    return np.array([compute.entropy(compute.softmax(block)).mean() for block in x])


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(1, 40)),
              elements=st.floats(-50.0, 50.0)), st.floats(1e-3, 1e4))
def test_the_in_place_softmax_entropy_is_computes_to_the_bit(x, c):
    logits = c * x  # a large c underflows most weights to exact zeros (the log then skips them)
    want = reference(logits)
    got = att._softmax_mean_entropy(logits.copy(), np.empty_like(logits))
    assert_bits(got, want)


def test_rows_with_a_non_finite_maximum_go_to_compute():
    x = np.array([[[0.0, 1.0, np.inf], [1.0, 2.0, 3.0]], [[np.nan, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]]])
    with np.errstate(all="ignore"):
        want = np.array([compute.entropy(compute.softmax(b)).mean() for b in x])
    got = att._softmax_mean_entropy(x.copy(), np.empty_like(x))
    np.testing.assert_array_equal(got, want)  # NaN where compute gives NaN


@settings(max_examples=8, deadline=None)
@given(st.integers(4, 160), st.floats(0.1, 10.0), st.integers(0, 2**31 - 1))
def test_the_curves_are_the_plain_loops_bits(d, gain, seed):
    for got, want in zip(att.qk_curves(d, gain, seed), old_curves(d, gain, seed)):
        assert_bits(got, want)


def test_a_changed_gain_or_d_changes_the_curves():
    """(A shortcut that ignored its inputs would pass the tests above for one case only.)"""
    base = att.qk_curves(32, 1.0, 0)
    for other in (att.qk_curves(32, 3.0, 0), att.qk_curves(33, 1.0, 0)):
        assert not np.array_equal(base[1], other[1]) and not np.array_equal(base[3], other[3])
    assert not np.array_equal(base[0], att.qk_curves(33, 1.0, 0)[0])


@pytest.mark.parametrize("d", [4, 63, 64, 65, 200, 512])
def test_the_plain_logits_at_scale_one_are_attention_scores_of_q_and_k(d):
    qk = att.qk_inputs(d, 3)
    got = att.qk_plain_logits(d, 1.0, 3, qk, att.qk_product(qk))
    assert_bits(got, compute.attention_scores(*qk))
    assert_bits(got, att.qk_plain_logits(d, 1.0, 3, qk))  # the path without the product
    # another scale never takes the product (c q (c k)ᵀ is not c² q kᵀ to the bit)
    c = 3.0
    assert_bits(att.qk_plain_logits(d, c, 3, qk, att.qk_product(qk)), compute.attention_scores(c * qk[0], c * qk[1]))


def test_the_model_makes_one_product_less_at_scale_one(monkeypatch):
    calls = []
    real = att._logits

    def counting(q, k, gain):
        calls.append(gain)
        return real(q, k, gain)

    monkeypatch.setattr(att, "_logits", counting)
    m = VariantsModel(qk_d=80, qk_scale=1.0)
    r = m.qk_result()
    assert calls == [1.0]  # the normalised logits only: the plain ones came from the curves' product
    q, k = att.qk_inputs(80, m.seed)
    assert_bits(r.plain, compute.attention_scores(q, k))
    calls.clear()
    m.set_param("qk_scale", 2.0)
    r = m.qk_result()
    assert calls == [None, 1.0]
    assert_bits(r.plain, compute.attention_scores(2.0 * q, 2.0 * k))
    m.set_param("qk_scale", 1.0)
    m.set_param("qk_d", 81)  # a new d: a new product, not the old one
    q, k = att.qk_inputs(81, m.seed)
    assert_bits(m.qk_result().plain, compute.attention_scores(q, k))
    m.set_param("seed", 5)
    q, k = att.qk_inputs(81, 5)
    assert_bits(m.qk_result().plain, compute.attention_scores(q, k))


# -- the histogram moves both axes in one setRange, the range the two moves one by one gave --------------
def _old_ranges(plot, r: att.QkResult) -> None:
    """The former Histogram.show_result's two range moves."""
    top = float(max(r.plain_counts.max(), r.normed_counts.max()))
    plot.getPlotItem().setYRange(0.0, top * 1.1, padding=0.02)
    top = float(r.edges[-1])
    reach = r.bound if r.bound <= 3 * top else top
    plot.getPlotItem().setXRange(-max(top, reach), max(top, reach), padding=0.03)


def test_the_histogram_shows_the_range_of_its_two_moves_one_by_one(qtbot, monkeypatch):
    from gui.views.variants.attention_plots import Histogram

    new, old = Histogram(), Histogram()
    for plot in (new, old):
        qtbot.addWidget(plot)
        plot.resize(500, 350)
        plot.show()
    m = VariantsModel()
    results = []
    for d, scale, gain in ((64, 1.0, 1.0), (65, 1.0, 1.0), (65, 30.0, 1.0), (4, 0.1, 10.0), (512, 3.0, 0.1)):
        m.qk_d, m.qk_scale, m.qk_gain = d, scale, gain
        results.append(m.qk_result())
    moves = []
    real = new.getPlotItem().getViewBox().setRange
    # (pyqtgraph's own auto-range, ended by the first move, moves it once more from inside: not counted)
    monkeypatch.setattr(new.getPlotItem().getViewBox(), "setRange", lambda *a, **k: (
        isinstance(k.get("xRange"), tuple) and moves.append(k)) or real(*a, **k))
    for r in results:
        new.show_result(r)
        _old_ranges(old, r)
        assert new.getPlotItem().viewRange() == old.getPlotItem().viewRange()
    assert len(moves) == len(results)  # one move per new result, both axes at once
    new.show_result(results[-1])
    assert len(moves) == len(results)  # the same result: no move
    assert new.getPlotItem().viewRange() == old.getPlotItem().viewRange()
