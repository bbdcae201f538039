"""The bar chart's value labels after the speed-ups of gui/widgets/bar_labels.py.

* :func:`bar_labels.place` decides in NumPy what does not depend on the order
  (each candidate rect, whether it fits the plot and clears the other bars):
  it must choose exactly what the plain greedy loop below chooses.
* A label's text item gets its text only while it is shown: after any
  sequence of redraws the labels on screen (text, place, angle, colour) are
  those of a chart built fresh with the last data, and a label hidden, then
  shown again (by new data or a resize) carries the current text.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from gui.widgets import bar_labels
from gui.widgets.bar_chart import BarChart
from gui.widgets.bar_labels import HIDDEN, INSIDE, LABEL_GAP, OUTSIDE, PAD, SPILL, Placement


def reference_place(x, end, base, width, height, *, slot, bar_width, plot_height, priority, bars, own_bar,
                    force_inside, tier, thickness) -> Placement:
    """The placement rule as a plain loop over the labels, one candidate rect and one overlap at a time."""
    k = len(x)
    where = np.full(k, HIDDEN, dtype=np.int8)
    rects = np.zeros((k, 4))
    values = [j for j in range(k) if not force_inside[j]]
    turn_values = max((width[j] for j in values), default=0.0) + 2 * PAD > slot
    turned = np.array([width[j] + 2 * PAD > bar_width if force_inside[j] else turn_values for j in range(k)])

    def overlaps(a, b):
        return b[0] < a[2] and a[0] < b[2] and b[1] < a[3] and a[1] < b[3]

    placed = []
    order = sorted(range(k), key=lambda j: (-tier[j], -priority[j], j))
    for i in order:
        ink = min(thickness[i], height[i])
        across, along = (ink, width[i]) if turned[i] else (width[i], height[i])
        half, length = across / 2 + PAD, along + 2 * PAD
        sign = 1.0 if end[i] > base[i] else -1.0
        for option in ((INSIDE,) if force_inside[i] else (OUTSIDE, INSIDE)):
            if option == OUTSIDE:
                y0, y1 = sorted((end[i], end[i] + sign * length))
            else:
                if abs(end[i] - base[i]) < length or 2 * half > bar_width:
                    continue
                y0, y1 = sorted((end[i], end[i] - sign * length))
            if y0 < 0 or y1 > plot_height:
                continue
            rect = (x[i] - half, y0, x[i] + half, y1)
            m = min(SPILL, half)
            narrowed = (rect[0] + m, y0, rect[2] - m, y1)
            if any(overlaps(narrowed, bars[b]) for b in range(len(bars)) if b != own_bar[i]):
                continue
            apart = max(0.0, LABEL_GAP - 2 * PAD)
            widened = (rect[0] - apart, y0, rect[2] + apart, y1)
            if any(overlaps(widened, p) for p in placed):
                continue
            where[i] = option
            rects[i] = rect
            placed.append(rect)
            break
    return Placement(where, turned, rects)


@st.composite
def label_problems(draw):
    """A grouped chart's pixel geometry with some placeholders, ties in priority and bars without labels."""
    series = draw(st.integers(1, 3))
    n = draw(st.integers(1, 14))
    pitch = draw(st.floats(8.0, 70.0))
    plot_height = draw(st.floats(60.0, 300.0))
    values = np.array(draw(st.lists(st.sampled_from([-1.0, -0.4, -0.05, 0.0, 0.02, 0.3, 0.7, 1.0, 1.3]),
                                    min_size=series * n, max_size=series * n)))
    bar = 0.8 * pitch / series
    x = np.array([(i + 0.5) * pitch + (s - (series - 1) / 2) * bar for s in range(series) for i in range(n)])
    zero = plot_height * 0.7
    end = zero - values * plot_height * 0.6
    rects = np.column_stack([x - bar / 2, np.minimum(end, zero), x + bar / 2, np.maximum(end, zero)])
    keep = np.abs(end - zero) >= 1  # the chart leaves out bars shorter than a pixel
    row = np.full(x.size, -1)
    row[keep] = np.arange(int(keep.sum()))
    labelled = np.array(draw(st.lists(st.booleans(), min_size=x.size, max_size=x.size)))
    k = np.flatnonzero(labelled)
    inside = np.array(draw(st.lists(st.booleans(), min_size=k.size, max_size=k.size)), dtype=bool)
    width = np.array(draw(st.lists(st.sampled_from([6.0, 13.5, 20.0, 27.25, 41.0]),
                                   min_size=k.size, max_size=k.size)))
    thickness = np.array(draw(st.lists(st.sampled_from([7.0, 9.5, 14.0, 18.0]), min_size=k.size,
                                       max_size=k.size)))
    tier = np.where(inside, 2, np.array(draw(st.lists(st.integers(0, 1), min_size=k.size, max_size=k.size))))
    priority = np.where(inside, np.inf, np.abs(values[k]))
    return dict(x=x[k], end=end[k], base=np.full(k.size, zero), width=width, height=np.full(k.size, 14.0),
                slot=pitch if series == 1 else bar, bar_width=bar, plot_height=plot_height, priority=priority,
                bars=rects[keep], own_bar=row[k], force_inside=inside, tier=tier.astype(float),
                thickness=thickness)


@settings(max_examples=120, deadline=None)
@given(label_problems())
def test_place_chooses_what_the_plain_loop_chooses(problem):
    got = bar_labels.place(**problem)
    want = reference_place(**problem)
    np.testing.assert_array_equal(got.where, want.where)
    np.testing.assert_array_equal(got.upright, want.upright)
    np.testing.assert_array_equal(got.rects, want.rects)


def test_place_with_more_labels_than_one_block_of_bars_holds():
    """Many labels and bars (the bar overlaps are tested in blocks): still the plain loop's choice."""
    rng = np.random.default_rng(3)
    n = 300
    pitch = 3.0
    x = (np.arange(n) + 0.5) * pitch
    zero = 200.0
    end = zero - rng.uniform(-0.5, 1.0, n) * 150
    bars = np.column_stack([x - 1.2, np.minimum(end, zero), x + 1.2, np.maximum(end, zero)])
    problem = dict(x=x, end=end, base=np.full(n, zero), width=rng.choice([12.0, 20.0], n),
                   height=np.full(n, 14.0), slot=pitch, bar_width=2.4, plot_height=260.0,
                   priority=np.abs(end - zero), bars=np.vstack([bars] * 15), own_bar=np.arange(n),
                   force_inside=np.zeros(n, dtype=bool), tier=np.zeros(n), thickness=np.full(n, 9.0))
    got, want = bar_labels.place(**problem), reference_place(**problem)
    np.testing.assert_array_equal(got.where, want.where)
    np.testing.assert_array_equal(got.rects, want.rects)


def test_bar_ends_are_those_of_end_one_at_a_time():
    bars = bar_labels.Bars([np.zeros(0)], [True], {0: 0.0}, 0.8, (-0.25, 1.5))
    v = np.array([0.3, -0.7, np.nan, np.inf, -np.inf, 0.0, 2.5])
    np.testing.assert_array_equal(bars.ends(v), [bars.end(x) for x in v])


# -- on a chart ------------------------------------------------------------------------------------

SERIES = [("a", "accent"), ("b", "secondary")]


def make_chart(qtbot=None, width=520, height=300, **kwargs):
    chart = BarChart("bars", SERIES, **kwargs)
    # pyqtgraph's axis widens for long tick labels and never narrows again: a fixed width, so that a
    # chart with a history has the same pixels as a fresh one
    chart.getPlotItem().getAxis("left").setWidth(48)
    holder = QWidget()  # a closed pyqtgraph plot drops its PlotItem: the holder is what gets closed
    if qtbot is not None:
        qtbot.addWidget(holder)
    QVBoxLayout(holder).addWidget(chart)
    holder.resize(width, height)
    holder.show()
    QApplication.processEvents()
    return chart, holder


def on_screen(chart):
    """(series, category, text, angle, anchor, position, colour) of each shown label, read straight off
    its text item (not through ``values.items()``, which first writes every label's text)."""
    out = []
    for (s, i), t in zip(chart.values._keys, chart.values._texts):
        if t.isVisible():
            pos = t.pos()
            out.append((s, i, t.toPlainText(), t.angle, (t.anchor.x(), t.anchor.y()), (pos.x(), pos.y()),
                        t.color.name()))
    return out


def apply(chart, step):
    labels, heights, shown, y_range = step
    chart.set_data(labels, heights)
    chart.set_shown(shown)
    chart.set_y_range(*y_range)
    settle()


def settle():
    """Let deferred layout (an axis growing for its new tick labels narrows the plot) run its course."""
    for _ in range(4):
        QApplication.processEvents()


VALUES = st.one_of(st.floats(-1.5, 1.5, allow_nan=False), st.sampled_from([0.0, np.nan, np.inf, -np.inf]))


@st.composite
def chart_steps(draw):
    n = draw(st.integers(3, 32))
    labels = [f"c{i}" for i in range(n)]
    heights = [np.array(draw(st.lists(VALUES, min_size=n, max_size=n))) for _ in SERIES]
    shown = draw(st.sampled_from([[True, True], [True, False], [False, True]]))
    lo = draw(st.sampled_from([-0.01, -1.6]))
    return labels, heights, shown, (lo, draw(st.sampled_from([1.12, 1.6])))


@pytest.fixture(scope="module")
def lived(qapp):
    """Per ``percent``, one chart that lives through every example: a long history of redraws."""
    charts = {p: make_chart(percent=p) for p in (False, True)}
    yield {p: chart for p, (chart, _holder) in charts.items()}
    for _chart, holder in charts.values():
        holder.close()
        holder.deleteLater()


@settings(max_examples=8, deadline=None)
@given(steps=st.lists(chart_steps(), min_size=1, max_size=4), percent=st.booleans())
def test_after_many_redraws_the_labels_are_those_of_a_fresh_chart(lived, steps, percent):
    chart = lived[percent]
    fresh, fresh_holder = make_chart(percent=percent)
    try:
        for step in steps:
            apply(chart, step)
        apply(fresh, steps[-1])
        assert_same_labels(chart, fresh)
    finally:
        fresh_holder.close()
        fresh_holder.deleteLater()


def assert_same_labels(chart, fresh):
    assert chart.getPlotItem().getViewBox().viewRange() == fresh.getPlotItem().getViewBox().viewRange()
    assert on_screen(chart) == on_screen(fresh)
    assert chart.value_texts() == fresh.value_texts()  # every label's text, hidden ones too
    shown_text = {(s, i): text for s, i, text, *_rest in on_screen(chart)}
    for s, i, t in chart.values.items():
        if (s, i) in shown_text:
            assert shown_text[(s, i)] == t.toPlainText()


def test_a_label_hidden_then_shown_again_carries_the_current_text(qtbot):
    n = 40
    chart, holder = make_chart(qtbot, width=320, value_labels=True, percent=False)
    rng = np.random.default_rng(11)
    labels = [f"c{i}" for i in range(n)]
    first = rng.uniform(0.1, 0.5, n)
    chart.set_data(labels, [first, first * 0.5])
    chart.set_shown([True, False])
    QApplication.processEvents()
    hidden = [i for s, i, text in on_screen_keys(chart, visible=False) if s == 0]
    assert len(hidden) >= n // 4  # a crowded chart: many labels are left out
    k = hidden[0]
    second = first.copy()
    second[k] = 0.123  # its text changes while it is hidden
    chart.set_data(labels, [second, second * 0.5])
    QApplication.processEvents()
    assert k not in [i for s, i, *_ in on_screen(chart) if s == 0]
    third = second.copy()
    third[k] = 0.777  # now the tallest bar: its label is placed first, so it shows
    chart.set_data(labels, [third, third * 0.5])
    QApplication.processEvents()
    shown = {i: text for s, i, text, *_ in on_screen(chart) if s == 0}
    assert shown[k] == bar_labels.value_text(0.777, False, bar_labels.decimals_for(third))
    # hidden labels whose text changed, shown again by a resize (no new data): the current texts
    fourth = third * 0.9
    chart.set_data(labels, [fourth, fourth * 0.5])
    QApplication.processEvents()
    before = {i for s, i, *_ in on_screen(chart) if s == 0}
    holder.resize(1400, 300)
    QApplication.processEvents()
    after = {i: text for s, i, text, *_ in on_screen(chart) if s == 0}
    assert set(after) - before, "the wider plot shows labels that were hidden"
    decimals = bar_labels.decimals_for(fourth)
    for i, text in after.items():
        assert text == bar_labels.value_text(fourth[i], False, decimals)


def on_screen_keys(chart, *, visible: bool):
    return [(s, i, t) for (s, i), t in zip(chart.values._keys, chart.values._texts) if t.isVisible() == visible]


def test_new_texts_reach_the_labels_on_screen_even_without_a_layout(qtbot):
    """set_texts leaves the writing to the layout after it; write_shown (where no layout can follow) writes
    every label on screen, and only those."""
    chart, _holder = make_chart(qtbot, percent=False)
    labels = [f"c{i}" for i in range(30)]
    heights = np.linspace(0.1, 1.0, 30)
    chart.set_data(labels, [heights, heights * 0.5])
    QApplication.processEvents()
    values = chart.values
    keys = list(values._keys)
    shown_before = [t.isVisible() for t in values._texts[:len(keys)]]
    assert any(shown_before) and not all(shown_before)
    values.set_texts(keys, [f"new{k}" for k in range(len(keys))])
    values.write_shown()
    for k, (text, shown) in enumerate(zip(values._texts, shown_before)):
        assert text.isVisible() == shown
        if shown:
            assert text.toPlainText() == f"new{k}"
    assert [t.toPlainText() for _s, _i, t in values.items()] == [f"new{k}" for k in range(len(keys))]
