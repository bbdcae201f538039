"""ValueText (shared transforms, re-anchoring only on a change) lands, turns and paints exactly as
pyqtgraph's TextItem through any sequence of text, anchor, angle, visibility, range and size changes."""

from __future__ import annotations

import hypothesis.strategies as st
import pyqtgraph as pg
from hypothesis import HealthCheck, given, settings
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from gui.widgets.bar_labels import value_font
from gui.widgets.value_text import Turns, ValueText

LABELS = 3
TEXTS = st.sampled_from(["", "0.5", "12.3%", "NaN", "−∞", "0.000123", "99.9%"])
ANCHORS = st.sampled_from([(0.0, 0.0), (0.5, 1.0), (0.5, 0.0), (0.0, 0.5), (1.0, 0.5), (0.5, 0.5)])
OPS = st.one_of(
    st.tuples(st.just("text"), st.integers(0, LABELS - 1), TEXTS),
    st.tuples(st.just("anchor"), st.integers(0, LABELS - 1), ANCHORS),
    st.tuples(st.just("angle"), st.integers(0, LABELS - 1), st.sampled_from([0, 90])),
    st.tuples(st.just("visible"), st.integers(0, LABELS - 1), st.booleans()),
    st.tuples(st.just("pos"), st.integers(0, LABELS - 1), st.tuples(st.floats(-1, 4), st.floats(-0.5, 1.5))),
    st.tuples(st.just("font"), st.integers(0, LABELS - 1), st.sampled_from([7, 9, 12])),
    st.tuples(st.just("yrange"), st.just(0), st.tuples(st.floats(-2, 0.5), st.floats(0.6, 30))),
    st.tuples(st.just("xrange"), st.just(0), st.tuples(st.floats(-3, 0.5), st.floats(1, 12))),
    st.tuples(st.just("resize"), st.just(0), st.tuples(st.integers(120, 420), st.integers(90, 300))),
    st.tuples(st.just("paint"), st.just(0), st.just(None)),
)


def _plot(fast: bool):
    w = pg.PlotWidget()
    w.setBackground("w")
    w.resize(300, 200)
    turns = Turns()
    texts = []
    for k in range(LABELS):
        t = ValueText(turns) if fast else pg.TextItem()
        t.textItem.document().setDocumentMargin(0)
        t.setFont(value_font())
        t.setColor("k")
        t.setText(f"{k}.5")
        t.setPos(k, 0.5)
        w.getPlotItem().addItem(t, ignoreBounds=True)
        texts.append(t)
    w.setXRange(-1, 4, padding=0)
    w.setYRange(0, 1, padding=0)
    w.show()
    return w, texts


def _apply(w, texts, op):
    name, k, arg = op
    t = texts[k]
    if name == "text":
        t.setText(arg)
    elif name == "anchor":
        t.setAnchor(arg)
    elif name == "angle":
        if t.angle != arg:
            t.setAngle(arg)
    elif name == "visible":
        t.setVisible(arg)
    elif name == "pos":
        t.setPos(*arg)
    elif name == "font":
        font = QFont(value_font())
        font.setPointSize(arg)
        t.setFont(font)
    elif name == "yrange":
        w.setYRange(*arg, padding=0)
    elif name == "xrange":
        w.setXRange(*arg, padding=0)
    elif name == "resize":
        w.resize(*arg)
    elif name == "paint":
        w.grab()  # a paint: the scene's sigPrepareForPaint updates the shown labels' transforms


def _state(texts):
    out = []
    for t in texts:
        m = t.transform()
        row = [t.isVisible(), t.toPlainText(), t.angle, (t.textItem.pos().x(), t.textItem.pos().y()),
               (m.m11(), m.m12(), m.m13(), m.m21(), m.m22(), m.m23(), m.m31(), m.m32(), m.m33())]
        if t.isVisible():
            r = t.sceneBoundingRect()
            row.append((r.x(), r.y(), r.width(), r.height()))
        out.append(row)
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(OPS, min_size=1, max_size=14))
def test_value_text_matches_pyqtgraph_text(qtbot, ops):
    plain, plain_texts = _plot(False)
    fast, fast_texts = _plot(True)
    try:
        for w in (plain, fast):
            qtbot.waitExposed(w)
            w.grab()
        QApplication.processEvents()
        assert _state(fast_texts) == _state(plain_texts)
        for op in ops:
            _apply(plain, plain_texts, op)
            _apply(fast, fast_texts, op)
            QApplication.processEvents()
            assert _state(fast_texts) == _state(plain_texts), op
        a, b = plain.grab().toImage(), fast.grab().toImage()
        assert a == b
        assert _state(fast_texts) == _state(plain_texts)
    finally:
        for w in (plain, fast):
            w.close()
            w.deleteLater()


def _pyqtgraph_turn(pt, angle):
    t = pg.functions.invertQTransform(pt)
    t.setMatrix(t.m11(), t.m12(), t.m13(), t.m21(), t.m22(), t.m23(), 0, 0, t.m33())
    t.rotate(-angle)
    return t


def test_turns_computes_once_per_parent_transform_and_angle():
    """The labels under one parent share one computation per transform and angle (and get pyqtgraph's)."""
    turns = Turns()
    pt = pg.QtGui.QTransform(120.0, 0.0, 0.0, -80.0, 10.0, 300.0)
    a = turns.transform(pt, 90)
    assert turns.transform(pg.QtGui.QTransform(pt), 90) is a  # the same parent transform: the cached one
    assert a == _pyqtgraph_turn(pt, 90)
    assert turns.transform(pt, 0) == _pyqtgraph_turn(pt, 0) != a
    moved = pg.QtGui.QTransform(120.0, 0.0, 0.0, -80.5, 10.0, 300.0)
    assert turns.transform(moved, 90) == _pyqtgraph_turn(moved, 90) != a
