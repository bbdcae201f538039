"""Plots repaint the bounding rectangle of what changed: what a slider step leaves on screen is what a full repaint shows.

The window's backing store (QScreen.grabWindow on the offscreen platform) after the event loop's own partial
repaints is compared bit for bit with the same window after every plot repainted its whole viewport.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QApplication, QGraphicsView

from gui.widgets.bar_chart import BarChart
from gui.widgets.sliders import ValueSlider


def screen(widget) -> np.ndarray:
    from PySide6.QtGui import QImage

    image = QApplication.primaryScreen().grabWindow(widget.winId()).toImage()
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    h, stride = image.height(), image.bytesPerLine()
    return np.frombuffer(image.constBits(), dtype=np.uint8, count=h * stride).reshape(h, stride).copy()


def settle(qtbot, rounds: int = 4) -> None:
    for _ in range(rounds):
        QApplication.processEvents()
        qtbot.wait(5)


def fully_repainted(plots) -> None:
    for plot in plots:
        plot.viewport().repaint()


def test_slider_steps_leave_what_a_full_repaint_paints(make_view, qtbot):
    view = make_view("calculator")
    view.flush()
    settle(qtbot)
    plots = [p for p in view.plots().values() if p.isVisible()]
    assert all(p.viewportUpdateMode() == QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate for p in plots)
    slider = next(v for v in view.findChildren(ValueSlider) if v.isVisible()).slider
    before = screen(view)
    for pos in (slider.value() + 40, slider.value() + 90, slider.value() + 20):
        slider.setValue(pos)
        qtbot.waitUntil(lambda: not view.redraw_pending, timeout=5000)
        settle(qtbot)
    stepped = screen(view)
    assert (stepped != before).any()  # the steps did change the plot
    fully_repainted(plots)
    np.testing.assert_array_equal(stepped, screen(view))


def test_bar_chart_updates_leave_what_a_full_repaint_paints(qtbot):
    chart = BarChart("bars", [("p", "accent"), ("q", "secondary")])
    qtbot.addWidget(chart)
    chart.resize(460, 330)
    chart.show()
    qtbot.waitExposed(chart)
    rng = np.random.default_rng(3)
    for n in (3, 3, 5, 4):
        chart.set_data([f"t{i}" for i in range(n)], [rng.random(n) * 0.6, rng.random(n) * 0.4])
        settle(qtbot)
        partial = screen(chart)
        fully_repainted([chart])
        np.testing.assert_array_equal(partial, screen(chart))
