"""The Attention view's panels: each shows one part of an AttentionResult (one ``show`` each)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QStackedWidget, QWidget

import compute
from gui.format import fmt
from gui.model.attention import AttentionResult
from gui.model.attention.core import number_labels
from gui.model.texts import tr
from gui.views.attention.overview import ModelOverview
from gui.views.attention.plots import HeadsGrid, HistogramPlot, SweepPlot
from gui.widgets.bar_chart import BarChart
from gui.widgets.heatmap import WORDS_ACROSS, PooledHeatmap
from gui.widgets.step_table import StepTable
from gui.widgets.ticks import label_ticks


class WeightsPanel(QStackedWidget):
    """The weight matrix of the shown head, or (head 0) every head in a grid of small tiles
    (with a real model: every layer and head, :class:`ModelOverview`)."""

    def __init__(self):
        super().__init__()
        self.auto_levels = False
        self.heatmap = PooledHeatmap(tr("attention.weights.title"), diverging=False, annotate=True,
                                     value_name=tr("attention.weights.value"))
        self.grid = HeadsGrid()
        self.overview = ModelOverview()
        self.addWidget(self.heatmap)
        self.addWidget(self.grid)
        self.addWidget(self.overview)

    def show(self, r: AttentionResult) -> None:  # noqa: A003 - the panels' one method
        c, h = r.core, r.head
        self.heatmap.show_matrix(c.head_weights(h), c.q_labels, c.k_labels, masked=~c.allowed[h],
                                 auto_levels=self.auto_levels)
        self.heatmap.set_row(r.query)
        if c.real is not None:
            self.heatmap.set_title(tr("models.attention.weights.title", layer=c.layer + 1, head=h + 1, heads=c.heads))
        else:
            self.heatmap.set_title(tr("attention.weights.title_head", head=h + 1, heads=c.heads))
        if r.all_heads and c.real is not None:
            self.overview.show_weights(c.real.weights, c.real.mask[:, None], auto_levels=self.auto_levels)
            self.setCurrentWidget(self.overview)
        elif r.all_heads:
            self.grid.show_heads(c.weights, c.allowed, c.q_labels, c.k_labels, query=r.query,
                                 auto_levels=self.auto_levels)
            self.setCurrentWidget(self.grid)
        else:
            self.setCurrentWidget(self.heatmap)


class RowPanel:
    """The selected query row: its weights as bars and its softmax steps as a table."""

    def __init__(self):
        self.auto_levels = False
        self.bars = BarChart(tr("attention.row.title", label="1"), [("α", "accent")], value_name="α")
        self.steps = StepTable()
        self._ticks_for: tuple[str, ...] = ()

    def show(self, r: AttentionResult) -> None:
        c = r.core
        labels_k = c.k_labels
        self.bars.set_title(tr("attention.row.title", label=c.q_labels[r.query]))
        top = float(r.row.max()) if r.row.size else 1.0
        with self.bars.batched():  # one label layout and one range move for the bars and the range
            self.bars.set_data(labels_k, [r.row])  # new labels: the chart puts its own ticks back
            if len(labels_k) > WORDS_ACROSS and labels_k != self._ticks_for:
                self.bars.getPlotItem().getAxis("bottom").setTicks(
                    [label_ticks(len(labels_k), labels_k, WORDS_ACROSS, offset=0.0)])
            self._ticks_for = labels_k  # the same labels keep the same ticks: no new axis picture
            hi = 1.12 if top > 0.25 or not self.auto_levels else top * 1.15
            self.bars.set_y_range(-0.01 * hi / 1.12, hi)  # the margin below 0 scales with the range
        self.steps.show_table(labels_k, r.table())


class ScoresPanel:
    """The raw Q Kᵀ of the shown head, and every score entry's histogram with and without the scale."""

    def __init__(self):
        self.heatmap = PooledHeatmap(tr("attention.scores.title"), diverging=True,
                                     value_name=tr("attention.scores.value"))
        self.histogram = HistogramPlot()

    def show(self, r: AttentionResult) -> None:
        c, h = r.core, r.head
        self.heatmap.show_matrix(c.raw[h], c.q_labels, c.k_labels, masked=~c.allowed[h])
        self.heatmap.set_row(r.query)
        self.show_statistics(r)

    def show_statistics(self, r: AttentionResult) -> None:
        """The histograms (a partial core has none yet: the last ones stay, faded, until they come)."""
        c = r.core
        self.histogram.set_stale(not c.statistics)
        if c.statistics:
            self.histogram.set_data(c.hist_edges, c.hist_raw, c.hist_scaled, c.std_raw, c.std_scaled)


class OutputPanel(PooledHeatmap):
    """The output (weights × V) of the shown head."""

    def __init__(self):
        super().__init__(tr("attention.output.title"), diverging=True, value_name=tr("attention.output.value"))

    def show(self, r: AttentionResult) -> None:  # noqa: A003
        c, h = r.core, r.head
        output = c.head_output(h)
        self.show_matrix(output, c.q_labels, number_labels(output.shape[1]))
        self.set_row(r.query)


class Readouts:
    """Scale, score spread, the selected row, fully masked rows and memory, as text."""

    KEYS = ("attention.readout.scale", "attention.readout.std", "attention.readout.row",
            "attention.readout.masked", "attention.readout.memory")

    def __init__(self, labels: dict[str, QLabel]):
        self.labels = labels

    def show(self, r: AttentionResult) -> None:
        c = r.core
        d = c.q.shape[2]
        how = {"sqrt_dk": f"1/√{d} = {fmt(c.scale, 4)}", "none": tr("attention.readout.scale_none"),
               "custom": f"1/T = {fmt(c.scale, 4)}"}[r.scaling]
        self.labels["attention.readout.scale"].setText(how)
        std = self.labels["attention.readout.std"]
        std.setEnabled(c.statistics)  # a partial core's spreads are still to come: the last ones stay, greyed
        if c.statistics:
            std.setText(f"{fmt(c.std_raw, 2)} → {fmt(c.std_scaled, 2)}")
        probs = r.steps.probs
        if np.isnan(probs).any():
            self.labels["attention.readout.row"].setText(tr("attention.row.masked"))
        else:
            ent = float(compute.entropy(probs))
            self.labels["attention.readout.row"].setText(f"max {fmt(probs.max())}, H {fmt(ent)}")
        empty = r.masked_row_indices
        self.labels["attention.readout.masked"].setText(
            tr("attention.masked.none") if not empty else
            tr("attention.masked.rows", count=len(empty), rows=", ".join(c.q_labels[i] for i in empty[:8])
               + (" …" if len(empty) > 8 else "")))
        self.labels["attention.readout.memory"].setText(f"{c.memory / 1024**2:.2f} MiB")


class SweepPanel:
    """The d_k sweep's plot, and its progress bar with Cancel and Run."""

    def __init__(self):
        self.plot = SweepPlot()
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setFormat(tr("attention.sweep.progress"))
        self.bar.setToolTip(tr("attention.sweep.progress.tooltip"))
        self.cancel = QPushButton(tr("attention.sweep.cancel"))
        self.cancel.setEnabled(False)
        self.run = QPushButton(tr("attention.sweep.run"))
        self.run.setToolTip(tr("attention.sweep.run.tooltip"))
        self.row = QWidget()
        lay = QHBoxLayout(self.row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.bar, 1)
        lay.addWidget(self.cancel)
        lay.addWidget(self.run)

    def show(self, sweep: dict | None, n: int, d_k: int) -> None:
        """Draw ``sweep`` (computed at ``n`` keys) or clear it, and mark the current d_k."""
        self.plot.set_sweep(sweep, n)
        self.plot.mark(d_k)

    def started(self) -> None:
        self.bar.setValue(0)
        self.bar.setFormat(tr("attention.sweep.progress"))
        self.cancel.setEnabled(True)

    def progressed(self, fraction: float) -> None:
        self.bar.setValue(round(100 * fraction))

    def finished(self, n: int | None) -> None:
        """The sweep for ``n`` landed (None: it was cancelled)."""
        self.cancel.setEnabled(False)
        if n is None:
            self.bar.setFormat(tr("attention.sweep.cancelled"))
        else:
            self.bar.setValue(100)
            self.bar.setFormat(tr("attention.sweep.done", n=n))
