"""Temperature: one row of scores at T beside the same row at T = 1."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.temperature import TemperatureModel
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets.bar_chart import BarChart
from gui.widgets.line_labels import LineLabels
from gui.widgets.sliders import ParamSlider, ValueSlider
from gui.widgets.temperature_curve import TemperatureCurve

GAP_MAX = 10.0


class EntropyPlot(TemperatureCurve):
    """Entropy against log T, with the current T marked and both limits drawn."""

    def __init__(self):
        super().__init__(tr("plot.entropy.title"), y_label=tr("plot.entropy.y"), describe_y="H")

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        self.cold = pg.InfiniteLine(angle=0, movable=False, label="")
        self.hot = pg.InfiniteLine(angle=0, movable=False, label="")
        for line in (self.cold, self.hot):
            item.addItem(line, ignoreBounds=True)
        # entropy grows with T: the curve runs along the one-hot limit on the left and along the
        # uniform limit on the right, so each label ends up at the other end, clear of the curve
        self.line_labels = LineLabels(item, [self.hot, self.cold], lambda: [self.curve], [self.now_line])

    def theme_changed(self, theme: themes.Theme) -> None:
        super().theme_changed(theme)
        for line in (self.cold, self.hot):
            line.setPen(pg.mkPen(theme.muted, width=1, style=pg.QtCore.Qt.PenStyle.DotLine))
            line.label.setColor(theme.muted)

    def set_limits(self, h_cold: float, h_hot: float, n: int) -> None:
        self.cold.setValue(0.0 if not np.isfinite(h_cold) else h_cold)
        self.hot.setValue(h_hot)
        for line, text in ((self.cold, tr("plot.entropy.cold", h=fmt(h_cold))),
                           (self.hot, tr("plot.entropy.hot", n=n, h=fmt(h_hot)))):
            if line.label.format != text:  # the same text: nothing to lay out again
                line.label.setFormat(text)
        y_range = (0, max(h_hot, 1e-3) * 1.12)
        if y_range != getattr(self, "_y_range", None):
            self._y_range = y_range
            self.getPlotItem().setYRange(*y_range, padding=0)
        self.line_labels.place()


class TemperatureView(BaseView):
    model: TemperatureModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.temperature = ParamSlider(self.model, "temperature")
        self.scale = ParamSlider(self.model, "scale")
        self.gap = ValueSlider(tr("param.gap.label"), 0.0, GAP_MAX, 1.0,
                               tooltip=tr("param.gap.tooltip"), spin_limits=(0.0, 1e6))
        self.gap.valueEdited.connect(self._gap_edited)
        connect_while_alive(self, self.scores.events.entries, self._sync_gap)
        self._sync_gap()
        readouts = self.readout_box(("readout.entropy", "readout.ratio"))

        self.bars = self.add_plot("bars", BarChart(
            tr("plot.compare.title"),
            [(tr("plot.compare.current", t="1"), "accent"), (tr("plot.compare.t1"), "secondary")],
            y_label=tr("plot.probs.y"),
        ))
        self.entropy = self.add_plot("entropy", EntropyPlot())
        plots = QWidget()
        column = QVBoxLayout(plots)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.bars, 1)
        column.addWidget(self.entropy, 1)
        self.arrange([self.editor, self.temperature, self.scale, self.gap, readouts], plots, min_width=320)

    def _gap_edited(self, value: float) -> None:
        if self.scores.gap is not None:
            self.scores.set_gap(value)

    def _sync_gap(self, *_args) -> None:
        gap = self.scores.gap
        self.gap.setEnabled(gap is not None)
        self.gap.setToolTip(tr("param.gap.tooltip") if gap is not None else tr("param.gap.unavailable"))
        if gap is not None:
            self.gap.setValue(gap)

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        t = self.model.temperature
        self.bars.set_series_name(0, tr("plot.compare.current", t=f"{t:.3g}"))
        self.bars.set_data(r.labels, [r.probs, r.probs_t1])
        self.entropy.set_curve(r.curve_t, r.curve_entropy, t, r.entropy)
        self.entropy.set_limits(r.entropy_cold, r.entropy_hot, len(r.labels))
        self.readouts["readout.entropy"].setText(f"{fmt(r.entropy)} nats")
        if r.ratio is None:
            self.readouts["readout.ratio"].setText(tr("param.gap.unavailable"))
        else:
            self.readouts["readout.ratio"].setText(tr(
                "readout.ratio.value", ratio=fmt(r.ratio), gap=fmt(r.gap), t=f"{t:.3g}",
                formula=fmt(r.ratio_formula)))
