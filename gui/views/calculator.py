"""Calculator: type scores, follow softmax one step at a time."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter

from gui.format import fmt
from gui.model.calculator import CalculatorModel
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.widgets.bar_chart import BarChart
from gui.widgets.sliders import ParamSlider
from gui.widgets.step_table import StepTable


class CalculatorView(BaseView):
    model: CalculatorModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.temperature = ParamSlider(self.model, "temperature")
        readouts = self.readout_box(("readout.entropy", "readout.perplexity", "readout.max_weight"))

        self.bars = self.add_plot("probs", BarChart(tr("plot.probs.title"), [("α", "accent")],
                                                    y_label=tr("plot.probs.y")))
        self.steps = StepTable()
        plots = QSplitter(Qt.Orientation.Vertical)
        plots.addWidget(self.bars)
        plots.addWidget(self.steps)
        plots.setSizes([400, 220])
        plots.setChildrenCollapsible(False)
        self.arrange([self.editor, self.temperature, readouts], plots)

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        self.bars.set_data(r.labels, [r.steps.probs])
        self.steps.show_table(r.labels, r.table())
        self.readouts["readout.entropy"].setText(f"{fmt(r.entropy)} nats")
        self.readouts["readout.perplexity"].setText(fmt(r.perplexity))
        self.readouts["readout.max_weight"].setText(
            "NaN" if r.argmax is None else f"{fmt(r.max_weight)} ({r.labels[r.argmax]})"
        )
