"""The Gumbel-softmax tab of the Sampling view: one relaxed sample and how it sharpens as τ falls."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui.model.sampling import TAU_GRID, GumbelResult
from gui.model.texts import tr
from gui.views.sampling.bars import FitBars
from gui.views.sampling.curves import CurvePlot


class GumbelTab(QWidget):
    """The relaxed sample beside its hard one-hot (over the tokens shown), and the sharpening curve."""

    def __init__(self):
        super().__init__()
        self.bars = FitBars(tr("sampling.gumbel.title"), [(tr("sampling.gumbel.relaxed"), "accent"),
                                                         (tr("sampling.gumbel.hard"), "highlight")],
                            y_label=tr("sampling.bars.y"))
        self.sharpening = CurvePlot(
            tr("sampling.sharpening.title"), x_label=tr("sampling.sharpening.x"), y_label=tr("sampling.sharpening.y"),
            x_range=(float(TAU_GRID[0]), float(TAU_GRID[-1])), x_name="τ")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.bars, 3)
        lay.addWidget(self.sharpening, 2)

    def show_result(self, g: GumbelResult) -> None:
        self.bars.show_bars(g.labels, [g.relaxed, g.hard])
        self.sharpening.show_result(g.sharpening)
