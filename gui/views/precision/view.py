"""Precision: the same softmax in float16, bfloat16, float32 and float64, and where each breaks.

The view only builds and wires: each panel draws the model's result in
its ``show_result``.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QSpinBox, QVBoxLayout, QWidget

import compute
from gui.model.precision import DTYPES, EPS32, PrecisionModel, PrecisionResult, SumErrors
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.views.precision.grid import FormatGrid, grid_box
from gui.views.precision.masking import MaskPanel
from gui.views.precision.plots import OverflowPlot, SumErrorPlot
from gui.widgets.sliders import ParamChoice, ParamSlider, ParamSpin


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

        self.grid = FormatGrid(self.model)
        self.overflow = self.add_plot("overflow", OverflowPlot(self.model))
        self.sum_plot = self.add_plot("sum_error", SumErrorPlot())
        self.masking = MaskPanel(self.scores, self.model)
        for plot in (self.overflow, self.sum_plot):  # the grid and the mask table above and below are fixed
            plot.setMinimumHeight(140)  # at 690 px, in Chinese too (its lines are taller)
        plots_row = QHBoxLayout()
        plots_row.addWidget(self.overflow, 1)
        plots_row.addWidget(self.sum_plot, 1)

        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(3)
        column.addWidget(grid_box(self.grid))
        column.addLayout(plots_row, 1)
        column.addWidget(self.masking)
        self.arrange([self.editor, self.scale, self.dtype, self.method, readouts, sum_box], right, min_width=300)

    def _sum_box(self) -> QGroupBox:
        box = QGroupBox(tr("precision.sum.group"))
        form = QFormLayout(box)
        self.length = self._spin("length")
        self.seed = self._spin("seed")
        form.addRow(tr("caption", label=tr("param.length.label")), self.length)
        form.addRow(tr("caption", label=tr("param.seed.label")), self.seed)
        self.add_readouts(form, ("readout.precision.sum_plain", "readout.precision.sum_renormalised"))
        return box

    def _spin(self, name: str) -> ParamSpin:
        spin = ParamSpin(self.model, name)
        spin.setStepType(QSpinBox.StepType.AdaptiveDecimalStepType)
        spin.message.connect(self.status)
        return spin

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        s = self.model.sum_errors()
        self.grid.show_result(r)
        self.masking.show_result(r)
        self.overflow.show_result(r)
        self.sum_plot.show_result(s)
        self._show_readouts(r, s)

    def _show_readouts(self, r: PrecisionResult, s: SumErrors) -> None:
        d = DTYPES.index(self.model.dtype)
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
