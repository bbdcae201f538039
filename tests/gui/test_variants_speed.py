"""The Variants model's per-input caches: a cached result is bit for bit a fresh recompute, a knob
recomputes only what reads it, and a changed input always invalidates.

The references are compute's public functions (or the model's pure functions called afresh) on inputs
built here; every comparison is exact (assert_array_equal), since the caches must not change a number.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.scores import ScoreRow
from gui.model.variants import LENGTH_METHODS, METHODS, VariantsModel, rows
from gui.model.variants import attention as att

SCORES = [3.0, 1.0, -2.0, 0.5, 2.5, 2.4]


def scores(values=SCORES) -> ScoreRow:
    row = ScoreRow()
    row.set_values(values)
    return row


def reference_row(x: np.ndarray, m: VariantsModel) -> dict[str, np.ndarray]:
    """Each method's weights of the scaled row x, straight from compute."""
    return {
        "softmax": compute.softmax(x),
        "softmax_one": compute.softmax_one(x),
        "sink": compute.softmax_with_sink(x, m.sink_logit),
        "sink_tokens": compute.sink_tokens_softmax(x, m.sink_tokens, m.window),
        "softcap": compute.softmax(compute.softcap(x, m.cap)),
        "ssmax": compute.ssmax(x, m.ssmax_s),
        "logn": compute.logn_softmax(x, m.logn_length),
    }


def assert_row_is_fresh(m: VariantsModel, row: ScoreRow) -> None:
    r = m.row_result(row)
    values = row.values if m.row == "scores" else rows.synthetic_row(m.row_n, m.needle, m.seed)
    x = m.scale * values
    np.testing.assert_array_equal(r.logits, x)
    for method, w in reference_row(x, m).items():
        np.testing.assert_array_equal(r.weights[method], w, err_msg=method)
    np.testing.assert_array_equal(r.shown, rows.shown_indices(x))
    assert r.selected == m.selected()


def test_a_knob_recomputes_only_the_variant_that_reads_it():
    m, row = VariantsModel(), scores()
    before = m.row_result(row)
    m.set_param("sink_logit", 3.5)
    after = m.row_result(row)
    for method in METHODS:
        if method == "sink":
            assert not np.array_equal(after.weights[method], before.weights[method])
        else:
            assert after.weights[method] is before.weights[method], method  # kept, not recomputed
    assert_row_is_fresh(m, row)


@pytest.mark.parametrize("name, value, method", [
    ("cap", 2.0, "softcap"), ("ssmax_s", 1.7, "ssmax"), ("logn_length", 8, "logn"),
    ("sink_tokens", 0, "sink_tokens"), ("window", 1, "sink_tokens"), ("sink_logit", -4.0, "sink"),
])
def test_each_knob_invalidates_its_variant(name, value, method):
    m, row = VariantsModel(row="random", row_n=300), scores()  # longer than log-n's training length
    before = m.row_result(row).weights[method]
    m.set_param(name, value)
    assert not np.array_equal(m.row_result(row).weights[method], before)
    assert_row_is_fresh(m, row)


def test_the_row_the_scale_and_the_scores_invalidate_every_variant():
    m, row = VariantsModel(), scores()
    m.row_result(row)
    m.set_param("scale", 2.0)
    assert_row_is_fresh(m, row)
    row.set_value(2, 7.0)  # the shared scores changed in place: same object, new values
    assert_row_is_fresh(m, row)
    m.set_param("row", "random")
    m.set_param("row_n", 40)
    assert_row_is_fresh(m, row)
    m.set_param("seed", 9)
    assert_row_is_fresh(m, row)
    m.set_param("needle", 2.0)
    assert_row_is_fresh(m, row)


MOVES = st.lists(st.tuples(
    st.sampled_from(["scale", "sink_logit", "cap", "ssmax_s", "logn_length", "needle", "row", "sink_tokens",
                     "window", "seed"]),
    st.floats(0.0, 1.0)), min_size=1, max_size=8)


def _move(m: VariantsModel, name: str, u: float) -> None:
    if name == "row":
        m.set_param("row", "random" if u < 0.5 else "scores")
        return
    lo, hi = m.bounds(name)
    hi = min(hi, 600)  # keep the synthetic rows and windows small
    if name in ("logn_length", "sink_tokens", "window", "seed"):
        m.set_param(name, int(round(lo + u * (hi - lo))))
    else:
        m.set_param(name, lo + u * (hi - lo))


@settings(max_examples=25, deadline=None)
@given(MOVES)
def test_after_any_moves_the_cached_row_and_softcap_are_a_fresh_recompute(moves):
    m, row = VariantsModel(row_n=300), scores()
    for name, u in moves:
        _move(m, name, u)
        m.row_result(row)
        m.softcap_result(row)
    assert_row_is_fresh(m, row)
    x = m.row_result(row).logits
    s, fresh = m.softcap_result(row), rows.softcap_result(x, m.cap)
    for field in ("capped", "clipped", "grad", "clip_grad", "logits", "capped_logits", "before", "after", "shown"):
        np.testing.assert_array_equal(getattr(s, field), getattr(fresh, field), err_msg=field)


def assert_length_is_fresh(m: VariantsModel) -> None:
    got = m.length_result()
    fresh = rows.length_result(m.needle, m.seed, m.scale, m.ssmax_s, m.logn_length)
    np.testing.assert_array_equal(got.n, fresh.n)
    for method in LENGTH_METHODS:
        np.testing.assert_array_equal(got.top[method], fresh.top[method], err_msg=method)
        np.testing.assert_array_equal(got.entropy[method], fresh.entropy[method], err_msg=method)
    # and the fresh curves are compute's numbers at these rows (the first, a middle and the last n)
    noise = np.random.default_rng(m.seed).normal(size=rows.MAX_N - 1)
    for i in (0, 12, len(got.n) - 1):
        n = int(got.n[i])
        x = m.scale * np.concatenate([[m.needle], noise[: n - 1]])
        assert got.top["softmax"][i] == compute.softmax(x).max()
        assert got.top["ssmax"][i] == compute.ssmax(x, m.ssmax_s).max()
        assert got.entropy["ssmax"][i] == compute.entropy(compute.ssmax(x, m.ssmax_s))
        assert got.top["logn"][i] == compute.logn_softmax(x, m.logn_length).max()
        assert got.entropy["logn"][i] == compute.entropy(compute.logn_softmax(x, m.logn_length))


def test_the_length_curves_recompute_only_the_method_whose_knob_moved():
    m = VariantsModel()
    before = m.length_result()
    m.set_param("ssmax_s", 1.25)
    after = m.length_result()
    assert after.top["softmax"] is before.top["softmax"] and after.top["logn"] is before.top["logn"]
    assert not np.array_equal(after.top["ssmax"], before.top["ssmax"])
    m.set_param("logn_length", 64)
    again = m.length_result()
    assert again.top["ssmax"] is after.top["ssmax"] and again.top["softmax"] is before.top["softmax"]
    assert not np.array_equal(again.top["logn"], after.top["logn"])
    assert_length_is_fresh(m)
    for name, value in (("scale", 0.5), ("needle", 3.0), ("seed", 4)):  # these change every curve
        old = m.length_result()
        m.set_param(name, value)
        new = m.length_result()
        for method in LENGTH_METHODS:
            assert not np.array_equal(new.top[method], old.top[method]), (name, method)
        assert_length_is_fresh(m)


def test_the_qk_curves_without_qk_norm_are_kept_while_the_gain_moves():
    m = VariantsModel(qk_d=32)
    before = m.qk_result()
    m.set_param("qk_gain", 2.5)
    after = m.qk_result()
    assert after.plain_max is before.plain_max and after.plain_entropy is before.plain_entropy
    assert not np.array_equal(after.normed_max, before.normed_max)
    for d, gain in ((32, 2.5), (8, 2.5), (8, 0.3)):
        m.set_param("qk_d", d)
        m.set_param("qk_gain", gain)
        q = m.qk_result()
        fresh = att.qk_curves(d, gain, m.seed)
        for got, want in zip((q.plain_max, q.normed_max, q.plain_entropy, q.normed_entropy), fresh):
            np.testing.assert_array_equal(got, want)
        # compute's own QK-norm at one input scale (the curves use one product for every scale: to rounding)
        rng = np.random.default_rng([m.seed, 4])
        qq, kk = rng.normal(size=(att.QK_N, d)), rng.normal(size=(att.QK_N, d))
        c = att.QK_SCALES[20]
        normed = compute.attention_scores(compute.qk_norm(c * qq, gain=gain), compute.qk_norm(c * kk, gain=gain))
        assert q.normed_max[20] == pytest.approx(np.abs(normed).max(), rel=1e-12)
        assert q.plain_max[20] == pytest.approx(np.abs(compute.attention_scores(c * qq, c * kk)).max(), rel=1e-12)
        assert q.normed_max.max() <= math.sqrt(d) * gain**2 * (1 + 1e-12)


def old_curves(d: int, gain: float, seed: int) -> list[np.ndarray]:
    """The curves as one loop over the input scales, from compute's softmax and entropy."""
    q, k = att.random_qk(att.QK_N, d, seed, 4)
    raw = q @ k.T / math.sqrt(d)
    mq, mk = np.mean(q * q, axis=-1), np.mean(k * k, axis=-1)
    out = [np.empty(att.QK_SCALES.size) for _ in range(4)]
    for i, c in enumerate(att.QK_SCALES):
        rq, rk = c / np.sqrt(c * c * mq + att.QK_EPS), c / np.sqrt(c * c * mk + att.QK_EPS)
        for j, logits in enumerate((c * c * raw, gain * gain * rq[:, None] * raw * rk[None, :])):
            out[j][i] = np.abs(logits).max()
            out[2 + j][i] = compute.entropy(compute.softmax(logits)).mean()
    return out


def test_the_old_single_loop_of_the_qk_curves_gives_the_same_bits():
    """qk_curves is split in a plain and a normalised half; here the one loop it replaced, written out."""
    d, gain, seed = 16, 1.7, 3
    for got, want in zip(att.qk_curves(d, gain, seed), old_curves(d, gain, seed)):
        np.testing.assert_array_equal(got, want)


# -- the view: the tab shown after moves on another tab shows the model's fresh numbers ---------------
def _redrawn(qtbot, view) -> None:
    """Wait for the throttled redraw of the tab shown (no flush: that would draw every tab)."""
    qtbot.waitUntil(lambda: not view.redraw_pending)


def test_moves_on_the_length_tab_show_on_the_row_tab(qtbot, make_view, lab):
    lab.scores.set_values(SCORES)
    view = make_view("variants")
    m = view.model
    view.select_tab("length")
    m.set_param("ssmax_s", 1.5)
    m.set_param("logn_length", 16)
    _redrawn(qtbot, view)
    np.testing.assert_array_equal(view.length_top.data(1)[1], m.length_result().top["ssmax"])
    assert view.readouts["variants.readout.n"].text() == f"{len(SCORES):,}"
    view.select_tab("row")
    _redrawn(qtbot, view)
    x = m.scale * lab.scores.values
    fresh = reference_row(x, m)
    for i, method in enumerate(METHODS):
        if view.row_bars.shown[i]:
            np.testing.assert_array_equal(view.row_bars.heights[i], fresh[method], err_msg=method)
    legend = view.row_bars.getPlotItem().legend
    assert "s=1.5" in legend.items[METHODS.index("ssmax")][1].text
    view.select_tab("softcap")
    m.set_param("cap", 3.0)
    _redrawn(qtbot, view)
    np.testing.assert_array_equal(view.softcap_bars.heights[1], compute.softmax(compute.softcap(x, 3.0)))
    np.testing.assert_array_equal(view.softcap_bars.heights[0], compute.softmax(x))


@pytest.mark.parametrize("tab, name, value", [("row", "scale", 2.0), ("sigmoid", "sigmoid_n", 40),
                                              ("qk_norm", "qk_gain", 2.0)])
def test_a_change_paints_each_plot_it_touches_once(qtbot, make_view, lab, tab, name, value):
    """The ranges are mapped in the redraw, so a plot whose range moved paints once, not twice."""
    from tests.gui.test_paint_only_changes import Paints

    view = make_view("variants")
    view.select_tab(tab)
    _redrawn(qtbot, view)
    painted = Paints(view.plots()).across(qtbot, view, lambda: view.model.set_param(name, value))
    assert painted == dict.fromkeys(view.plots(), 1)


@pytest.mark.parametrize("length", [8, 300, 65_536])
def test_log_n_takes_softmax_s_entries_for_rows_within_the_training_length(length):
    """Up to the training length log-n's factor is 1: its curve copies softmax's there, and the copy is
    what compute.logn_softmax gives at every length (above it too)."""
    m = VariantsModel(needle=4.0, seed=2, scale=1.5, logn_length=length)
    got = m.length_result()
    noise = np.random.default_rng(2).normal(size=rows.MAX_N - 1)
    for i, n in enumerate(got.n):
        x = 1.5 * np.concatenate([[4.0], noise[: int(n) - 1]])
        w = compute.logn_softmax(x, length)
        assert got.top["logn"][i] == w.max(), n
        assert got.entropy["logn"][i] == compute.entropy(w), n
    within = got.n <= length
    np.testing.assert_array_equal(got.top["logn"][within], got.top["softmax"][within])
    assert np.all(got.top["logn"][~within] > got.top["softmax"][~within])  # log-n sharpens the longer rows
