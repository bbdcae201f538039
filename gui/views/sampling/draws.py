"""The draws panel of the Sampling view: observed against expected counts, the readouts, the progress row.

A :class:`DrawState` is what the panels are handed: the knobs' result and
the draws of the current inputs, or None while they are being made in the
background (or after the user cancelled them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from gui.format import fmt
from gui.model.sampling import DrawResult, SamplingResult
from gui.model.texts import tr
from gui.views.sampling.bars import StageBars

READOUTS = ("sampling.readout.kept", "sampling.readout.entropy", "sampling.readout.perplexity",
            "sampling.readout.chi2")


@dataclass(frozen=True, eq=False)
class DrawState:
    result: SamplingResult
    n: int  # the draws asked for
    draws: DrawResult | None  # None while drawing in the background, or after a cancel
    cancelled: bool = False  # the user cancelled the draws of these inputs


class DrawPlot(StageBars):
    """Observed counts beside the expected ones (N times the filtered probabilities)."""

    def __init__(self):
        super().__init__(tr("sampling.draws.title"), [(tr("sampling.draws.expected"), "secondary"),
                                                      (tr("sampling.draws.observed"), "accent")],
                         y_label=tr("sampling.draws.y"), value_name=tr("sampling.draws.count"), percent=False)

    def show_result(self, state: DrawState) -> None:
        r = state.result
        ids = r.shown
        expected = state.n * r.filtered[ids]
        observed = np.zeros_like(expected) if state.draws is None else state.draws.counts[ids].astype(float)
        self.show_stage_bars(r.labels, [expected, observed], r.stage[ids])


class Readouts:
    """Tokens kept, entropy and perplexity before → after the cut, and the chi-square of the draws."""

    def __init__(self, labels: dict[str, QLabel]):
        self.labels = {key: labels[key] for key in READOUTS}

    def show_result(self, state: DrawState) -> None:
        r, d = state.result, state.draws
        rd = self.labels
        rd["sampling.readout.kept"].setText(tr("sampling.kept", kept=f"{r.kept:,}", v=f"{r.size:,}"))
        rd["sampling.readout.entropy"].setText(f"{fmt(r.entropy)} → {fmt(r.entropy_filtered)} nats")
        rd["sampling.readout.perplexity"].setText(f"{fmt(r.perplexity)} → {fmt(r.perplexity_filtered)}")
        if d is not None:
            p = "< 1e-300" if d.p_value < 1e-300 else fmt(d.p_value, 3)
            rd["sampling.readout.chi2"].setText(tr("sampling.chi2", chi2=fmt(d.chi2, 4), dof=d.dof, p=p))
        else:
            rd["sampling.readout.chi2"].setText(tr("sampling.draws.cancelled" if state.cancelled
                                                   else "sampling.draws.waiting"))


class DrawProgress(QWidget):
    """A progress bar and a Cancel button, shown while draws run in the background."""

    cancel = Signal()

    def __init__(self):
        super().__init__()
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setFormat(tr("sampling.draws.progress"))
        self.bar.setToolTip(tr("sampling.draws.progress.tooltip"))
        self.button = QPushButton(tr("sampling.draws.cancel"))
        self.button.setToolTip(tr("sampling.draws.cancel.tooltip"))
        self.button.clicked.connect(self.cancel)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.bar, 1)
        lay.addWidget(self.button)
        self.hide()

    def show_busy(self, busy: bool) -> None:
        """Show (from 0 %) while wanted draws run or wait; hide when they are done or cancelled."""
        if busy:
            self.bar.setValue(0)
        self.setVisible(busy)

    def show_fraction(self, fraction: float) -> None:
        self.bar.setValue(round(100 * fraction))
