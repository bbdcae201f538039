"""Heatmap cell texts: coloured in one colour-map call and set only on a change, the colours and texts
are those one map call per cell gives, and a changed matrix changes them."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui import theme as themes
from gui.widgets.heatmap import Heatmap


def reference_colours(hm: Heatmap) -> list[str]:
    """The old rule, one ColorMap.map call per cell."""
    lut = hm.colorbar.colorMap()
    lo, hi = hm.colorbar.levels()
    span = (hi - lo) or 1.0
    m = hm.matrix.shape[1]
    return [themes.text_on(lut.map((np.nan_to_num(hm.matrix[divmod(k, m)]) - lo) / span, mode="qcolor"))
            for k in range(len(hm._texts))]


def held_heatmap(qtbot, size=(500, 400)) -> tuple[QWidget, Heatmap]:
    """A closed pyqtgraph plot drops its PlotItem, so the test closes a holder, not the plot."""
    holder = QWidget()
    qtbot.addWidget(holder)
    hm = Heatmap("t")
    QVBoxLayout(holder).addWidget(hm)
    holder.resize(*size)
    return holder, hm


def shown_colours(hm: Heatmap) -> list[str]:
    return [QColor(t.color).name() for t in hm._texts]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(-5, 5, allow_nan=False, width=64) | st.just(float("nan")), min_size=9, max_size=9),
       st.lists(st.floats(-5, 5, allow_nan=False, width=64), min_size=9, max_size=9))
def test_cell_colours_follow_each_matrix(qtbot, first, second):
    _holder, hm = held_heatmap(qtbot)
    labels = ("a", "b", "c")
    for values in (first, second, first):
        hm.set_matrix(np.array(values).reshape(3, 3), labels, labels)
        assert shown_colours(hm) == reference_colours(hm)


def test_a_changed_matrix_recolours_and_rewrites_its_cells(qtbot):
    holder, hm = held_heatmap(qtbot)
    holder.show()
    qtbot.waitExposed(holder)
    labels = ("a", "b")
    hm.set_matrix(np.array([[1.0, 0.0], [0.0, 0.05]]), labels, labels)
    before, before_texts = shown_colours(hm), [t.toPlainText() for t in hm._texts]
    assert before[0] != before[1]  # the top of the map is dark, its middle light
    hm.set_matrix(np.array([[0.0, 1.0], [0.0, 0.05]]), labels, labels)
    assert shown_colours(hm) == reference_colours(hm)
    assert shown_colours(hm)[:2] == before[1::-1]
    assert hm.cell_numbers_shown
    texts = [t.toPlainText() for t in hm._texts]
    assert texts[:2] == before_texts[1::-1] and texts[2:] == before_texts[2:]
    assert all(t.isVisible() for t in hm._texts)
