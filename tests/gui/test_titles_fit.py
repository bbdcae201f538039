"""Plot titles are read whole: a title too wide for its plot is drawn smaller before it is shortened with "…".

At 1280 x 800 with the Lessons panel open, thirteen titles of six views were cut ("Running max m after ea…").
"""

from __future__ import annotations

import time

import pytest
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

from gui import registry
from gui.widgets import legends
from gui.widgets.plot import Plot


def _pump(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        QApplication.processEvents()


@pytest.fixture
def plot(qtbot):
    p = Plot("A title of moderate length, for the test")
    qtbot.addWidget(p)
    p.resize(600, 300)
    p.show()
    qtbot.waitExposed(p)
    return p


def _width(label, text: str, points: float) -> float:
    font = QFont(label.item.font())
    font.setPointSizeF(points)
    return QFontMetricsF(font).horizontalAdvance(text)


@pytest.mark.parametrize("size", legends.TITLE_SIZES)
def test_the_largest_size_that_fits_is_used(plot, size):
    label = plot.getPlotItem().titleLabel
    title = plot._title
    room = _width(label, title, size) + 0.5  # just wide enough at this size
    legends.elide_title(label, title, room)
    larger = [s for s in legends.TITLE_SIZES if s > size and _width(label, title, s) <= room]
    assert label.opts["size"] == f"{(larger[0] if larger else size):g}pt"
    assert label.item.toPlainText() == title
    assert label.text == title


def test_a_title_too_wide_at_every_size_is_shortened_at_the_smallest(plot):
    label = plot.getPlotItem().titleLabel
    title = plot._title
    room = _width(label, title, min(legends.TITLE_SIZES)) * 0.6
    legends.elide_title(label, title, room)
    shown = label.item.toPlainText()
    assert shown.endswith("…") and shown != title
    assert label.opts["size"] == f"{min(legends.TITLE_SIZES):g}pt"
    assert _width(label, shown, min(legends.TITLE_SIZES)) <= room
    assert label.text == title  # exports read the whole title
    legends.elide_title(label, title, 10_000)  # room again: whole, at the full size
    assert label.item.toPlainText() == title and label.opts["size"] == f"{legends.TITLE_POINTS:g}pt"


@pytest.mark.parametrize("name", [spec.name for spec in registry.VIEWS])
def test_no_title_is_cut_on_a_laptop_window_with_lessons_open(qtbot, tmp_path, name):
    """Each view as a user who opens it first sees it (a fresh window: the columns' widths depend on
    which views were shown before), on every tab."""
    from gui.app import MainWindow

    w = MainWindow(settings_dir=tmp_path / "config")
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    assert w.lessons.isVisible()
    view = w.show_view(name)
    _pump(0.6)

    def cut_titles(tab) -> list[tuple]:
        return [(tab, p._title, p.getPlotItem().titleLabel.item.toPlainText(), p.width())
                for p in view.findChildren(Plot)
                if p.isVisible() and p._title and "<" not in p._title
                and p.getPlotItem().titleLabel.item.toPlainText() != p._title]

    cut = []
    for tab in view.tab_names() or [None]:
        if tab is not None:
            view.select_tab(tab)
            _pump(0.3)
        try:  # on a busy machine the layout may take longer than the pump to settle
            qtbot.waitUntil(lambda tab=tab: not cut_titles(tab), timeout=10000)
        except qtbot.TimeoutError:
            pass
        cut += cut_titles(tab)
    assert cut == []
