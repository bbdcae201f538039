"""The precision view's plots: where each format overflows, and how far float32 sums miss 1."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

import compute
from gui import theme as themes
from gui.format import fmt
from gui.model.precision import DTYPES, PrecisionModel, PrecisionResult, SumErrors
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.line_labels import LineLabels
from gui.widgets.plot import Plot, style_current


class OverflowPlot(Plot):
    """The largest score times the scale against the scale (log-log), with each format's threshold.

    The chosen format's threshold is drawn solid, with a cross where the
    largest score reaches it; the model says which format and which scale.
    """

    def __init__(self, model: PrecisionModel):
        self.model = model
        self.selected = 0  # the format whose line is drawn solid
        self._curve_for: float | None = None  # the max score the curve was drawn for
        self._y_range: tuple[float, float] | None = None
        super().__init__(tr("precision.overflow.title"), x_label=tr("precision.overflow.x"),
                         y_label=tr("precision.overflow.y"))
        self.describe = lambda x, y: tr("precision.overflow.hover", c=fmt(x), y=fmt(10.0**y))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=True)
        item.setMouseEnabled(x=False, y=False)
        self.lines = []
        for d in DTYPES:
            t = compute.overflow_threshold(d)
            line = pg.InfiniteLine(pos=math.log10(t), angle=0, movable=False,
                                   label=tr("precision.overflow.line", dtype=d, threshold=f"{t:.2f}"))
            item.addItem(line, ignoreBounds=True)
            self.lines.append(line)
        self.curve = item.plot([], [])
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        # each label along its line, above or below, clear of the curve, the current scale's line, the
        # other lines (bfloat16's 88.5 and float32's 88.72 nearly coincide) and the labels placed before
        self.line_labels = LineLabels(item, self.lines, lambda: [self.curve], [self.now_line])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.crossing = item.plot([], [], pen=None, symbol="x", symbolSize=13)
        item.setXRange(-0.08, 3.25, padding=0)  # room for the "1000" tick label
        item.getAxis("bottom").setTicks([[(d, f"{10.0 ** d:g}") for d in range(4)], []])

    def theme_changed(self, theme: themes.Theme) -> None:
        for i, line in enumerate(self.lines):
            colour = themes.colour(theme, i)
            chosen = i == self.selected
            line.setPen(pg.mkPen(colour, width=2.5 if chosen else 1.2,
                                 style=Qt.PenStyle.SolidLine if chosen else Qt.PenStyle.DashLine))
            line.label.setColor(colour)
        self.curve.setPen(pg.mkPen(theme.foreground, width=2))
        style_current(theme, self.marker, self.now_line)
        self.crossing.setSymbolPen(pg.mkPen(themes.colour(theme, self.selected), width=2))
        self.crossing.setSymbolBrush(pg.mkBrush(themes.colour(theme, self.selected)))

    def show_result(self, r: PrecisionResult) -> None:
        scale, selected = self.model.scale, DTYPES.index(self.model.dtype)
        if selected != self.selected:
            self.selected = selected
            self.theme_changed(themes.current())
        ok = np.isfinite(r.curve_top) & (r.curve_top > 0)
        if r.max_score != self._curve_for:  # a scale drag moves only the marker and the line
            self._curve_for = r.max_score
            unchanged.set_curve(self.curve, r.curve_scale[ok], r.curve_top[ok])
        top = r.max_score * scale
        unchanged.set_curve(self.marker, *(([scale], [top]) if math.isfinite(top) and top > 0 else ([], [])))
        self.now_line.setValue(math.log10(scale))
        c = float(r.break_scale[selected])
        on_plot = math.isfinite(c) and 1.0 <= c <= 1000.0
        unchanged.set_curve(self.crossing, *(([c], [r.overflow[selected]]) if on_plot else ([], [])))
        logs = [math.log10(t) for t in r.overflow]
        if ok.any():
            logs += [math.log10(r.curve_top[ok][0]), math.log10(r.curve_top[ok][-1])]
        y_range = (min(logs) - 0.25, max(logs) + 0.25)
        if y_range != self._y_range:
            self._y_range = y_range
            self.getPlotItem().setYRange(*y_range, padding=0)
        self.line_labels.place()


class SumErrorPlot(Plot):
    """Histograms of |Σα − 1| in units of float32 eps: plain max-shifted and renormalised."""

    def __init__(self):
        self.errors: SumErrors | None = None
        super().__init__(tr("precision.sum.title"), x_label=tr("precision.sum.x"), y_label=tr("precision.sum.y"))
        self.describe = self._describe_bin

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.add_legend(offset=(-8, 8))
        self.plain = pg.PlotDataItem([0.0, 1.0], [0.0], stepMode="center", fillLevel=0,
                                     name=tr("precision.sum.plain"))
        self.renormalised = pg.PlotDataItem([0.0, 1.0], [0.0], stepMode="center",
                                            name=tr("precision.sum.renormalised"))
        item.addItem(self.plain)
        item.addItem(self.renormalised)

    def theme_changed(self, theme: themes.Theme) -> None:
        fill = QColor(theme.accent)
        fill.setAlpha(110)
        self.plain.setPen(pg.mkPen(theme.accent, width=1))
        self.plain.setFillBrush(pg.mkBrush(fill))
        self.renormalised.setPen(pg.mkPen(themes.colour(theme, 1), width=2))
        legend = self.getPlotItem().legend
        for _sample, label in legend.items:  # LegendItem.setLabelTextColor does not restyle existing labels
            label.setText(label.text, color=theme.foreground)

    def show_result(self, s: SumErrors) -> None:
        """Draw the float32 sum experiment (``PrecisionModel.sum_errors()``); the same one is drawn once."""
        if s is self.errors:
            return
        self.errors = s
        unchanged.set_curve(self.plain, s.edges, s.counts_plain)
        unchanged.set_curve(self.renormalised, s.edges, s.counts_renormalised)
        top = max(int(s.counts_plain.max()), int(s.counts_renormalised.max()), 1)
        item = self.getPlotItem()
        item.setXRange(0.0, float(s.edges[-1]), padding=0.02)
        item.setYRange(0.0, top * 1.3, padding=0)  # room for the legend

    def _describe_bin(self, x: float, _y: float) -> str:
        s = self.errors
        if s is None:
            return ""
        i = int(np.searchsorted(s.edges, x, side="right")) - 1
        if not 0 <= i < len(s.counts_plain):
            return ""
        return tr("precision.sum.hover", err=f"{s.edges[i]:.3g}–{s.edges[i + 1]:.3g}",
                  plain=int(s.counts_plain[i]), renorm=int(s.counts_renormalised[i]))
