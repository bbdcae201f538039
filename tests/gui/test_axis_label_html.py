"""An axis gives its label new HTML only when the HTML changes: through any sequence of labels, units,
ranges (the SI prefix with them) and label visibility, it looks and measures exactly as pyqtgraph's
own update, which gives the label its HTML on every range change."""

from __future__ import annotations

import types

import hypothesis.strategies as st
import pyqtgraph as pg
import pytest
from hypothesis import HealthCheck, given, settings
from PySide6.QtWidgets import QApplication

from gui.widgets.ticks import FittedAxis, label_html_once

RANGES = st.tuples(st.sampled_from([1e-9, 1e-6, 1e-3, 0.5, 1.0, 40.0, 3e3, 2e6]),
                   st.floats(0.1, 3.0), st.booleans())
OPS = st.one_of(
    st.tuples(st.just("label"), st.sampled_from(["bottom", "left"]),
              st.tuples(st.sampled_from(["", "weight", "p(x)", "温度 T"]), st.sampled_from([None, "s", "B"]))),
    st.tuples(st.just("range"), st.sampled_from(["x", "y"]), RANGES),
    st.tuples(st.just("show"), st.sampled_from(["bottom", "left"]), st.booleans()),
    st.tuples(st.just("si"), st.sampled_from(["bottom", "left"]), st.booleans()),
)


def _plot(pyqtgraph_update: bool, kind: str = "fitted"):
    """A plot with the app's axes ("fitted") or pyqtgraph's given :func:`label_html_once` (as colour bars
    are), or with pyqtgraph's own label update."""
    make = FittedAxis if kind == "fitted" else pg.AxisItem
    axes = {"left": make("left"), "bottom": make("bottom")}
    for axis in axes.values():
        if pyqtgraph_update:  # each range change gives the label its HTML again, as pyqtgraph does
            axis._updateLabel = types.MethodType(pg.AxisItem._updateLabel, axis)
        elif kind == "patched":
            label_html_once(axis)
    w = pg.PlotWidget(axisItems=axes)
    w.setBackground("w")
    w.resize(320, 220)
    w.show()
    return w


def _apply(w, op):
    name, which, arg = op
    item = w.getPlotItem()
    if name == "label":
        text, units = arg
        item.setLabel(which, text, units=units)
    elif name == "range":
        size, scale, negative = arg
        lo, hi = (-size * scale, size) if negative else (0.0, size * scale)
        (item.setXRange if which == "x" else item.setYRange)(lo, hi, padding=0)
    elif name == "show":
        item.showLabel(which, arg)
    elif name == "si":
        item.getAxis(which).enableAutoSIPrefix(arg)


def _state(w):
    out = []
    for which in ("left", "bottom"):
        axis = w.getPlotItem().getAxis(which)
        out.append((axis.label.toHtml(), axis.label.isVisible(), axis.labelUnitPrefix, axis.autoSIPrefixScale,
                    axis.width(), axis.height(), axis.label.pos().x(), axis.label.pos().y()))
    return out


def _settled(w):
    """The state once painting and the layout it asks for leave it alone (the axes measure their
    tick labels when they paint, and a new size is laid out later)."""
    state = None
    for _ in range(8):
        w.grab()
        QApplication.processEvents()
        now = _state(w)
        if now == state:
            break
        state = now
    return state


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, min_size=1, max_size=12), kind=st.sampled_from(["fitted", "patched"]))
def test_axis_label_html_once_looks_like_pyqtgraph(qtbot, ops, kind):
    ours, theirs = _plot(False, kind), _plot(True, kind)
    try:
        for w in (ours, theirs):
            qtbot.waitExposed(w)
        for op in ops:
            _apply(ours, op)
            _apply(theirs, op)
            assert _settled(ours) == _settled(theirs), op
        assert ours.grab().toImage() == theirs.grab().toImage()
    finally:
        for w in (ours, theirs):
            w.close()
            w.deleteLater()


@pytest.mark.parametrize("kind", ["fitted", "patched"])
def test_a_range_change_keeps_the_label_document(qtbot, kind):
    """The point of it: moving the range (same prefix) leaves the label's document untouched."""
    w = _plot(False, kind)
    qtbot.addWidget(w)
    item = w.getPlotItem()
    item.setLabel("left", "weight", units="s")
    item.setYRange(0, 2.0, padding=0)
    doc = item.getAxis("left").label.document()
    revision = doc.revision()
    item.setYRange(0, 3.0, padding=0)
    assert doc.revision() == revision
    item.setYRange(0, 3e-3, padding=0)  # a new prefix (ms): new HTML
    assert doc.revision() != revision
    assert "ms" in item.getAxis("left").label.toPlainText()
