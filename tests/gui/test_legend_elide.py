"""A one-column legend shortens a label too wide for its plot, and gives it back whole when room returns."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QApplication

from gui.widgets import legends
from gui.widgets.plot import Plot

LONG = "a series name far too long for a narrow plot, on purpose"


def test_a_long_label_is_elided_and_restored(qtbot):
    p = Plot("t")
    qtbot.addWidget(p)
    legend = p.add_legend(outside=True)
    p.getPlotItem().plot(np.arange(3.0), name=LONG)
    p.getPlotItem().plot(np.arange(3.0), name="short")
    p.resize(220, 200)
    p.show()
    qtbot.waitExposed(p)
    legends.fit_columns(legend, 2, p._room())
    QApplication.processEvents()
    (_, long_label), (_, short_label) = legend.items
    assert long_label.text.endswith("…") and long_label.text != LONG
    assert short_label.text == "short"
    assert legend.columnCount == 1
    assert p.getPlotItem().geometry().width() <= p.viewport().width() + 0.5  # the item stays inside its widget
    legends.fit_columns(legend, 2, 5000)  # room again: whole text
    assert long_label.text == LONG
    long_label.setText("renamed")  # a rename while elided is kept
    legends.fit_columns(legend, 2, 5000)
    assert long_label.text == "renamed"
