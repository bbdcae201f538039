"""The router tab of the Sampling view: a mixture-of-experts gate, its weights and the load per expert."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gui import theme as themes
from gui.format import fmt
from gui.model.sampling import ROUTER_SHOWN, RouterResult, SamplingModel
from gui.model.texts import tr
from gui.qt import pg
from gui.views.sampling.bars import FitBars
from gui.widgets.heatmap import Heatmap
from gui.widgets.sliders import param_control

ROUTER_PARAMS = ("experts", "router_k", "router_tokens", "gate_temperature")
ROUTER_READOUTS = ("sampling.readout.router_load", "sampling.readout.router_cv2")


class LoadBars(FitBars):
    """Share of the routed slots and of the gate mass per expert, against the balanced share."""

    def __init__(self):
        super().__init__(tr("sampling.router.load.title"), [(tr("sampling.router.load.tokens"), "accent"),
                                                            (tr("sampling.router.load.importance"), "secondary")],
                         y_label=tr("sampling.router.load.y"),
                         value_labels=True)

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        # the balanced share is a dashed line across the bars, named in the legend: a label on the line
        # itself sat among the bars' value labels
        self.ideal = pg.PlotDataItem(np.zeros(0), np.zeros(0), name=tr("sampling.router.ideal"))
        item.addItem(self.ideal)

    def theme_changed(self, theme: themes.Theme) -> None:
        super().theme_changed(theme)
        self.ideal.setPen(pg.mkPen(theme.muted, width=1.5, style=Qt.PenStyle.DashLine))

    def show_result(self, rt: RouterResult) -> None:
        tokens, k = rt.indices.shape
        experts = rt.gates.shape[1]
        with self.batched():
            self.show_bars(tuple(str(e + 1) for e in range(experts)), [rt.load / (tokens * k), rt.importance / tokens])
            self.ideal.setData(np.array([-0.5, experts - 0.5]), np.full(2, 1.0 / experts))


class RouterTab(QWidget):
    """The router's controls and readouts above its gate heatmap and load bars."""

    def __init__(self, model: SamplingModel, readout_box: QWidget, readouts: dict[str, QLabel],
                 message: Callable[[str], object], controls: dict[str, QWidget]):
        super().__init__()
        self.labels = {key: readouts[key] for key in ROUTER_READOUTS}
        box = QGroupBox(tr("sampling.group.router"))
        grid = QGridLayout(box)
        for i, name in enumerate(ROUTER_PARAMS):
            control = controls[name] = param_control(model, name)
            control.message.connect(message)
            grid.addWidget(control, i // 2, i % 2)
        self.gates = Heatmap(tr("sampling.router.gates.title"), diverging=False, value_name=tr("sampling.router.weight"),
                             x_label=tr("sampling.router.gates.x"))
        self.load = LoadBars()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(box)
        lay.addWidget(readout_box)
        plots = QHBoxLayout()
        plots.addWidget(self.gates, 3)
        plots.addWidget(self.load, 2)
        lay.addLayout(plots, 1)

    def show_result(self, rt: RouterResult) -> None:
        experts = rt.gates.shape[1]
        shown = min(ROUTER_SHOWN, rt.gates.shape[0])
        self.gates.set_matrix(rt.dense_rows(shown), tuple(f"t{i + 1}" for i in range(shown)),
                              tuple(str(e + 1) for e in range(experts)))
        self.load.show_result(rt)
        tokens, k = rt.indices.shape
        busiest = int(rt.load.argmax())
        self.labels["sampling.readout.router_load"].setText(tr(
            "sampling.router.busiest", expert=busiest + 1, share=f"{100 * rt.load[busiest] / (tokens * k):.1f}",
            ideal=f"{100 / experts:.1f}"))
        self.labels["sampling.readout.router_cv2"].setText(fmt(rt.importance_cv2, 4))
