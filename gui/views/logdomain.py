"""Log domain: LogSumExp as a smooth max, softmax as its gradient, log_softmax, sigmoid."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui import theme as themes
from gui.format import fmt
from gui.model.logdomain import GRADIENT_CHECK_LIMIT, LogDomainModel, LogDomainResult, LogTable
from gui.model.texts import language, tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets import legends, unchanged
from gui.widgets.bar_chart import BarChart
from gui.widgets.bar_labels import fit_range
from gui.widgets.legends import StaticSample
from gui.widgets.plot import Plot, style_current
from gui.widgets.sliders import ParamSlider
from gui.widgets.table_fit import titles_min_width

#: The y range of the curve plot covers the curves up to this temperature; beyond it
#: the bounds grow like T ln K and leave the plot (the readouts and hover give the values).
Y_FOCUS_T = 3.0
#: Plot ranges are kept inside this magnitude (pyqtgraph cannot map ±1.8e308).
RANGE_LIMIT = 1e300
#: The sigmoid difference plot's y axis is in units of this.
DIFF_UNIT = 1e-16
#: The gradient bars show row numbers instead of labels longer than this in all.
BAR_LABEL_CHARS = 30
#: The smooth max/min plot's legend is set this small: it must fit beside the rising curves.
LSE_LEGEND_TEXT = "8pt"


def finite_xy(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points with finite x and y (pyqtgraph warns on all-NaN data and cannot map inf)."""
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def padded_range(values: np.ndarray, frac: float, *, minimum_half: float = 1.0) -> tuple[float, float]:
    """A range around the finite ``values``, widened by ``frac`` of its span on each side.

    Degenerate spans get ``minimum_half`` (or a relative width for huge values);
    nothing overflows and both ends stay within ±RANGE_LIMIT.
    """
    v = values[np.isfinite(values)]
    if not v.size:
        return -minimum_half, minimum_half
    lo, hi = float(v.min()), float(v.max())
    center = lo / 2 + hi / 2  # halves first: no overflow
    half = (hi / 2 - lo / 2) * (1 + 2 * frac)
    half = min(max(half, minimum_half, abs(center) * 1e-6), RANGE_LIMIT)
    center = min(max(center, -RANGE_LIMIT), RANGE_LIMIT)
    return max(center - half, -2 * RANGE_LIMIT), min(center + half, 2 * RANGE_LIMIT)


def _dashed(colour: str, width: float = 1.0) -> object:
    return pg.mkPen(colour, width=width, style=Qt.PenStyle.DashLine)


class _LegendPlot(Plot):
    """A Plot whose compact legends keep to the corners its curves leave empty (gui.widgets.legends)."""

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        self._legends: list[pg.LegendItem] = []
        self._shown: object = None  # what the curves were last drawn from

    def _legend(self, offset: tuple[float, float], *, columns: int = 1, text_size: str = "9pt") -> pg.LegendItem:
        """The plot's legend: in the emptiest corner, or above the plot when every corner covers data."""
        legend = self.add_legend(offset=offset, sampleType=StaticSample, labelTextSize=text_size, colCount=columns,
                                 span_out=True)
        self._legends.append(legend)
        return legend

    def fit_legend(self) -> None:
        """A legend moved above the plot spans its whole width (legends.CornerKeeper)."""
        legend, most = getattr(self, "_outside_legend", (None, 1))
        if legend is not None:
            legends.fit_columns(legend, most, legends.row_room(self))

    def _style_legends(self, theme: themes.Theme) -> None:
        back = QColor(theme.background)
        back.setAlpha(210)
        for legend in self._legends:
            legend.setBrush(pg.mkBrush(back))
            legend.setPen(pg.mkPen(None))
            for _sample, label in legend.items:
                label.setText(label.text, color=theme.foreground)


class LsePlot(_LegendPlot):
    """T·LSE(s/T) and −T·LSE(−s/T) against log T, each between its two bounds."""

    def __init__(self):
        super().__init__(tr("logdomain.lse.title"), x_label=tr("plot.entropy.x"), y_label=tr("logdomain.lse.y"))
        self.describe = lambda x, y: tr("logdomain.lse.describe", t=fmt(x), y=fmt(y))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        self.max_curve = item.plot([], [])
        self.max_lo = item.plot([], [])
        self.max_hi = item.plot([], [])
        self.min_curve = item.plot([], [])
        self.min_lo = item.plot([], [])
        self.min_hi = item.plot([], [])
        self.markers = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        # One row per curve, its bounds beside it: short enough to sit above the curves' flat left
        # part when the plot is wide, else above the plot (the bounds' formulas are in the readouts).
        legend = self._legend((6, 4), columns=2, text_size=LSE_LEGEND_TEXT)
        legend.addItem(self.max_curve, tr("logdomain.lse.max"))
        legend.addItem(self.max_hi, tr("logdomain.lse.bounds"))
        legend.addItem(self.min_curve, tr("logdomain.lse.min"))
        legend.addItem(self.min_lo, tr("logdomain.lse.bounds"))
        item.setXRange(-2.15, 2.15, padding=0)
        item.getAxis("bottom").setTicks([[(d, f"{10.0 ** d:g}") for d in range(-2, 3)], []])

    def theme_changed(self, theme: themes.Theme) -> None:
        low = theme.series[2]
        self.max_curve.setPen(pg.mkPen(theme.accent, width=2.5))
        for bound in (self.max_lo, self.max_hi):
            bound.setPen(_dashed(theme.accent))
        self.min_curve.setPen(pg.mkPen(low, width=2.5))
        for bound in (self.min_lo, self.min_hi):
            bound.setPen(_dashed(low))
        style_current(theme, self.markers, self.now_line)
        self._style_legends(theme)

    def show_result(self, r: LogDomainResult) -> None:
        c = r.curves
        if c is not self._shown:  # the model caches them: new scores, new object
            self._shown = c
            pairs = ((self.max_curve, c.smooth_max), (self.max_lo, c.max_lo), (self.max_hi, c.max_hi),
                     (self.min_curve, c.smooth_min), (self.min_lo, c.min_lo), (self.min_hi, c.min_hi))
            for item, y in pairs:
                unchanged.set_curve(item, *finite_xy(c.t, y))
            near = c.t <= Y_FOCUS_T
            focus = np.concatenate([y[near] for _item, y in pairs])
            self.getPlotItem().setYRange(*padded_range(focus, 0.2), padding=0)
        t = r.temperature
        unchanged.set_curve(self.markers, *finite_xy(np.array([t, t]), np.array([r.smooth_max_t, r.smooth_min_t])))
        self.now_line.setValue(math.log10(t))


class SigmoidPlot(_LegendPlot):
    """σ(d) on top of softmax([d, 0])₁ (they coincide), with the first two scores' d marked."""

    def __init__(self):
        super().__init__(tr("logdomain.sigmoid.title"), x_label=tr("logdomain.sigmoid.x"),
                         y_label=tr("logdomain.sigmoid.y"))
        self.describe = lambda x, y: tr("logdomain.sigmoid.describe", d=fmt(x), y=fmt(y))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.softmax = item.plot([], [])
        self.sigmoid = item.plot([], [])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        legend = self._legend((-6, -4))
        legend.addItem(self.softmax, tr("logdomain.sigmoid.softmax"))
        legend.addItem(self.sigmoid, tr("logdomain.sigmoid.sigmoid"))
        item.setYRange(-0.1, 1.1, padding=0)  # room inside the axis for the 0 and 1 tick labels

    def theme_changed(self, theme: themes.Theme) -> None:
        wide = QColor(theme.accent)
        wide.setAlpha(110)
        self.softmax.setPen(pg.mkPen(wide, width=7))
        self.sigmoid.setPen(pg.mkPen(theme.foreground, width=1.5))
        style_current(theme, self.marker, self.now_line)
        self._style_legends(theme)

    def show_result(self, r: LogDomainResult) -> None:
        s = r.sigmoid
        if s.d is not self._shown:  # the grid is cached: redraw when it changes
            self._shown = s.d
            unchanged.set_curve(self.softmax, *finite_xy(s.d, s.softmax))
            unchanged.set_curve(self.sigmoid, *finite_xy(s.d, s.sigmoid))
            self.getPlotItem().setXRange(float(s.d[0]), float(s.d[-1]), padding=0.02)
        mark_sigmoid(self.marker, self.now_line, s.pair_d, s.pair_sigmoid, s.d)


class DifferencePlot(_LegendPlot):
    """σ(d) − softmax([d, 0])₁ (exactly 0) and the textbook sigmoid's rounding, in units of 1e-16."""

    def __init__(self):
        super().__init__(tr("logdomain.diff.title"), x_label=tr("logdomain.sigmoid.x"),
                         y_label=tr("logdomain.diff.y"))
        self.describe = lambda x, y: tr("logdomain.diff.describe", d=fmt(x), y=fmt(y, 2))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.naive = item.plot([], [], pen=None, symbol="o", symbolSize=4)
        self.exact = item.plot([], [])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        legend = self._legend((6, 4))
        legend.addItem(self.exact, tr("logdomain.diff.exact"))
        legend.addItem(self.naive, tr("logdomain.diff.naive"))
        self._data_y = (-1.0, 1.0)
        item.getViewBox().sigResized.connect(self._fit_y)

    def theme_changed(self, theme: themes.Theme) -> None:
        self.exact.setPen(pg.mkPen(theme.accent, width=2.5))
        self.naive.setSymbolBrush(pg.mkBrush(theme.series[1]))
        self.naive.setSymbolPen(pg.mkPen(None))
        style_current(theme, self.marker, self.now_line)
        self._style_legends(theme)

    def show_result(self, r: LogDomainResult) -> None:
        s = r.sigmoid
        if s.d is not self._shown:  # the grid is cached: redraw when it changes
            self._shown = s.d
            exact = s.difference / DIFF_UNIT
            naive = s.naive_difference / DIFF_UNIT
            unchanged.set_curve(self.exact, *finite_xy(s.d, exact))
            off = naive != 0  # the zeros lie on the exact line
            unchanged.set_curve(self.naive, *finite_xy(s.d[off], naive[off]))
            item = self.getPlotItem()
            item.setXRange(float(s.d[0]), float(s.d[-1]), padding=0.02)
            self._data_y = padded_range(np.concatenate([exact, naive, [-1.0, 1.0]]), 0.1)
            self._fit_y()
        mark_sigmoid(self.marker, self.now_line, s.pair_d, s.pair_difference / DIFF_UNIT, s.d)


    def _fit_y(self, *_args) -> None:
        """The data's range with room above it for the legend, in pixels (none once it moved above the plot)."""
        lo, hi = self._data_y
        vb = self.getPlotItem().getViewBox()
        legend = self._legends[0]
        room = 0.0 if legend.corner_keeper.outside else legend.boundingRect().height() + 3 * legends.MARGIN
        if vb.height() > 0:
            lo, hi = fit_range(lo, hi, hi, lo, vb.height(), room, 0.0)
        vb.setYRange(lo, hi, padding=0)


def mark_sigmoid(marker, line, d: float, y: float, grid: np.ndarray) -> None:
    """Mark the first two scores' d on a plot over ``grid`` (hidden without a finite d in it)."""
    inside = bool(math.isfinite(d) and grid[0] <= d <= grid[-1])
    unchanged.set_curve(marker, *(([d], [y]) if inside and math.isfinite(y) else ([], [])))
    line.setVisible(inside)
    if inside:
        line.setValue(d)


def bar_labels(labels: tuple[str, ...]) -> tuple[str, ...]:
    """The token labels, or their row numbers 1..n when the labels would crowd a half-width chart."""
    if sum(len(label) for label in labels) <= BAR_LABEL_CHARS:
        return labels
    return tuple(str(i + 1) for i in range(len(labels)))


def _log_text(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    return f"{v:.9g}"


class LogTableWidget(QTableWidget):
    """One row per token: c·s, log_softmax, and log(softmax) in float64 and float32.

    Cells whose weight underflowed (−inf) and cells that lost digits are shaded.
    """

    COLUMNS = ("scores", "stable", "naive64", "naive32")

    def __init__(self, parent=None):
        super().__init__(0, len(self.COLUMNS), parent)
        for c, key in enumerate(self.COLUMNS):
            header = QTableWidgetItem(tr(f"logdomain.table.{key}"))
            header.setToolTip(tr(f"logdomain.table.{key}.tooltip"))
            self.setHorizontalHeaderItem(c, header)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().setDefaultSectionSize(22)
        self._labels: tuple[str, ...] = ()
        self._shown: list[list[tuple]] = []
        self._drawn: tuple = ()  # (log table, labels, theme name, language) last shown

    def minimumSizeHint(self) -> QSize:
        """Wide enough for every column's title (the stretched columns share the width equally)."""
        hint = super().minimumSizeHint()
        return QSize(max(hint.width(), titles_min_width(self, fitted=(0,))), hint.height())

    def flags(self, row: int, column: int) -> str:
        """"underflow", "lost" or "" for a cell (for tests)."""
        return self._shown[row][column][1]

    def show_result(self, result: LogDomainResult) -> None:
        labels, t, theme = result.labels, result.log_table, themes.current()
        drawn = (labels, theme.name, language())
        if self._drawn and self._drawn[0] is t and self._drawn[1:] == drawn:
            return  # the model keeps its table while the scores and the spread stay: nothing changed
        n = len(labels)
        if self.rowCount() != n:
            self.setRowCount(n)
            for r in range(n):
                for c in range(len(self.COLUMNS)):
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.setItem(r, c, item)
            self._shown = [[()] * len(self.COLUMNS) for _ in range(n)]
        if labels != self._labels:
            self._labels = labels
            self.setVerticalHeaderLabels(list(labels))
        # the caution amber, distinct from the invalid red
        brushes = {"underflow": QBrush(QColor(theme.invalid)), "lost": QBrush(QColor(theme.caution)), "": QBrush()}
        columns = ((t.scores, None), (t.stable, None), (t.naive64, t.rel64), (t.naive32, t.rel32))
        for c, (values, rel) in enumerate(columns):
            under = LogTable.underflowed(values, t.stable) if rel is not None else np.zeros(n, bool)
            lost_digits = LogTable.lost_digits(values, t.stable) if rel is not None else np.zeros(n, bool)
            for r in range(n):
                v = float(values[r])
                text = f"{v:.6g}" if c == 0 else _log_text(v)
                flag = "underflow" if under[r] else "lost" if lost_digits[r] else ""
                if rel is None:
                    tip = ""
                elif flag == "underflow":
                    tip = tr("logdomain.table.cell_underflow", stable=_log_text(float(t.stable[r])))
                else:
                    key = "logdomain.table.cell_lost" if flag else "logdomain.table.cell_ok"
                    tip = tr(key, rel=f"{float(rel[r]):.1e}")
                state = (text, flag, tip, theme.name)
                if self._shown[r][c] == state:
                    continue
                self._shown[r][c] = state
                item = self.item(r, c)
                item.setText(text)
                item.setToolTip(tip)
                item.setBackground(brushes[flag])
        self._drawn = (t, *drawn)


class LogDomainView(BaseView):
    model: LogDomainModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.temperature = ParamSlider(self.model, "temperature")
        readouts = self.readout_box((
            "logdomain.readout.lse", "logdomain.readout.max", "logdomain.readout.max_log_k",
            "logdomain.readout.softmin", "logdomain.readout.min_bounds", "logdomain.readout.at_t",
            "logdomain.readout.grad", "logdomain.readout.d", "logdomain.readout.sigmoid",
            "logdomain.readout.softmax2", "logdomain.readout.sigmoid_diff",
        ))
        readouts.setTitle(tr("logdomain.readouts.title"))

        self.lse = self.add_plot("lse", LsePlot())
        self.gradient = self.add_plot("gradient", BarChart(
            tr("logdomain.grad.title"),
            [(tr("logdomain.grad.softmax"), "accent"), (tr("logdomain.grad.fd"), "secondary")],
            y_label=tr("logdomain.grad.y"), value_labels=False, percent=False, legend_columns=2,
            y_range=(-0.01, 1.3), value_name=tr("logdomain.grad.value"),
        ))
        self.sigmoid = self.add_plot("sigmoid", SigmoidPlot())
        self.difference = self.add_plot("sigmoid_diff", DifferencePlot())

        self.spread = ParamSlider(self.model, "spread")
        self.table = LogTableWidget()
        legend = QLabel(tr("logdomain.table.legend"))
        legend.setWordWrap(True)
        table_box = QGroupBox(tr("logdomain.table.title"))
        box = QVBoxLayout(table_box)
        box.setContentsMargins(6, 4, 6, 4)
        box.addWidget(self.spread)
        box.addWidget(self.table, 1)
        box.addWidget(legend)

        plots = QWidget()
        grid = QGridLayout(plots)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.lse, 0, 0)
        grid.addWidget(self.gradient, 0, 1)
        grid.addWidget(self.sigmoid, 1, 0)
        grid.addWidget(self.difference, 1, 1)
        grid.addWidget(table_box, 2, 0, 1, 2)
        grid.setRowStretch(0, 4)
        grid.setRowStretch(1, 3)
        grid.setRowStretch(2, 2)
        self.arrange([self.editor, self.temperature, readouts], plots, min_width=320)

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        self.lse.show_result(r)
        self.gradient.set_data(bar_labels(r.labels), [r.grad_softmax, r.grad_fd])
        self.sigmoid.show_result(r)
        self.difference.show_result(r)
        self.table.show_result(r)

        out = self.readouts
        out["logdomain.readout.lse"].setText(fmt(r.lse))
        out["logdomain.readout.max"].setText(fmt(r.max))
        out["logdomain.readout.max_log_k"].setText(fmt(r.max_log_k))
        out["logdomain.readout.softmin"].setText(fmt(r.softmin))
        out["logdomain.readout.min_bounds"].setText(f"{fmt(r.min_log_k)} … {fmt(r.min)}")
        out["logdomain.readout.at_t"].setText(tr("logdomain.at_t", smax=fmt(r.smooth_max_t), smin=fmt(r.smooth_min_t)))
        diff = r.grad_max_difference
        out["logdomain.readout.grad"].setText(
            tr("logdomain.readout.grad_too_large", limit=GRADIENT_CHECK_LIMIT) if r.k > GRADIENT_CHECK_LIMIT
            else "NaN" if math.isnan(diff) else f"{diff:.1e}")
        s = r.sigmoid
        sigmoid_texts = {
            "logdomain.readout.d": fmt(s.pair_d),
            "logdomain.readout.sigmoid": fmt(s.pair_sigmoid, 9),
            "logdomain.readout.softmax2": fmt(s.pair_softmax, 9),
            "logdomain.readout.sigmoid_diff": (
                "NaN" if math.isnan(s.pair_difference) else "0" if s.pair_difference == 0
                else f"{s.pair_difference:.1e}"
            ),
        }
        for key, text in sigmoid_texts.items():
            out[key].setText(text if s.pair is not None else tr("logdomain.sigmoid.need_two"))

