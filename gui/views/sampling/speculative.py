"""The speculative-decoding tab of the Sampling view: a draft q against the target p, and N simulated steps.

Its controls (draft temperature, draft noise, N), three readouts (the
acceptance rate Σ min(p, q), the share accepted in the N steps, the χ² of
the output against p) and four plots: p beside q, the residual beside the
per-token acceptance, the output counts against N·p, and the acceptance
rate against the draft temperature with the current one marked.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from gui import theme as themes
from gui.format import fmt
from gui.model.sampling import CurveResult, SamplingModel
from gui.model.sampling.speculative import DRAFT_T, SpeculativeResult
from gui.model.texts import tr
from gui.qt import pg
from gui.views.sampling.bars import FitBars
from gui.views.sampling.curves import CurvePlot
from gui.widgets.sliders import param_control

SPEC_PARAMS = ("draft_temperature", "draft_noise", "spec_steps")
SPEC_READOUTS = ("sampling_model.spec.readout.rate", "sampling_model.spec.readout.observed",
                 "sampling_model.spec.readout.chi2")


class RatePlot(CurvePlot):
    """Σ min(p, q) against the draft temperature; a dashed line at the target's own T."""

    def __init__(self):
        super().__init__(tr("sampling_model.spec.curve.title"), x_label=tr("sampling_model.spec.curve.x"),
                         y_label=tr("sampling_model.spec.curve.y"), x_range=(float(DRAFT_T[0]), float(DRAFT_T[-1])),
                         x_name=tr("sampling_model.spec.curve.x"))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setYRange(0, 1.05, padding=0)
        self.target = pg.InfiniteLine(angle=90, movable=False, label=tr("sampling_model.spec.curve.target"),
                                      labelOpts={"position": 0.12, "anchors": [(0, 1), (0, 1)]})
        item.addItem(self.target, ignoreBounds=True)

    def theme_changed(self, theme: themes.Theme) -> None:
        super().theme_changed(theme)
        self.target.setPen(pg.mkPen(theme.muted, width=1.5, style=Qt.PenStyle.DashLine))
        self.target.label.setColor(theme.muted)

    def show_target(self, t: float) -> None:
        self.target.setValue(math.log10(t))


class SpeculativeTab(QWidget):
    """The draft's controls and readouts above p vs q, the residual, the N steps and the rate curve."""

    def __init__(self, model: SamplingModel, readout_box: QWidget, readouts: dict[str, QLabel],
                 message: Callable[[str], object], controls: dict[str, QWidget]):
        super().__init__()
        self.labels = {key: readouts[key] for key in SPEC_READOUTS}
        box = QGroupBox(tr("sampling_model.spec.group"))
        box.setToolTip(tr("sampling_model.spec.group.tooltip"))
        grid = QGridLayout(box)
        for i, name in enumerate(SPEC_PARAMS):
            control = controls[name] = param_control(model, name)
            control.message.connect(message)
            grid.addWidget(control, i // 2, i % 2)
        self.pq = FitBars(tr("sampling_model.spec.pq.title"), [(tr("sampling_model.spec.p"), "accent"),
                                                               (tr("sampling_model.spec.q"), "secondary")],
                          y_label=tr("sampling.bars.y"))
        self.residual = FitBars(tr("sampling_model.spec.residual.title"),
                                [(tr("sampling_model.spec.residual"), "highlight"),
                                 (tr("sampling_model.spec.accept"), "secondary")],
                                y_label=tr("sampling.bars.y"))
        self.steps = FitBars(tr("sampling_model.spec.steps.title"), [(tr("sampling.draws.expected"), "secondary"),
                                                                     (tr("sampling_model.spec.out"), "accent")],
                             y_label=tr("sampling.draws.y"), value_name=tr("sampling.draws.count"), percent=False)
        self.rate = RatePlot()
        plots = QGridLayout()
        for i, plot in enumerate((self.pq, self.residual, self.steps, self.rate)):
            plots.addWidget(plot, i // 2, i % 2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(box)
        lay.addWidget(readout_box)
        lay.addLayout(plots, 1)

    def show_result(self, s: SpeculativeResult) -> None:
        ids = s.shown
        self.pq.show_bars(s.labels, [s.p[ids], s.q[ids]])
        self.residual.show_bars(s.labels, [s.residual[ids], s.accept[ids]])
        self.steps.show_bars(s.labels, [s.n * s.p[ids], s.counts[ids].astype(float)])
        self.rate.show_result(CurveResult(s.curve_t, s.curve_rate, s.draft_t, s.rate))
        self.rate.show_target(s.target_t)
        rd = self.labels
        rd["sampling_model.spec.readout.rate"].setText(fmt(s.rate, 4))
        rd["sampling_model.spec.readout.observed"].setText(tr(
            "sampling_model.spec.observed", share=fmt(s.observed_rate, 4), accepted=f"{s.n - s.rejected:,}",
            n=f"{s.n:,}"))
        p = "< 1e-300" if s.p_value < 1e-300 else fmt(s.p_value, 3)
        rd["sampling_model.spec.readout.chi2"].setText(tr("sampling.chi2", chi2=fmt(s.chi2, 4), dof=s.dof, p=p))
