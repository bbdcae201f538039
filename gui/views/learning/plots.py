"""The Learning view's Train and Calibrate panels: each draws one result in ``show_result``."""

from __future__ import annotations

import math

import numpy as np

from compute import TrainRun
from gui import theme as themes
from gui.format import fmt
from gui.model.learning.results import CalibrationResult
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.bar_chart import BarChart
from gui.widgets.curves import Curves


def _epoch_curves(key: str, series: tuple[tuple[str, str, str], ...], *, log_y: bool = False) -> Curves:
    return Curves(tr(f"learning.plot.{key}"), [(tr(name), role, style) for name, role, style in series],
                  x_label=tr("learning.axis.epoch"), y_label=tr(f"learning.axis.{key}"), log_y=log_y,
                  legend_columns=2, x_name=tr("learning.axis.epoch"), y_name=tr(f"learning.axis.{key}"))


class TrainPanels:
    """Loss, accuracy, the largest logit norm and the gradient reaching the true class, against the epoch."""

    def __init__(self) -> None:
        self.loss = _epoch_curves("loss", (("learning.series.train", "accent", "solid"),
                                           ("learning.series.val", "secondary", "dash")), log_y=True)
        self.accuracy = _epoch_curves("accuracy", (("learning.series.train", "accent", "solid"),
                                                   ("learning.series.val", "secondary", "dash")))
        self.norm = _epoch_curves("logit_norm", (("learning.series.max_norm", "accent", "solid"),
                                                 ("learning.series.mean_norm", "secondary", "dash")))
        self.grad = _epoch_curves("grad_true", (("learning.series.ce", "accent", "solid"),
                                                ("learning.series.mse", "secondary", "dash")), log_y=True)

    def plots(self) -> dict[str, Curves]:
        return {"loss": self.loss, "accuracy": self.accuracy, "logit_norm": self.norm, "grad_true": self.grad}

    def show_result(self, run: TrainRun | None, epoch: int, epochs: int) -> None:
        for plot in self.plots().values():
            plot.getPlotItem().setXRange(0, max(epochs, 1), padding=0.02)
        if run is None:
            for plot in self.plots().values():
                for i in range(len(plot.curves)):
                    plot.set_curve(i, np.zeros(0), np.zeros(0))
                plot.set_now(None)
            return
        h = run.history
        x = np.arange(run.epochs_done + 1.0)
        pairs = {"loss": ("train_loss", "val_loss"), "accuracy": ("train_accuracy", "val_accuracy"),
                 "logit_norm": ("max_logit_norm", "mean_logit_norm"), "grad_true": ("grad_true_ce", "grad_true_mse")}
        for key, plot in self.plots().items():
            for i, column in enumerate(pairs[key]):
                plot.set_curve(i, x, h[column])
            plot.set_now(min(epoch, run.epochs_done))
        self.accuracy.set_y_range(0.0, 1.0)


class ReliabilityPlot(Curves):
    """Accuracy against confidence per bin: bars at the temperature set by hand, points before and after
    temperature scaling, and the diagonal a calibrated model would follow."""

    def __init__(self) -> None:
        super().__init__(tr("learning.plot.reliability"),
                         [(tr("learning.series.before"), "secondary", "dash"),
                          (tr("learning.series.fitted"), "accent", "solid"),
                          (tr("learning.series.diagonal"), "muted", "dot")],
                         x_label=tr("learning.axis.confidence"), y_label=tr("learning.axis.bin_accuracy"),
                         legend_columns=2, x_name=tr("learning.axis.confidence"),
                         y_name=tr("learning.axis.bin_accuracy"), x_range=(0.0, 1.0))
        item = self.getPlotItem()
        self.bars = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.1)
        self.bars.setZValue(-2)
        item.addItem(self.bars)
        if item.legend is not None:
            item.legend.addItem(self.bars, tr("learning.series.manual"))
        self.set_curve(2, np.array([0.0, 1.0]), np.array([0.0, 1.0]))
        self.set_y_range(0.0, 1.0)
        self.theme_changed(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        super().theme_changed(theme)
        if hasattr(self, "bars"):
            colour = pg.mkColor(theme.muted)
            colour.setAlpha(90)
            self.bars.setOpts(brush=pg.mkBrush(colour), pen=pg.mkPen(theme.muted, width=1))
        for curve in self.curves[:2]:
            curve.setSymbol("o")
            curve.setSymbolSize(6)
            curve.setSymbolPen(curve.opts["pen"])

    def show_result(self, r: CalibrationResult) -> None:
        edges = r.manual.bins.edges
        centres = (edges[:-1] + edges[1:]) / 2
        acc = np.nan_to_num(r.manual.bins.accuracy)
        unchanged.set_opts(self.bars, x=centres, height=acc, width=float(edges[1] - edges[0]) * 0.9)
        for i, report in enumerate((r.before, r.after)):
            self.set_curve(i, report.bins.confidence, report.bins.accuracy)


class BinCounts(BarChart):
    """How many test predictions fall in each confidence bin, before and after scaling and by hand."""

    def __init__(self) -> None:
        super().__init__(tr("learning.plot.bin_counts"),
                         [(tr("learning.series.before"), "secondary"), (tr("learning.series.fitted"), "accent"),
                          (tr("learning.series.manual"), "muted")],
                         y_label=tr("learning.axis.count"), percent=False, value_name=tr("learning.axis.count"),
                         legend_columns=3)

    def show_result(self, r: CalibrationResult) -> None:
        edges = r.before.bins.edges
        labels = [f"{edges[i]:.2g}–{edges[i + 1]:.2g}" for i in range(len(edges) - 1)]
        counts = [rep.bins.counts.astype(float) for rep in (r.before, r.after, r.manual)]
        top = max(float(max(c.max() for c in counts)), 1.0)
        with self.batched():  # the labels laid out once, not after the bars, the x range and the y range each
            self.set_data(labels, counts)
            self.set_y_range(0.0, top * 1.15)


class TemperaturePlot(Curves):
    """A quantity of the calibrated model against T (log axis): the fitted T and the T set by hand marked."""

    def __init__(self, key: str, series: tuple[tuple[str, str, str], ...]) -> None:
        super().__init__(tr(f"learning.plot.{key}"), [(tr(n), role, style) for n, role, style in series],
                         x_label=tr("learning.axis.temperature"), y_label=tr(f"learning.axis.{key}"), log_x=True,
                         x_range=(0.1, 10.0), legend_columns=2, x_name="T", y_name=tr(f"learning.axis.{key}"))
        self.fitted_line = self.add_line(angle=90, position=0.9)

    def show_curves(self, t: np.ndarray, ys: list[np.ndarray], fitted: float, manual: float) -> None:
        for i, y in enumerate(ys):
            self.set_curve(i, t, y)
        self.set_line(self.fitted_line, fitted, tr("learning.line.fitted", t=fmt(fitted, 3)))
        self.set_now(manual)
        finite = np.concatenate([y[np.isfinite(y)] for y in ys])
        if finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            self.set_y_range(min(0.0, lo), hi * 1.05 if hi > 0 else 1.0)


class CalibratePanels:
    def __init__(self) -> None:
        self.reliability = ReliabilityPlot()
        self.counts = BinCounts()
        self.ece = TemperaturePlot("ece", (("learning.series.test", "accent", "solid"),))
        self.nll = TemperaturePlot("nll", (("learning.series.test", "accent", "solid"),
                                           ("learning.series.val", "secondary", "dash")))

    def plots(self) -> dict:
        return {"reliability": self.reliability, "bin_counts": self.counts, "ece_curve": self.ece,
                "nll_curve": self.nll}

    def show_result(self, r: CalibrationResult) -> None:
        self.reliability.show_result(r)
        self.counts.show_result(r)
        self.ece.show_curves(r.temperatures, [r.ece], r.fitted_t, r.manual_t)
        nll_cap = 3 * float(np.nanmin(r.nll)) if np.isfinite(np.nanmin(r.nll)) else math.inf
        self.nll.show_curves(r.temperatures, [np.minimum(r.nll, max(nll_cap, 1.0)),
                                              np.minimum(r.val_nll, max(nll_cap, 1.0))], r.fitted_t, r.manual_t)

