"""BarChart.set_series_name inside batched(): the legend is fitted once, at the end, to the same columns
as renames made one by one."""

from __future__ import annotations

import numpy as np

from gui.widgets import plot as plot_mod
from gui.widgets.bar_chart import BarChart

SERIES = [("a", 0), ("b", 1), ("c", 2)]
LONG = ["a much longer series name, 1", "another long series name, 2", "and a third long one, 3"]


def _chart(qtbot):
    chart = BarChart("t", SERIES, legend_columns=3)
    qtbot.addWidget(chart)
    chart.resize(520, 300)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_data(["x", "y"], [np.array([0.2, 0.8])] * 3)
    return chart


def test_renames_inside_batched_fit_the_legend_once_and_alike(qtbot, monkeypatch):
    one_by_one, batched = _chart(qtbot), _chart(qtbot)
    for i, name in enumerate(LONG):
        one_by_one.set_series_name(i, name)
    fits = []
    real = plot_mod.legends.fit_columns
    monkeypatch.setattr(plot_mod.legends, "fit_columns", lambda *a: (fits.append(a), real(*a)))
    with batched.batched():
        for i, name in enumerate(LONG):
            batched.set_series_name(i, name)
        assert fits == []  # nothing fitted while inside
    assert len(fits) == 1
    a, b = one_by_one.getPlotItem().legend, batched.getPlotItem().legend
    assert a.columnCount < 3  # the long names do not fit three across: the test can tell a missing fit
    assert (b.columnCount, b.rowCount) == (a.columnCount, a.rowCount)
    assert [label.text for _s, label in b.items] == LONG
    with batched.batched():  # nothing renamed: nothing fitted
        batched.set_series_name(0, LONG[0])
    assert len(fits) == 1
