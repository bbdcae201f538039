"""A floating legend's CornerKeeper samples the curves again only when something it reads changed.

It still moves off data that moves under it (after setData with new arrays, or with the same arrays
changed in place), and a repaint with nothing changed does not sample the curves again.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui.qt import pg
from gui.widgets import legends


@pytest.fixture
def plot(qtbot):
    holder = QWidget()
    qtbot.addWidget(holder)
    widget = pg.PlotWidget()
    QVBoxLayout(holder).addWidget(widget)
    holder.resize(400, 300)
    holder.show()
    qtbot.waitExposed(holder)
    item = widget.getPlotItem()
    item.disableAutoRange()
    item.setXRange(0, 10, padding=0)
    item.setYRange(0, 10, padding=0)
    legend = legends.float_legend(item)  # prefers the top right
    curve = item.plot(pen="r", name="a curve")
    return holder, widget, item, legend, curve


def corner_blob(corner: str) -> tuple[np.ndarray, np.ndarray]:
    """A short line inside one corner of the 0..10 square (y up: the top is y near 10)."""
    x = np.linspace(8.5, 9.9, 30) if corner.endswith("right") else np.linspace(0.1, 1.5, 30)
    y = np.full(30, 9.7) if corner.startswith("top") else np.full(30, 0.3)
    return x, y


def counting(monkeypatch) -> list:
    calls = []
    real = legends.curve_pixels

    def counted(item):
        calls.append(item)
        return real(item)

    monkeypatch.setattr(legends, "curve_pixels", counted)
    return calls


def test_the_legend_moves_off_data_that_moves_under_it(plot):
    holder, widget, item, legend, curve = plot
    keeper = legend.corner_keeper
    curve.setData(*corner_blob("top_right"))
    widget.grab()
    assert keeper.corner != "top_right" and keeper.covered() == 0
    first = keeper.corner
    curve.setData(*corner_blob(first))  # new arrays under the legend's new corner
    widget.grab()
    assert keeper.corner != first and keeper.covered() == 0
    second = keeper.corner
    x, y = corner_blob(second)
    curve.setData(x, y)
    widget.grab()
    assert keeper.corner != second and keeper.covered() == 0
    third = keeper.corner
    x[:], y[:] = corner_blob(third)  # the same arrays changed in place, then set again
    curve.setData(x, y)
    widget.grab()
    assert keeper.corner != third and keeper.covered() == 0
    assert not keeper.outside


def test_a_repaint_with_nothing_changed_does_not_sample_again(plot, monkeypatch):
    holder, widget, item, legend, curve = plot
    keeper = legend.corner_keeper
    curve.setData(*corner_blob("top_right"))
    widget.grab()
    calls = counting(monkeypatch)
    keeper.place()
    widget.grab()
    keeper.place()
    assert calls == []  # nothing it reads changed
    curve.setData(*corner_blob("bottom_left"))
    keeper.place()
    assert len(calls) == 1  # new data: sampled once
    keeper.place()
    assert len(calls) == 1
    item.setXRange(0, 20, padding=0)
    keeper.place()
    assert len(calls) == 2  # a new range
    holder.resize(500, 320)
    widget.grab()
    assert len(calls) == 3  # a new size (one paint, one sampling)
    curve.hide()
    keeper.place()
    assert len(calls) == 4  # a hidden curve no longer counts
    curve.show()
    keeper.place()
    assert len(calls) == 5


def test_the_skip_keeps_the_corner_a_fresh_keeper_picks(plot):
    """The corner after a sequence of changes is the one a keeper that never skips would pick."""
    holder, widget, item, legend, curve = plot
    keeper = legend.corner_keeper
    rng = np.random.default_rng(3)
    for _ in range(8):
        corner = str(rng.choice(list(legends.CORNERS)))
        curve.setData(*corner_blob(corner))
        widget.grab()
        keeper.place()
        rect, vb = legend.boundingRect(), item.getViewBox()
        points = legends.curve_pixels(item)
        counts = legends.counts_in_corners(points, (rect.width(), rect.height()), (vb.width(), vb.height()),
                                           keeper.margin)
        assert counts[keeper.corner] == min(counts.values()) == 0


def test_a_bare_scatter_item_is_followed_too(plot):
    """A ScatterPlotItem's getData makes new views on every call: its plot is sampled every time, and right."""
    holder, widget, item, legend, curve = plot
    keeper = legend.corner_keeper
    curve.setData([], [])
    dots = pg.ScatterPlotItem(*corner_blob("top_right"), size=6)
    item.addItem(dots)
    widget.grab()
    first = keeper.corner
    assert first != "top_right" and keeper.covered() == 0
    dots.setData(*corner_blob(first))
    widget.grab()
    assert keeper.corner != first and keeper.covered() == 0
