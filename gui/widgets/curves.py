"""Line plots of several named curves: a legend above them, the current x marked, reference lines."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import Qt

from gui import theme as themes
from gui.format import fmt
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.plot import Plot
from gui.widgets.ticks import decade_ticks

#: Line styles by name.
STYLES = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine,
          "wide": Qt.PenStyle.SolidLine}
#: A "wide" curve is drawn this wide, under the others, so a curve on top of it still shows it.
WIDE = 5


class Curves(Plot):
    """Named curves (``series``: (name, colour role, style)) over a linear or log x (and y) axis.

    The legend sits above the plot (never on the data); :meth:`set_now`
    marks the current x with the house's dashed line; ``lines`` are labelled
    horizontal reference lines (values in data units, also on a log y).
    """

    def __init__(self, title: str, series: Sequence[tuple[str, str | int, str]], *, x_label: str, y_label: str,
                 log_x: bool = False, log_y: bool = False, x_range: tuple[float, float] | None = None,
                 legend_columns: int = 3, x_name: str = "x", y_name: str = "y"):
        self._series = list(series)
        self._log_x, self._log_y = log_x, log_y
        self._x_range = x_range
        self._legend_columns = legend_columns
        self.lines: list[pg.InfiniteLine] = []
        super().__init__(title, x_label=x_label, y_label=y_label)
        self.describe = lambda x, y: f"{x_name} = {fmt(x)}, {y_name} = {fmt(10.0 ** y if self._log_y else y)}"

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=self._log_x, y=self._log_y)
        item.setMouseEnabled(x=False, y=False)
        legend = self.add_legend(outside=True, colCount=self._legend_columns) if len(self._series) > 1 else None
        self.curves = []
        for name, _role, style in self._series:
            curve = item.plot([], [], name=None)
            curve.setZValue(-1 if style == "wide" else 0)
            self.curves.append(curve)
            if legend is not None:
                legend.addItem(curve, name)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        self.now_line.hide()
        if self._x_range is not None:
            lo, hi = self._x_range
            if self._log_x:
                lo, hi = math.log10(lo), math.log10(hi)
                item.getAxis("bottom").setTicks([decade_ticks(*self._x_range), []])
            pad = 0.02 * (hi - lo)
            item.setXRange(lo - pad, hi + pad, padding=0)

    def add_line(self, label: str = "", *, angle: int = 0, position: float = 0.85) -> pg.InfiniteLine:
        """A reference line; its label starts at ``position`` (0..1 along the line): above a horizontal
        line, right of a vertical one."""
        opts = {"position": position, "anchors": [(0, 1), (0, 1)] if angle == 0 else [(0, 0), (0, 0)]}
        line = pg.InfiniteLine(angle=angle, movable=False, label=label or None, labelOpts=opts if label else None)
        self.getPlotItem().addItem(line, ignoreBounds=True)
        self.lines.append(line)
        self._style_line(line, themes.current())
        return line

    @staticmethod
    def _style_line(line: pg.InfiniteLine, theme: themes.Theme) -> None:
        line.setPen(pg.mkPen(theme.muted, width=1, style=Qt.PenStyle.DotLine))
        if getattr(line, "label", None) is not None:
            line.label.setColor(theme.muted)

    def theme_changed(self, theme: themes.Theme) -> None:
        for curve, (_name, role, style) in zip(self.curves, self._series):
            curve.setPen(pg.mkPen(themes.colour(theme, role), width=WIDE if style == "wide" else 2,
                                  style=STYLES[style]))
        for line in self.lines:
            self._style_line(line, theme)
        self.now_line.setPen(pg.mkPen(theme.highlight, width=1, style=Qt.PenStyle.DashLine))
        legend = self.getPlotItem().legend
        if legend is not None:
            for _sample, label in legend.items:
                label.setText(label.text, color=theme.foreground)

    def set_curve(self, i: int, x: np.ndarray, y: np.ndarray) -> None:
        """Curve ``i``; only its finite points (and positive ones on a log axis) are drawn."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        ok = np.isfinite(x) & np.isfinite(y)
        if self._log_x:
            ok &= x > 0
        if self._log_y:
            ok &= y > 0
        unchanged.set_curve(self.curves[i], x[ok], y[ok])

    def data(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The points curve ``i`` holds (for tests), in data units."""
        x, y = self.curves[i].getData()
        return (np.zeros(0), np.zeros(0)) if x is None else (np.asarray(x), np.asarray(y))

    def set_now(self, x: float | None) -> None:
        """Mark the current x (None: no mark)."""
        self.now_line.setVisible(x is not None and (not self._log_x or x > 0))
        if x is not None and (not self._log_x or x > 0):
            self.now_line.setValue(math.log10(x) if self._log_x else x)

    def set_line(self, line: pg.InfiniteLine, value: float, label: str | None = None) -> None:
        """A horizontal reference line at ``value`` (data units) and, optionally, its new label."""
        log = self._log_y if line.angle == 0 else self._log_x
        line.setVisible(math.isfinite(value) and (not log or value > 0))
        if line.isVisible():
            line.setValue(math.log10(value) if log else value)
        if label is not None and getattr(line, "label", None) is not None:
            line.label.setFormat(label)

    def set_y_range(self, lo: float, hi: float) -> None:
        if (lo, hi) == getattr(self, "_y_range", None):
            return  # the same range: nothing to repaint
        self._y_range = (lo, hi)
        if self._log_y:
            lo, hi = math.log10(lo), math.log10(hi)
        self.getPlotItem().setYRange(lo, hi, padding=0.02)

