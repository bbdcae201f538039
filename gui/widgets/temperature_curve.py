"""A quantity against temperature on a log axis, the current T marked (the Temperature and Gradients views)."""

from __future__ import annotations

import math

import numpy as np

from gui import theme as themes
from gui.format import fmt
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.plot import Plot, style_current


class TemperatureCurve(Plot):
    """A quantity against temperature on a log axis (0.01 to 100), the current T marked.

    ``describe_y`` names the quantity in the status bar.  Subclasses add
    their own items (limit lines) in ``create_items`` and restyle them in
    ``theme_changed``.
    """

    def __init__(self, title: str, *, y_label: str, describe_y: str):
        super().__init__(title, x_label=tr("plot.entropy.x"), y_label=y_label)
        self.describe = lambda x, y: f"T = {fmt(x)}, {describe_y} = {fmt(y)}"

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        self.curve = item.plot([], [])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=11)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        item.setXRange(-2.15, 2.15, padding=0)  # a little past the end decades, so their labels show
        item.getAxis("bottom").setTicks([[(d, f"{10.0 ** d:g}") for d in range(-2, 3)], []])

    def theme_changed(self, theme: themes.Theme) -> None:
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        style_current(theme, self.marker, self.now_line)

    def set_curve(self, t: np.ndarray, y: np.ndarray, t_now: float, y_now: float) -> None:
        # pyqtgraph warns on all-NaN data (it takes nanmin of it): draw only the finite part
        ok = np.isfinite(y)
        unchanged.set_curve(self.curve, t[ok], y[ok])
        unchanged.set_curve(self.marker, *(([t_now], [y_now]) if np.isfinite(y_now) else ([], [])))
        self.now_line.setValue(math.log10(t_now))
