"""Precision: the same softmax in float16, bfloat16, float32 and float64, and where each breaks."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QStyledItemDelegate,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

import compute
from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.base import ViewModel
from gui.model.precision import DTYPES, EPS32, MASK_NAMES, METHODS, PrecisionModel, PrecisionResult, SumErrors
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets.plot import Plot, style_current
from gui.widgets.sliders import ParamChoice, ParamSlider

#: A grid cell shows this many weights, the masking panel's detail line more; tooltips list them all.
SHOWN_WEIGHTS = 4
DETAIL_WEIGHTS = 12
#: Token check boxes per row in the masking panel.
MASK_BOXES_PER_ROW = 8
ZERO_ALPHA = 80  # the amber of exact zeros, over the table's own background


def compact(v: float) -> str:
    """A weight in a few characters: 0 only when exactly 0, NaN and inf spelled out."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "0" if v == 0 else f"{v:.3g}"


def exact(v: float, dtype: str) -> str:
    """The shortest text that reads back as the same number of the format's storage type."""
    if not math.isfinite(v):
        return compact(v)
    storage = {"float16": np.float16, "bfloat16": np.float32, "float32": np.float32}.get(dtype)
    return repr(float(v)) if storage is None else str(storage(v))


def weights_line(w: np.ndarray, limit: int = SHOWN_WEIGHTS) -> str:
    shown = " ".join(compact(v) for v in w[:limit])
    return shown + (" …" if len(w) > limit else "")


def weights_tooltip(head: str, labels, w: np.ndarray, dtype: str) -> list[str]:
    return [head, *(f"{label}: {exact(v, dtype)}" for label, v in zip(labels, w))]


def cell_colour(nan: int, inf: int, zero: int) -> QColor | None:
    """Invalid colour for NaN/inf, amber for exact zeros, nothing otherwise."""
    theme = themes.current()
    if nan or inf:
        return QColor(theme.invalid)
    if zero:
        c = QColor(theme.series[1])
        c.setAlpha(ZERO_ALPHA)
        return c
    return None


class _FrameDelegate(QStyledItemDelegate):
    """Paints the cell as usual, then outlines the table's selected cell."""

    def __init__(self, table: CellTable):
        super().__init__(table)
        self.table = table

    def paint(self, painter, option, index) -> None:
        super().paint(painter, option, index)
        if (index.row(), index.column()) == self.table.selected:
            painter.save()
            pen = QPen(QColor(themes.current().accent))
            pen.setWidth(3)
            painter.setPen(pen)
            painter.drawRect(option.rect.adjusted(1, 1, -2, -2))
            painter.restore()


class CellTable(QTableWidget):
    """A small read-only table of multi-line cells with colour-coded backgrounds.

    One cell is "selected" (outlined by a delegate, not Qt's selection, so
    the background colours stay visible); ``cellClicked`` picks a cell.
    """

    def __init__(self, rows: list[str], cols: list[str], tooltip: str, parent=None):
        super().__init__(len(rows), len(cols), parent)
        self.selected: tuple[int, int] = (-1, -1)
        self._fitted = False
        self.setVerticalHeaderLabels(rows)
        self.setHorizontalHeaderLabels(cols)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setToolTip(tooltip)
        self.setItemDelegate(_FrameDelegate(self))
        for r in range(len(rows)):
            for c in range(len(cols)):
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.setItem(r, c, item)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def set_cell(self, r: int, c: int, text: str, colour: QColor | None, tooltip: str) -> None:
        item = self.item(r, c)
        item.setText(text)
        item.setBackground(QBrush(colour) if colour is not None else QBrush())
        item.setToolTip(tooltip)

    def set_selected(self, r: int, c: int) -> None:
        if (r, c) != self.selected:
            self.selected = (r, c)
            self.viewport().update()

    def fit_height(self) -> None:
        """As tall as its rows (no scrolling, no empty space); only the first call measures."""
        if self._fitted:
            return
        self._fitted = True
        self.resizeRowsToContents()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no re-measuring per redraw
        height = self.verticalHeader().length() + self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
        self.setFixedHeight(height)

    def texts(self) -> list[list[str]]:
        return [[self.item(r, c).text() for c in range(self.columnCount())] for r in range(self.rowCount())]

    def colours(self) -> list[list[str | None]]:
        """Each cell's background colour name (None for none), for tests."""
        out = []
        for r in range(self.rowCount()):
            row = []
            for c in range(self.columnCount()):
                brush = self.item(r, c).background()
                row.append(None if brush.style() == Qt.BrushStyle.NoBrush else brush.color().name())
            out.append(row)
        return out

    def click_cell(self, r: int, c: int):
        """The viewport position of a cell's centre (for tests that click it)."""
        return self.visualRect(self.model().index(r, c)).center()


class ParamSpin(QSpinBox):
    """A spin box bound both ways to one integer parameter of a view model."""

    def __init__(self, model: ViewModel, name: str, parent=None):
        super().__init__(parent)
        spec = model.params()[name]
        self.setRange(int(spec.minimum), int(spec.maximum))
        self.setKeyboardTracking(False)
        self.setStepType(QSpinBox.StepType.AdaptiveDecimalStepType)
        self.setToolTip(tr(f"param.{name}.tooltip"))
        self._show(getattr(model, name))
        self.valueChanged.connect(lambda v: model.set_param(name, v))
        connect_while_alive(self, getattr(model.events, name), self._show)

    def _show(self, value: int) -> None:
        with signals_blocked(self):
            self.setValue(int(value))


class OverflowPlot(Plot):
    """The largest score times the scale against the scale (log-log), with each format's threshold."""

    def __init__(self):
        super().__init__(tr("precision.overflow.title"), x_label=tr("precision.overflow.x"),
                         y_label=tr("precision.overflow.y"))
        item = self.getPlotItem()
        item.setLogMode(x=True, y=True)
        item.setMouseEnabled(x=False, y=False)
        self.lines = []
        for i, d in enumerate(DTYPES):
            t = compute.overflow_threshold(d)
            above = d != "bfloat16"  # bfloat16 (88.5) and float32 (88.72) nearly coincide: one label below
            line = pg.InfiniteLine(
                pos=math.log10(t), angle=0, movable=False,
                label=tr("precision.overflow.line", dtype=d, threshold=f"{t:.2f}"),
                labelOpts={"position": 0.03 if i % 2 == 0 else 0.3,
                           "anchors": [(0, 1), (0, 1)] if above else [(0, 0), (0, 0)]},
            )
            item.addItem(line, ignoreBounds=True)
            self.lines.append(line)
        self.curve = item.plot([], [])
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.crossing = item.plot([], [], pen=None, symbol="x", symbolSize=13)
        self.selected = 0
        self._curve_for: float | None = None  # the max score the curve was drawn for
        self._y_range: tuple[float, float] | None = None
        item.setXRange(-0.08, 3.25, padding=0)  # room for the "1000" tick label
        item.getAxis("bottom").setTicks([[(d, f"{10.0 ** d:g}") for d in range(4)], []])
        self.describe = lambda x, y: tr("precision.overflow.hover", c=fmt(x), y=fmt(10.0**y))
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "crossing"):
            return
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

    def show_result(self, r: PrecisionResult, scale: float, selected: int) -> None:
        if selected != self.selected:
            self.selected = selected
            self.theme_changed(themes.current())
        ok = np.isfinite(r.curve_top) & (r.curve_top > 0)
        if r.max_score != self._curve_for:  # a scale drag moves only the marker and the line
            self._curve_for = r.max_score
            self.curve.setData(r.curve_scale[ok], r.curve_top[ok])
        top = r.max_score * scale
        self.marker.setData(*(([scale], [top]) if math.isfinite(top) and top > 0 else ([], [])))
        self.now_line.setValue(math.log10(scale))
        c = float(r.break_scale[selected])
        on_plot = math.isfinite(c) and 1.0 <= c <= 1000.0
        self.crossing.setData(*(([c], [r.overflow[selected]]) if on_plot else ([], [])))
        logs = [math.log10(t) for t in r.overflow]
        if ok.any():
            logs += [math.log10(r.curve_top[ok][0]), math.log10(r.curve_top[ok][-1])]
        y_range = (min(logs) - 0.25, max(logs) + 0.25)
        if y_range != self._y_range:
            self._y_range = y_range
            self.getPlotItem().setYRange(*y_range, padding=0)


class SumErrorPlot(Plot):
    """Histograms of |Σα − 1| in units of float32 eps: plain max-shifted and renormalised."""

    def __init__(self):
        super().__init__(tr("precision.sum.title"), x_label=tr("precision.sum.x"), y_label=tr("precision.sum.y"))
        item = self.getPlotItem()
        item.setMouseEnabled(x=False, y=False)
        self.add_legend(offset=(-8, 8))
        self.plain = pg.PlotDataItem([0.0, 1.0], [0.0], stepMode="center", fillLevel=0,
                                     name=tr("precision.sum.plain"))
        self.renormalised = pg.PlotDataItem([0.0, 1.0], [0.0], stepMode="center",
                                            name=tr("precision.sum.renormalised"))
        item.addItem(self.plain)
        item.addItem(self.renormalised)
        self.errors: SumErrors | None = None
        self.describe = self._describe_bin
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "renormalised"):
            return
        fill = QColor(theme.accent)
        fill.setAlpha(110)
        self.plain.setPen(pg.mkPen(theme.accent, width=1))
        self.plain.setFillBrush(pg.mkBrush(fill))
        self.renormalised.setPen(pg.mkPen(themes.colour(theme, 1), width=2))
        legend = self.getPlotItem().legend
        for _sample, label in legend.items:  # LegendItem.setLabelTextColor does not restyle existing labels
            label.setText(label.text, color=theme.foreground)

    def show_errors(self, s: SumErrors) -> None:
        if s is self.errors:
            return
        self.errors = s
        self.plain.setData(s.edges, s.counts_plain)
        self.renormalised.setData(s.edges, s.counts_renormalised)
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


class PrecisionView(BaseView):
    model: PrecisionModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.scale = ParamSlider(self.model, "scale")
        self.dtype = ParamChoice(self.model, "dtype")
        self.method = ParamChoice(self.model, "method")
        readouts = self.readout_box(("readout.precision.overflow", "readout.precision.breaks",
                                     "readout.precision.underflow"))
        sum_box = self._sum_box()

        # row headers are the plain format names: "(emulated)" would cost the cells 50 px
        self.grid = CellTable(list(DTYPES),
                              [tr(f"param.method.{m}") for m in METHODS], tr("precision.grid.tooltip"))
        self.grid.cellClicked.connect(self._grid_clicked)
        legend = QLabel(tr("precision.grid.legend"))
        legend.setWordWrap(True)
        font = legend.font()
        font.setPointSizeF(font.pointSizeF() * 0.9)
        legend.setFont(font)

        self.overflow = self.add_plot("overflow", OverflowPlot())
        self.sum_plot = self.add_plot("sum_error", SumErrorPlot())
        plots_row = QHBoxLayout()
        plots_row.addWidget(self.overflow, 1)
        plots_row.addWidget(self.sum_plot, 1)

        grid_box = QGroupBox(tr("precision.grid.title"))
        grid_lay = QVBoxLayout(grid_box)
        grid_lay.setContentsMargins(4, 4, 4, 4)
        grid_lay.addWidget(self.grid)
        grid_lay.addWidget(legend)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(grid_box)
        column.addLayout(plots_row, 1)
        column.addWidget(self._mask_box())
        self.arrange([self.editor, self.scale, self.dtype, self.method, readouts, sum_box], right, min_width=300)

    # -- building ----------------------------------------------------------------
    def _sum_box(self) -> QGroupBox:
        box = QGroupBox(tr("precision.sum.group"))
        form = QFormLayout(box)
        self.length = ParamSpin(self.model, "length")
        self.seed = ParamSpin(self.model, "seed")
        form.addRow(tr("param.length.label") + ":", self.length)
        form.addRow(tr("param.seed.label") + ":", self.seed)
        self.add_readouts(form, ("readout.precision.sum_plain", "readout.precision.sum_renormalised"))
        return box

    def _mask_box(self) -> QGroupBox:
        box = QGroupBox(tr("precision.mask.title"))
        lay = QVBoxLayout(box)
        controls = QHBoxLayout()
        controls.addWidget(QLabel(tr("precision.mask.tokens")))
        self.mask_boxes_holder = QWidget()
        self.mask_grid = QGridLayout(self.mask_boxes_holder)
        self.mask_grid.setContentsMargins(0, 0, 0, 0)
        self.mask_boxes: list[QCheckBox] = []
        controls.addWidget(self.mask_boxes_holder, 1)
        self.mask_all = QPushButton(tr("precision.mask.all"))
        self.mask_all.setToolTip(tr("precision.mask.all.tooltip"))
        self.mask_all.clicked.connect(lambda: self._set_masked(range(len(self.scores))))
        self.mask_clear = QPushButton(tr("precision.mask.clear"))
        self.mask_clear.setToolTip(tr("precision.mask.clear.tooltip"))
        self.mask_clear.clicked.connect(lambda: self._set_masked(()))
        self.mask_value = ParamChoice(self.model, "mask_value")
        for w in (self.mask_all, self.mask_clear, self.mask_value):
            controls.addWidget(w)
        lay.addLayout(controls)
        self.mask_table = CellTable(list(DTYPES),
                                    [tr(f"param.mask_value.{v}") for v in MASK_NAMES], tr("precision.mask.tooltip"))
        self.mask_table.cellClicked.connect(self._mask_clicked)
        lay.addWidget(self.mask_table)
        self.mask_detail = QLabel()
        self.mask_detail.setObjectName("mask_detail")
        self.mask_detail.setWordWrap(True)
        self.mask_detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.mask_detail)
        connect_while_alive(self, self.scores.events.entries, self._sync_mask_boxes)
        connect_while_alive(self, self.model.events.masked, self._sync_mask_boxes)
        self._sync_mask_boxes()
        return box

    # -- user actions ------------------------------------------------------------
    def _grid_clicked(self, row: int, col: int) -> None:
        self.model.set_param("dtype", DTYPES[row])
        self.model.set_param("method", METHODS[col])

    def _mask_clicked(self, row: int, col: int) -> None:
        self.model.set_param("dtype", DTYPES[row])
        self.model.set_param("mask_value", MASK_NAMES[col])

    def _set_masked(self, indices) -> None:
        self.model.masked = tuple(sorted(set(indices)))

    def _box_toggled(self, *_args) -> None:
        self._set_masked(i for i, box in enumerate(self.mask_boxes) if box.isChecked())

    def _sync_mask_boxes(self, *_args) -> None:
        labels = self.scores.labels
        if tuple(b.text() for b in self.mask_boxes) != labels:
            for b in self.mask_boxes:
                self.mask_grid.removeWidget(b)
                b.deleteLater()
            self.mask_boxes = []
            for i, label in enumerate(labels):
                b = QCheckBox(label)
                b.setToolTip(tr("precision.mask.token.tooltip"))
                b.toggled.connect(self._box_toggled)
                self.mask_grid.addWidget(b, *divmod(i, MASK_BOXES_PER_ROW))
                self.mask_boxes.append(b)
        masked = set(self.model.masked)
        for i, b in enumerate(self.mask_boxes):
            with signals_blocked(b):
                b.setChecked(i in masked)

    # -- drawing -----------------------------------------------------------------
    def redraw(self) -> None:
        r = self.model.result(self.scores)
        d, m = DTYPES.index(self.model.dtype), METHODS.index(self.model.method)
        self._draw_grid(r)
        self.grid.set_selected(d, m)
        self._draw_mask_table(r)
        self.mask_table.set_selected(d, MASK_NAMES.index(self.model.mask_value))
        self.overflow.show_result(r, self.model.scale, d)
        s = self.model.sum_errors()
        self.sum_plot.show_errors(s)
        self._draw_readouts(r, s, d)

    def _draw_grid(self, r: PrecisionResult) -> None:
        for i, d in enumerate(DTYPES):
            for j, m in enumerate(METHODS):
                w = r.weights[i, j]
                err, total = fmt(r.max_error[i, j], 1), fmt(r.sum_error[i, j], 1)
                nan, inf, zero = int(r.nan_count[i, j]), int(r.inf_count[i, j]), int(r.zero_count[i, j])
                text = "\n".join((weights_line(w), tr("precision.cell.errors", error=err, sum=total),
                                  tr("precision.cell.counts", nan=nan, inf=inf, zero=zero)))
                tip = weights_tooltip(
                    tr("precision.cell.tooltip_head", dtype=tr(f"param.dtype.{d}"), method=tr(f"param.method.{m}")),
                    r.labels, w, d)
                tip += [tr("precision.cell.tooltip_error", error=fmt(r.max_error[i, j], 3)),
                        tr("precision.cell.tooltip_sum", sum=fmt(r.sum_error[i, j], 3))]
                self.grid.set_cell(i, j, text, cell_colour(nan, inf, zero), "\n".join(tip))
        self.grid.fit_height()

    def _draw_mask_table(self, r: PrecisionResult) -> None:
        method = tr(f"param.method.{self.model.method}")
        for i, d in enumerate(DTYPES):
            for k, v in enumerate(MASK_NAMES):
                w = r.mask_weights[i, k]
                nan, zero = int(r.mask_nan[i, k]), int(r.mask_zero[i, k])
                if nan:
                    status = tr("precision.mask.nan", count=nan)
                elif len(w) > 1 and np.all(w == w[0]):
                    status = tr("precision.mask.uniform")
                elif zero:
                    status = tr("precision.mask.zero", count=zero)
                else:
                    status = tr("precision.mask.ok")
                head = tr("precision.cell.tooltip_head", dtype=tr(f"param.dtype.{d}"),
                          method=f"{method}, {tr(f'param.mask_value.{v}')}")
                tip = weights_tooltip(head, r.labels, w, d)
                if not r.masked:
                    tip.append(tr("precision.mask.none"))
                colour = cell_colour(nan, int(np.isinf(w).sum()), zero)
                self.mask_table.set_cell(i, k, status, colour, "\n".join(tip))
        self.mask_table.fit_height()
        d, k = DTYPES.index(self.model.dtype), MASK_NAMES.index(self.model.mask_value)
        masked = ", ".join(r.labels[i] for i in r.masked) or tr("precision.mask.nothing")
        self.mask_detail.setText(tr(
            "precision.mask.detail", dtype=tr(f"param.dtype.{DTYPES[d]}"),
            value=tr(f"param.mask_value.{MASK_NAMES[k]}"), tokens=masked,
            weights=weights_line(r.mask_weights[d, k], DETAIL_WEIGHTS)))

    def _draw_readouts(self, r: PrecisionResult, s: SumErrors, d: int) -> None:
        self.readouts["readout.precision.overflow"].setText(f"{r.overflow[d]:.6g}")
        self.readouts["readout.precision.underflow"].setText(f"{r.underflow[d]:.6g}")
        c = float(r.break_scale[d])
        breaks = self.readouts["readout.precision.breaks"]
        if not math.isfinite(r.max_score):
            breaks.setText(tr("readout.precision.breaks.nonfinite"))
        elif r.max_score <= 0:
            breaks.setText(tr("readout.precision.breaks.never"))
        else:
            broken = bool(np.isinf(compute.exp_in(self.model.scale * r.max_score, DTYPES[d])))
            state = tr(f"readout.precision.breaks.{'broken' if broken else 'fine'}")
            breaks.setText(tr("readout.precision.breaks.value", c=f"{c:.4g}", state=state))
        for key, errors in (("sum_plain", s.plain), ("sum_renormalised", s.renormalised)):
            self.readouts[f"readout.precision.{key}"].setText(tr(
                "readout.precision.sum_value", mean=f"{errors.mean() / EPS32:.3f}", max=f"{errors.max() / EPS32:.3f}"))
