"""Gradients: the softmax Jacobian, the cross-entropy gradient, saturation."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QWidget

from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.gradients import JACOBIAN_LIMIT, GradientsModel
from gui.model.temperature import CURVE_T
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.widgets.bar_chart import BarChart
from gui.widgets.heatmap import Heatmap
from gui.widgets.signals import signals_blocked
from gui.widgets.sliders import ParamChoice, ParamSlider
from gui.widgets.temperature_curve import TemperatureCurve


class SaturationPlot(TemperatureCurve):
    """The largest Jacobian entry against log T, with the current T marked."""

    def __init__(self):
        super().__init__(tr("gradients.saturation.title"), y_label=tr("gradients.saturation.y"),
                         describe_y="max |∂α/∂s|")

    def set_curve(self, t: np.ndarray, y: np.ndarray, t_now: float, y_now: float) -> None:
        super().set_curve(t, y, t_now, y_now)
        ok = np.isfinite(y)
        top = float(y[ok].max()) if ok.any() else 1.0
        self.getPlotItem().setYRange(0, max(top, y_now if math.isfinite(y_now) else 0, 1e-6) * 1.1, padding=0)


class GradientsView(BaseView):
    model: GradientsModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.temperature = ParamSlider(self.model, "temperature")
        self.smoothing = ParamSlider(self.model, "label_smoothing")
        self.convention = ParamChoice(self.model, "convention")
        self.target = QComboBox()
        self.target.setToolTip(tr("param.target.tooltip"))
        self.target.activated.connect(lambda i: self.model.set_param("target", i + 1))
        target_row = QWidget()
        row = QHBoxLayout(target_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel(tr("param.target.label")))
        row.addWidget(self.target, 1)
        connect_while_alive(self, self.scores.events.entries, self._sync_targets)
        connect_while_alive(self, self.model.events.target, self._sync_targets)
        self._sync_targets()
        readouts = self.readout_box(("readout.loss", "readout.max_jacobian", "readout.row_sums"))

        self.heatmap = self.add_plot("jacobian", Heatmap(tr("gradients.heatmap.title"),
                                                         value_name=tr("gradients.heatmap.value")))
        self.heatmap.cellClicked.connect(lambda _i, j: self.model.set_param("column", j + 1))
        self.column_bars = self.add_plot("column", BarChart(
            tr("gradients.column.title", label=""), [("∂α/∂s", "accent")],
            value_name=tr("gradients.column.value"), percent=False,
        ))
        self.ce_bars = self.add_plot("cross_entropy", BarChart(
            tr("gradients.ce.title"),
            [(tr("gradients.ce.p"), "secondary"), (tr("gradients.ce.y"), 1), (tr("gradients.ce.grad"), "accent")],
            value_labels=False, y_range=(-1.05, 1.4), legend_columns=3,
            value_name=tr("gradients.ce.value"), percent=False,
        ))
        self.saturation = self.add_plot("saturation", SaturationPlot())
        plots = QWidget()
        grid = QGridLayout(plots)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.heatmap, 0, 0)
        grid.addWidget(self.column_bars, 0, 1)
        grid.addWidget(self.ce_bars, 1, 0)
        grid.addWidget(self.saturation, 1, 1)
        grid.setColumnStretch(0, 3)  # the heatmap shares its width with a colour bar
        grid.setColumnStretch(1, 2)
        self.arrange([self.editor, self.temperature, target_row, self.smoothing, self.convention, readouts],
                     plots, min_width=320)

    def _sync_targets(self, *_args) -> None:
        labels = self.scores.labels
        with signals_blocked(self.target):
            if tuple(self.target.itemText(i) for i in range(self.target.count())) != labels:
                self.target.clear()
                self.target.addItems(list(labels))
            self.target.setCurrentIndex(min(self.model.target, len(labels)) - 1)

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        if r.too_large:  # no n x n matrix: one empty cell under a title that says why
            self.heatmap.set_title(tr("gradients.heatmap.too_large", n=len(r.labels), limit=JACOBIAN_LIMIT))
            self.heatmap.set_matrix(np.full((1, 1), np.nan), ("",), ("",))
            self.heatmap.set_highlight(None)
            self.heatmap.setToolTip(tr("gradients.heatmap.too_large.tooltip", n=len(r.labels), limit=JACOBIAN_LIMIT))
        else:
            self.heatmap.set_title(tr("gradients.heatmap.title"))
            self.heatmap.setToolTip("")
            self.heatmap.set_matrix(r.jacobian, r.labels, r.labels)
            self.heatmap.set_highlight(r.column)
        self.column_bars.set_title(tr("gradients.column.title", label=r.labels[r.column]))
        finite = np.abs(r.column_values[np.isfinite(r.column_values)])
        top = float(finite.max()) if finite.size and finite.max() > 0 else 0.25
        with self.column_bars.batched():  # one label layout and one range move for both
            self.column_bars.set_data(r.labels, [r.column_values])
            self.column_bars.set_y_range(-1.15 * top, 1.15 * top)
        self.ce_bars.set_data(r.labels, [r.probs, r.smoothed, r.grad])
        self.saturation.set_curve(CURVE_T, r.curve_max, self.model.temperature, r.max_entry)
        self.readouts["readout.loss"].setText(f"{fmt(r.loss, 4)} nats")
        self.readouts["readout.max_jacobian"].setText(fmt(r.max_entry, 4))
        sums = r.row_sums
        self.readouts["readout.row_sums"].setText(
            "NaN" if np.isnan(sums).any() else f"max |Σⱼ| = {np.abs(sums).max():.1e}")

