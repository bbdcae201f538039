"""Heatmap cell numbers: placed once per shape, each distinct value formatted once, coloured only while
shown. Checked against the plain rules: every cell's text is one format of its own value (the first of
the formats whose widest text fits), at (j + 0.5, i + 0.5), in the colour one map call per cell gives."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QFontMetricsF

from gui.format import fmt
from gui.widgets.heatmap import CELL_PAD, Heatmap, _two_decimals
from tests.gui.test_attention_speed_heatmap import held_heatmap, reference_colours


def expected_texts(hm: Heatmap, values: np.ndarray) -> list[str] | None:
    """The old rule: format every cell with each format in turn; the first whose widest text fits wins."""
    vb = hm.getPlotItem().getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    cell_w, cell_h = vb.width() / abs(x1 - x0), vb.height() / abs(y1 - y0)
    metrics = QFontMetricsF(hm._texts[0].textItem.font())
    if metrics.height() + CELL_PAD[1] > cell_h:
        return None
    for f in (fmt, _two_decimals):
        strings = [f(v) for v in values.ravel()]
        if max(metrics.horizontalAdvance(t) for t in strings) + CELL_PAD[0] <= cell_w:
            return strings
    return None


def test_texts_positions_and_colours_follow_the_plain_rules(qtbot):
    holder, hm = held_heatmap(qtbot, size=(120, 100))  # too small for any number
    holder.show()
    qtbot.waitExposed(holder)
    labels = ("a", "b", "c")
    first = np.array([[0.0, -0.0, 0.5], [0.5, 1e-9, 0.25], [0.125, 0.0, 1.0]])
    hm.set_matrix(first, labels, labels)
    assert not hm.cell_numbers_shown
    second = np.array([[1.0, 0.0, -0.0], [0.25, 0.25, 0.5], [0.0, 0.75, 1e-9]])
    hm.set_matrix(second, labels, labels)  # changed while hidden: no colours set
    holder.resize(700, 600)
    qtbot.waitUntil(lambda: hm.cell_numbers_shown, timeout=2000)
    want = expected_texts(hm, second)
    assert want is not None
    assert [t.toPlainText() for t in hm._texts] == want
    assert [QColor(t.color).name() for t in hm._texts] == reference_colours(hm)
    assert [(t.pos().x(), t.pos().y()) for t in hm._texts] == [(j + 0.5, i + 0.5) for i in range(3) for j in range(3)]

    # a new shape: new texts, new places
    wide = np.arange(8.0).reshape(2, 4) / 8
    hm.set_matrix(wide, ("r", "s"), ("w", "x", "y", "z"))
    qtbot.waitUntil(lambda: len(hm._texts) == 8 and hm.cell_numbers_shown, timeout=2000)
    assert [(t.pos().x(), t.pos().y()) for t in hm._texts] == [(j + 0.5, i + 0.5) for i in range(2) for j in range(4)]
    assert [t.toPlainText() for t in hm._texts] == expected_texts(hm, wide)
    assert [QColor(t.color).name() for t in hm._texts] == reference_colours(hm)


def test_minus_zero_and_zero_keep_their_own_texts(qtbot):
    holder, hm = held_heatmap(qtbot, size=(700, 600))
    holder.show()
    qtbot.waitExposed(holder)
    values = np.array([[-0.0, 0.0], [0.0, -0.0]])
    hm.set_matrix(values, ("a", "b"), ("a", "b"))
    qtbot.waitUntil(lambda: hm.cell_numbers_shown, timeout=2000)
    assert [t.toPlainText() for t in hm._texts] == expected_texts(hm, values)
