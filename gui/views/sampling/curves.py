"""Curves of the Sampling view on a log x axis: the sorted cumulative probability, T and τ curves."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt

from gui import theme as themes
from gui.format import fmt
from gui.model.sampling import CurveResult, SamplingResult
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.plot import Plot, style_current
from gui.widgets.ticks import decade_ticks


class CurvePlot(Plot):
    """A curve against a log x axis (1-2-5 ticks over ``x_range``) with the current x marked.

    A result with a ``name`` (the T curve's choice) relabels the y axis with
    the ``sampling.curve.NAME`` text.
    """

    def __init__(self, title: str, *, x_label: str, y_label: str, x_range: tuple[float, float], x_name: str):
        self._x_range = x_range
        self._x_name = x_name
        super().__init__(title, x_label=x_label, y_label=y_label)
        self.describe = lambda x, y: f"{self._x_name} = {fmt(x)}, {self._y_label} = {fmt(y)}"

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        self.curve = item.plot([], [])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        lo, hi = (math.log10(v) for v in self._x_range)
        pad = 0.03 * (hi - lo)
        item.setXRange(lo - pad, hi + pad, padding=0)
        item.getAxis("bottom").setTicks([decade_ticks(*self._x_range), []])

    def theme_changed(self, theme: themes.Theme) -> None:
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        style_current(theme, self.marker, self.now_line)

    def show_result(self, c: CurveResult) -> None:
        ok = np.isfinite(c.y)  # pyqtgraph warns on NaN: draw only the finite part
        unchanged.set_curve(self.curve, c.x[ok], c.y[ok])
        unchanged.set_curve(self.marker, *(([c.x_now], [c.y_now]) if math.isfinite(c.y_now) else ([], [])))
        self.now_line.setValue(math.log10(c.x_now))
        if c.name:
            self._set_y_label(tr(f"sampling.curve.{c.name}"))

    def _set_y_label(self, text: str) -> None:
        if text != self._y_label:
            self._y_label = text  # the theme pass labels the axis with it from now on
            self.getPlotItem().setLabel("left", text, color=themes.current().foreground)


class CumulativePlot(Plot):
    """Sorted cumulative probability against rank (log x), with the top-p level and cut."""

    def __init__(self):
        super().__init__(tr("sampling.cumulative.title"), x_label=tr("sampling.cumulative.x"),
                         y_label=tr("sampling.cumulative.y"))
        self.describe = lambda x, y: tr("sampling.cumulative.describe", rank=f"{x:,.0f}", p=fmt(y))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        item.setYRange(0, 1.05, padding=0)
        self._x_max: float | None = None
        self.curve = item.plot([], [])
        self.level = pg.InfiniteLine(angle=0, movable=False, label="", labelOpts={"position": 0.3})
        self.cut = pg.InfiniteLine(angle=90, movable=False, label="", labelOpts={"position": 0.2})
        for line in (self.level, self.cut):
            item.addItem(line, ignoreBounds=True)

    def theme_changed(self, theme: themes.Theme) -> None:
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        for line in (self.level, self.cut):
            line.setPen(pg.mkPen(theme.highlight, width=1.5, style=Qt.PenStyle.DashLine))
            line.label.setColor(theme.highlight)

    def show_result(self, r: SamplingResult) -> None:
        unchanged.set_curve(self.curve, r.cum_rank.astype(float), r.cum_prob)
        x_max = math.log10(max(r.size, 10))
        if x_max != self._x_max:  # the range moves only with V
            self._x_max = x_max
            self.getPlotItem().setXRange(0, x_max, padding=0.02)
        on = r.top_p is not None
        unchanged.set_visible(self.level, on)
        unchanged.set_visible(self.cut, on and r.top_p_rank > 0)
        if on:
            self.level.setValue(r.top_p)
            _set_format(self.level, f"top-p = {r.top_p:g}")
            self.cut.setValue(math.log10(max(r.top_p_rank, 1)))
            _set_format(self.cut, tr("sampling.cumulative.cut", n=f"{r.top_p_rank:,}"))


def _set_format(line: pg.InfiniteLine, text: str) -> None:
    """A line's label text, set only when it changed (setFormat lays the text out again)."""
    if line.label.format != text:
        line.label.setFormat(text)
