"""Numbers on the plots: bar values, placeholders for NaN/÷0/∞, method toggles, thinned ticks,
heatmap cell numbers that fit, legends off the data, stale hover readouts cleared."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QPointF

import compute
from gui.model.normalizers import METHODS
from gui.widgets import bar_labels, legends, ticks


def settle(qtbot, view):
    qtbot.wait(30)
    view.flush()


def hold(qtbot, plot):
    """A closed pyqtgraph plot drops its PlotItem, so a test closes a holder, not the plot."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    holder = QWidget()
    qtbot.addWidget(holder)
    QVBoxLayout(holder).addWidget(plot)
    return holder


def hover(plot, x, y):
    vb = plot.getPlotItem().getViewBox()
    plot.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(x, y)))


# -- stale hover readouts ---------------------------------------------------------------


def test_a_hover_readout_leaves_the_status_bar_with_its_view(qtbot, window):
    norm = window.show_view("normalizers")
    settle(qtbot, norm)
    hover(norm.bars, norm.bars._bars[0].opts["x"][0], 0.3)
    message = window.statusBar().currentMessage()
    assert message.startswith("Token 1 — softmax: w = ")
    window.show_view("precision")
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "")


def test_a_hover_readout_is_cleared_when_the_data_changes(qtbot, window):
    calc = window.show_view("calculator")
    settle(qtbot, calc)
    hover(calc.bars, 0.0, 0.3)
    assert window.statusBar().currentMessage() == "Token 1 — α = 0.609 (60.95%)"
    window.lab.scores.set_values([1.0, 2.0])
    settle(qtbot, calc)
    assert window.statusBar().currentMessage() == ""


def test_other_messages_stay_when_the_data_changes(qtbot, window):
    calc = window.show_view("calculator")
    settle(qtbot, calc)
    window.show_status("Wrote 4 file(s)")
    window.lab.scores.set_values([1.0, 2.0])
    settle(qtbot, calc)
    assert window.statusBar().currentMessage() == "Wrote 4 file(s)"


# -- pure rules ------------------------------------------------------------------------------
def reference_stride(positions, extents, scale, gap):
    for k in range(1, len(positions) + 1):
        kept = list(range(0, len(positions), k))
        if all((positions[b] - positions[a]) * scale >= (extents[a] + extents[b]) / 2 + gap
               for a, b in zip(kept, kept[1:])):
            return k
    return len(positions)


@given(st.lists(st.floats(1, 80), min_size=1, max_size=60), st.floats(0.5, 60))
def test_the_tick_stride_is_the_smallest_that_clears_every_kept_pair(extents, scale):
    positions = [float(i) for i in range(len(extents))]
    k = ticks.stride_that_fits(positions, extents, scale)
    assert k == reference_stride(positions, extents, scale, ticks.LABEL_GAP)
    kept = ticks.thin_ticks([(p, str(p)) for p in positions], extents, scale)
    assert kept[0][0] == 0.0
    assert len(kept) == len(range(0, len(positions), k))


@given(st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=40), st.floats(3, 60), st.floats(80, 400))
def test_placed_value_labels_never_overlap_each_other_or_other_bars(values, pitch, height):
    v = np.array(values)
    n = v.size
    x = (np.arange(n) + 0.5) * pitch
    zero = height / 2
    end = zero - v * height / 2.2
    bars = np.column_stack([x - 0.4 * pitch, np.minimum(end, zero), x + 0.4 * pitch, np.maximum(end, zero)])
    keep = bars[:, 3] - bars[:, 1] >= 1
    rows = np.cumsum(keep) - 1
    own = np.where(keep, rows, -1)
    width = np.full(n, 34.0)
    r = bar_labels.place(x, end, np.full(n, zero), width, np.full(n, 14.0), slot=pitch, bar_width=0.8 * pitch,
                         plot_height=height, priority=np.abs(v), bars=bars[keep], own_bar=own)
    shown = r.rects[r.where != bar_labels.HIDDEN]
    for a in range(len(shown)):
        for b in range(a + 1, len(shown)):
            assert not bar_labels._overlaps(shown[a], shown[b][None, :]).any()
    for k in np.flatnonzero(r.where != bar_labels.HIDDEN):
        others = np.delete(bars[keep], own[k], axis=0) if own[k] >= 0 else bars[keep]
        spill = min(bar_labels.SPILL, (r.rects[k][2] - r.rects[k][0]) / 2)  # a label may reach over a neighbour's outline
        assert not bar_labels._overlaps(r.rects[k] + np.array([spill, 0, -spill, 0]), others).any()
        assert r.rects[k][1] >= 0 and r.rects[k][3] <= height


def test_value_texts_and_decimals():
    assert [bar_labels.value_text(v, True) for v in (0.515, 0.0, -0.25, np.nan)] == ["51.5%", "0%", "-25.0%", "NaN"]
    assert bar_labels.decimals_for(np.array([0.238, -0.137])) == 3
    assert bar_labels.decimals_for(np.array([0.00488, -0.0007])) == 5
    assert bar_labels.decimals_for(np.array([12.5, np.inf])) == 1
    assert bar_labels.value_text(-0.000673, False, 5) == "-0.00067"


def test_fit_range_leaves_the_pixels_asked_for():
    lo, hi = bar_labels.fit_range(0.0, 1.0, 1.0, 0.0, 300.0, 40.0, 0.0)
    assert lo == 0.0
    assert (hi - 1.0) / (hi - lo) * 300.0 == pytest.approx(40.0, abs=0.5)


def test_the_emptiest_corner_is_the_one_without_points():
    points = np.array([[10.0, 10.0], [190.0, 10.0], [190.0, 90.0]])  # all but the bottom left
    assert legends.emptiest_corner(points, (50, 30), (200, 100), (6, 6), "top_right") == "bottom_left"
    assert legends.emptiest_corner(np.zeros((0, 2)), (50, 30), (200, 100), (6, 6), "top_right") == "top_right"


# -- Normalizers -------------------------------------------------------------------------------


def shown_labels(chart, series):
    """The visible value labels of ``series``, by category."""
    return {i: t.toPlainText() for s, i, t in chart.values.items() if s == series and t.isVisible()}


def test_normalizers_labels_are_the_weights_and_the_articles_direct_normalisation_reads(qtbot, make_view, lab):
    view = make_view("normalizers")
    view.editor.presets.activated.emit(2)  # the article's logits 5.2, 3.1, 1.8
    assert lab.scores.values.tolist() == [5.2, 3.1, 1.8]
    settle(qtbot, view)
    linear = METHODS.index("linear")
    assert shown_labels(view.bars, linear) == {0: "51.5%", 1: "30.7%", 2: "17.8%"}
    r = view.model.result(view.scores)
    for s, m in enumerate(METHODS):  # every label is its weight, formatted (exact zeros read 0%)
        expected = ["0%" if w == 0 else f"{100 * w:.1f}%" for w in r.weights_of(m)]
        assert view.bars.value_texts(s) == expected, m
    assert shown_labels(view.bars, 0) == {0: "86.5%", 1: "10.6%", 2: "2.9%"}  # softmax, as the article says


def test_normalizers_direct_normalisation_of_5_3_2(qtbot, make_view, lab):
    view = make_view("normalizers")
    lab.scores.set_values([5.0, 3.0, 2.0])
    settle(qtbot, view)
    assert shown_labels(view.bars, METHODS.index("linear")) == {0: "50.0%", 1: "30.0%", 2: "20.0%"}


def test_zero_sum_draws_divide_by_zero_placeholders_and_the_hover_says_so(qtbot, make_view, lab):
    view = make_view("normalizers")
    view.editor.presets.activated.emit(5)  # [1, -1]
    settle(qtbot, view)
    linear = METHODS.index("linear")
    assert view.bars.placeholders() == [(linear, 0, "div0"), (linear, 1, "div0")]
    hole = view.bars._holes[linear]
    assert hole.isVisible()
    lo, hi = view.bars.getPlotItem().getViewBox().viewRange()[1]
    assert list(hole.opts["height"]) == [pytest.approx(hi), pytest.approx(hi)]  # to the top of the range
    assert view.bars.value_texts(linear, visible_only=True) == ["÷0", "÷0"]
    messages = []
    view.status.connect(messages.append)
    x = view.bars._bars[linear].opts["x"][1]  # the middle of token 2's linear placeholder
    hover(view.bars, x, 0.5)
    assert messages[-1] == "Token 2 — linear s/Σs: w = NaN, division by zero (÷0): the hatched bar marks a value that is not a number"
    hover(view.bars, view.bars._bars[0].opts["x"][1], 0.05)  # one bar: one method
    assert messages[-1] == "Token 2 — softmax: w = 0.119 (11.92%)"
    hover(view.bars, 1.0 + 0.48, 0.5)  # past the group's bars: every shown method
    assert "linear s/Σs: w = NaN, division by zero" in messages[-1]
    assert "softmax: w = 0.119 (11.92%)" in messages[-1]
    view.editor.presets.activated.emit(4)  # [3, -1, 2]: finite again, no placeholder
    settle(qtbot, view)
    assert view.bars.placeholders() == []
    assert not hole.isVisible()


def test_nan_and_infinite_bars_get_their_own_tags(qtbot):
    from gui.widgets.bar_chart import BarChart

    chart = BarChart("t", [("a", "accent"), ("b", "secondary")], y_range=(-1.0, 1.0), percent=False)
    holder = hold(qtbot, chart)
    holder.resize(600, 400)
    holder.show()
    qtbot.waitExposed(holder)
    chart.set_data(["x", "y", "z"], [np.array([0.5, np.nan, np.inf]), np.array([-np.inf, 0.25, -0.5])])
    assert sorted(chart.placeholders()) == [(0, 1, "nan"), (0, 2, "inf"), (1, 0, "neg_inf")]
    assert chart.describe(2.0, 0.0) == "z — a: α = +∞ (the hatched bar runs off the top of the plot); b: α = -0.500"
    assert set(chart.value_texts()) >= {"NaN", "∞", "−∞", "0.500", "0.250", "-0.500"}
    lo, hi = chart.getPlotItem().getViewBox().viewRange()[1]
    np.testing.assert_allclose(chart._holes[1].opts["height"], [lo])
    assert chart.heights[0].tolist() == [0.5, 0.0, 0.0]  # the real bars hold 0 where undefined


def test_method_check_boxes_change_the_model_the_bars_and_the_export(qtbot, make_view, lab):
    view = make_view("normalizers")
    model = lab.models["normalizers"]
    view.methods.only.click()
    assert model.shown == ("softmax",)
    settle(qtbot, view)
    assert [b.isVisible() for b in view.bars._bars] == [True] + [False] * 6
    assert view.bars.shown == [True] + [False] * 6
    view.methods.boxes["linear"].click()
    assert model.shown == ("softmax", "linear")
    settle(qtbot, view)
    assert [b.isVisible() for b in view.bars._bars] == [True, True] + [False] * 5
    # two shown series share each category: each bar is 0.4 wide, side by side
    assert view.bars._bars[0].opts["width"] == pytest.approx(0.4)
    np.testing.assert_allclose(view.bars._bars[1].opts["x"] - view.bars._bars[0].opts["x"], 0.4)
    arrays = view.arrays()
    assert arrays["weights"].columns == ("softmax", "linear")
    r = model.result(lab.scores)
    np.testing.assert_array_equal(arrays["weights"].data, np.column_stack([r.weights_of("softmax"),
                                                                           r.weights_of("linear")]))
    assert "sparsemax" not in view.bars.describe(0.0, 0.5)
    messages = []
    view.status.connect(messages.append)
    view.methods.boxes["softmax"].click()
    view.methods.boxes["linear"].click()  # the last one shown: refused, the box stays ticked
    assert model.shown == ("linear",)
    assert view.methods.boxes["linear"].isChecked()
    assert "At least one method" in messages[-1]
    view.methods.all.click()
    assert model.shown == METHODS


def test_clicking_a_legend_swatch_switches_the_method_through_the_model(qtbot, make_view, lab):
    from PySide6.QtCore import Qt

    view = make_view("normalizers")
    settle(qtbot, view)
    legend = view.bars.getPlotItem().legend
    sample, _label = legend.items[METHODS.index("hardmax")]
    pos = view.bars.mapFromScene(sample.mapToScene(sample.boundingRect().center()))
    qtbot.mouseClick(view.bars.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert "hardmax" not in lab.models["normalizers"].shown
    assert not view.methods.boxes["hardmax"].isChecked()
    settle(qtbot, view)
    assert not view.bars._bars[METHODS.index("hardmax")].isVisible()
    qtbot.mouseClick(view.bars.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert lab.models["normalizers"].shown == METHODS


def test_the_shown_methods_travel_in_the_session(lab):
    from gui.model.normalizers import NormalizersModel

    m = lab.models["normalizers"]
    m.set_shown(["sparsemax", "softmax"])
    assert m.shown == ("softmax", "sparsemax")
    state = m.extra_state()
    assert state == {"shown": ["softmax", "sparsemax"]}
    fresh = NormalizersModel()
    fresh.apply_extra_state(fresh.check_extra_state(state))
    assert fresh.shown == ("softmax", "sparsemax")
    with pytest.raises(ValueError, match="shown"):
        fresh.check_extra_state({"shown": ["softmin"]})
    with pytest.raises(ValueError, match="shown"):
        fresh.check_extra_state({"shown": []})
    with pytest.raises(ValueError, match="at least one"):
        fresh.set_shown([])
    fresh.reset()
    assert fresh.shown == METHODS
    assert fresh.extra_state() == {}


def test_bar_legends_sit_above_the_data(qtbot, make_view):
    view = make_view("normalizers")
    settle(qtbot, view)
    legend = view.bars.getPlotItem().legend
    vb = view.bars.getPlotItem().getViewBox()
    assert legend.sceneBoundingRect().bottom() <= vb.sceneBoundingRect().top() + 1
    assert not legend.sceneBoundingRect().intersects(vb.sceneBoundingRect().adjusted(0, 2, 0, 0))
    # as many columns as fit: the legend stays inside its widget
    assert legend.sceneBoundingRect().right() <= view.bars.width()


# -- Gradients, Attention, Sampling, Temperature -------------------------------------------------

N24 = [float((i * 7) % 11) / 3 for i in range(24)]
LABELS24 = [f"tok{i + 1}" for i in range(24)]


def drawn_tick_texts(axis):
    """What pyqtgraph draws on ``axis`` now: (rect, text) of every tick label."""
    from PySide6.QtGui import QImage, QPainter

    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(rect, text) for rect, _flags, text in specs[2]]


def assert_no_two_overlap(rects):
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            assert not rects[a].intersects(rects[b]), (rects[a], rects[b])


def test_token_ticks_thin_out_at_n_24_and_never_overlap(qtbot, make_view, lab):
    view = make_view("gradients")
    lab.scores.set_values(N24, LABELS24)
    settle(qtbot, view)
    for plot, name in ((view.heatmap, "bottom"), (view.heatmap, "left"), (view.column_bars, "bottom"),
                       (view.ce_bars, "bottom")):
        axis = plot.getPlotItem().getAxis(name)
        drawn = drawn_tick_texts(axis)
        assert len(axis.all_ticks[0]) == 24
        assert 2 <= len(drawn) < 24, (plot, name)
        assert_no_two_overlap([r for r, _t in drawn])
        # the labels kept are every k-th token, in order
        texts = [t for _r, t in drawn]
        idx = [LABELS24.index(t) for t in texts]
        assert len(set(np.diff(idx))) == 1
        # unthinned, the labels would not have fitted
        if name == "bottom":
            widths = sum(r.width() for r, _t in drawn) / len(drawn) * 24
            assert widths > axis.width()


def test_thinned_ticks_come_back_when_the_plot_grows(qtbot, make_view, lab):
    view = make_view("gradients")
    lab.scores.set_values(N24, LABELS24)
    settle(qtbot, view)
    axis = view.column_bars.getPlotItem().getAxis("bottom")
    narrow = len(drawn_tick_texts(axis))
    view.column_bars.setMinimumWidth(1100)  # the whole plot column grows
    view.resize(2600, 900)
    qtbot.waitUntil(lambda: view.column_bars.width() >= 1100)
    qtbot.wait(20)
    wide = drawn_tick_texts(axis)
    assert len(wide) > narrow
    assert_no_two_overlap([r for r, _t in wide])


def test_gradient_column_labels_are_its_values(qtbot, make_view, lab):
    view = make_view("gradients")
    settle(qtbot, view)
    p = compute.softmax(lab.scores.values)
    column = compute.softmax_jacobian(p)[:, 0]
    decimals = 2 - int(np.floor(np.log10(np.abs(column).max())))
    assert view.column_bars.value_texts(0) == [f"{v:.{decimals}f}" for v in column]
    assert shown_labels(view.column_bars, 0) == {i: f"{v:.3f}" for i, v in enumerate(column)}
    # above a positive bar, below a negative one
    for _s, i, text in view.column_bars.values.items():
        label = text.sceneBoundingRect()
        zero = view.column_bars.getPlotItem().getViewBox().mapViewToScene(QPointF(i, 0.0)).y()
        assert (label.bottom() <= zero) if column[i] > 0 else (label.top() >= zero)


def test_heatmap_cell_numbers_only_while_they_fit(qtbot, make_view, lab):
    view = make_view("gradients")
    settle(qtbot, view)
    heat = view.heatmap
    assert heat.cell_numbers_shown  # 4 x 4 cells of about 50 px
    jac = compute.softmax_jacobian(compute.softmax(lab.scores.values))
    shown = [t.toPlainText() for t in heat._texts]
    assert shown in ([f"{v:.3f}" for v in jac.ravel()], [f"{v:.2f}" for v in jac.ravel()])
    lab.scores.set_values(N24[:14], LABELS24[:14])  # 14 x 14 cells: too small for any number
    settle(qtbot, view)
    assert len(heat._texts) == 14 * 14
    assert not heat.cell_numbers_shown
    assert not any(t.isVisible() for t in heat._texts)
    assert heat.colorbar.isVisible()  # the reading is on the colour bar (and in the hover)


def test_attention_at_n_24_thins_ticks_hides_cell_numbers_and_labels_the_row(qtbot, make_view, lab):
    view = make_view("attention")
    model = lab.models["attention"]
    model.n = 24
    settle(qtbot, view)
    r = model.result()
    assert not view.weights.cell_numbers_shown
    for plot in (view.weights, view.scores_map, view.bars):
        for name in ("left", "bottom") if plot is not view.bars else ("bottom",):
            drawn = drawn_tick_texts(plot.getPlotItem().getAxis(name))
            assert 2 <= len(drawn) < 24
            assert_no_two_overlap([rect for rect, _t in drawn])
    assert view.bars.value_texts(0) == ["0%" if w == 0 else f"{100 * w:.1f}%" for w in r.row]
    visible = [t.sceneBoundingRect() for _s, _i, t in view.bars.values.items() if t.isVisible()]
    assert 0 < len(visible) < 24  # thinned, not all 24 crammed in
    assert_no_two_overlap(visible)
    model.n = 4
    settle(qtbot, view)
    assert view.weights.cell_numbers_shown
    assert len(shown_labels(view.bars, 0)) == 4  # few bars: every one labelled


def test_sampling_top_token_labels_are_the_probabilities(qtbot, make_view, lab):
    lab.models["sampling"].vocab = 3000
    view = make_view("sampling")
    view.flush()
    r = view.model.result(view.scores)
    before, after = r.probs[r.shown], r.filtered[r.shown]
    fmt = lambda w: "0%" if w == 0 else f"{100 * w:.1f}%"  # noqa: E731
    assert view.bars.value_texts(0) == [fmt(w) for w in before]
    assert view.bars.value_texts(1) == [fmt(w) for w in after]
    visible = [(s, i, t) for s, i, t in view.bars.values.items() if t.isVisible()]
    assert visible
    assert (1, int(np.argmax(after)), fmt(after.max())) in [(s, i, t.toPlainText()) for s, i, t in visible]
    assert_no_two_overlap([t.sceneBoundingRect() for _s, _i, t in visible])


def test_temperature_legend_has_one_distinct_entry_per_series(qtbot, make_view):
    view = make_view("temperature")
    settle(qtbot, view)
    names = [label.text for _sample, label in view.bars.getPlotItem().legend.items]
    assert names == ["your T = 1", "reference, T = 1"]
    view.temperature.spin.setValue(0.5)
    settle(qtbot, view)
    assert [label.text for _s, label in view.bars.getPlotItem().legend.items] == ["your T = 0.5", "reference, T = 1"]


def test_a_floating_legend_leaves_the_data_or_the_plot_area(qtbot, make_view):
    view = make_view("attention")
    settle(qtbot, view)
    view.grab()  # a paint: the legends find their places just before it
    qtbot.wait(20)  # the plot's layout takes a legend moved above it
    view.grab()
    legend = view.histogram.getPlotItem().legend
    keeper = legend.corner_keeper
    vb = view.histogram.getPlotItem().getViewBox()
    if keeper.outside:  # moved above the plot: off the data altogether
        assert legend.sceneBoundingRect().bottom() <= vb.sceneBoundingRect().top() + 1
    else:
        assert keeper.covered() == 0
