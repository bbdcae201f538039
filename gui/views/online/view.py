"""Online softmax: the kernels' algorithm, step by step (sequential, tree, attention tiles).

The view only builds and wires: the parameter controls come from the model's
metadata (shown where ``model.applies``, ranged by ``model.bounds``), the
Transport steps through the run, and each panel draws the model's result in
its ``show_result``.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gui.binding import connect_while_alive
from gui.model.online import OnlineModel
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.views.online.attention_plots import OutputHeatmap, RescaleBars, RunningLines, TileHeatmap
from gui.views.online.readouts import KEYS, AttentionReadouts, PassTable, RowReadouts
from gui.views.online.row_plots import ComparePlot, RowPlot, StepCurve, TreePlot
from gui.widgets.plot import Plot
from gui.widgets.sliders import ParamSpin, param_control
from gui.widgets.transport import Transport

#: The controls above the score table, and those below it.
TOP_PARAMS = ("mode", "row")
PARAMS = ("row_length", "seed", "block_size", "temperature", "n", "d_k", "tile", "causal")
#: Parameters whose tooltip here says more than the shared one (``online.NAME.tooltip``).
OWN_TOOLTIPS = ("row_length", "seed", "block_size", "n", "d_k", "tile")
#: The plots each mode shows (and exports).
PLOTS = {
    "sequential": ("row", "running_m", "running_d", "result"),
    "tree": ("row", "tree", "result"),
    "attention": ("tile_scores", "accumulator", "rows_m", "rows_l", "rescale"),
}


def vbox(widget: QWidget) -> QVBoxLayout:
    lay = QVBoxLayout(widget)
    lay.setContentsMargins(0, 0, 0, 0)
    return lay


class OnlineView(BaseView):
    model: OnlineModel

    def build(self) -> None:
        m = self.model
        m.attach(self.scores)
        self.controls: dict[str, QWidget] = {}
        self._lines: dict[str, QWidget] = {}  # the control, or its line with a caption
        top = QWidget()
        tv = vbox(top)
        self._add_controls(TOP_PARAMS, tv)
        self.editor = self.score_editor()
        tv.addWidget(self.editor, 1)
        self._add_controls(PARAMS, tv)
        self.spacer = QWidget()
        tv.addWidget(self.spacer, 1)

        self.transport = Transport(m, "step", prefix="online")
        self.transport.message.connect(self.status)
        readouts = self.readout_box(KEYS)
        readouts.setTitle(tr("online.readouts.title"))
        self.passes = PassTable()
        self.passes_box = QGroupBox(tr("online.passes.title"))
        pb = QVBoxLayout(self.passes_box)
        pb.setContentsMargins(6, 4, 6, 4)
        pb.addWidget(self.passes)

        self.pages = QStackedWidget()
        self.pages.addWidget(self._row_page())
        self.pages.addWidget(self._attention_page())
        row_readouts, attention_readouts = RowReadouts(self.readouts), AttentionReadouts(self.readouts)
        self.panels = {
            "sequential": (self.row_plot, self.m_plot, self.d_plot, self.compare, self.passes, row_readouts),
            "tree": (self.row_plot, self.tree, self.compare, self.passes, row_readouts),
            "attention": (self.scores_map, self.acc_map, self.m_lines, self.l_lines, self.rescale_bars,
                          attention_readouts),
        }
        self.arrange([top, self.transport, readouts, self.passes_box], self.pages, min_width=340)
        connect_while_alive(self, m.events.mode, lambda *_: self._arrange_mode())
        connect_while_alive(self, m.events.row, lambda *_: self._arrange_mode())
        # the shared row's length narrows the block size and the steps: read those ranges again
        connect_while_alive(self, self.scores.events.entries, lambda *_: self._follow_scores())
        self._arrange_mode()

    def _add_controls(self, names: tuple[str, ...], column: QVBoxLayout) -> None:
        """The shared control of each parameter, one per line; a spin box gets its caption beside it."""
        for name in names:
            control = param_control(self.model, name)
            control.message.connect(self.status)
            line = control
            if isinstance(control, ParamSpin):
                control.setMinimumWidth(80)
                caption = QLabel(tr(f"param.{name}.label"))
                caption.setToolTip(control.toolTip())
                line = QWidget()
                lay = QHBoxLayout(line)
                lay.setContentsMargins(0, 0, 0, 0)
                lay.addWidget(caption)
                lay.addStretch(1)
                lay.addWidget(control)
            if name in OWN_TOOLTIPS:
                tip = tr(f"online.{name}.tooltip")
                for w in (line, *line.findChildren(QLabel), *(getattr(control, a, None) for a in ("slider", "spin"))):
                    if w is not None:
                        w.setToolTip(tip)
                control.setToolTip(tip)
            self.controls[name] = control
            self._lines[name] = line
            column.addWidget(line)

    def _row_page(self) -> QWidget:
        """The row, m and d per step (or the tree), the result beside softmax."""
        self.row_plot = self.add_plot("row", RowPlot())
        self.m_plot = self.add_plot("running_m", StepCurve(tr("online.m.title"), tr("online.m.y"), "m"))
        self.d_plot = self.add_plot("running_d", StepCurve(tr("online.d.title"), tr("online.d.y"), "d"))
        self.tree = self.add_plot("tree", TreePlot())
        self.compare = self.add_plot("result", ComparePlot())
        curves = QWidget()
        cl = QHBoxLayout(curves)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.m_plot)
        cl.addWidget(self.d_plot)
        self.middle = QStackedWidget()
        self.middle.addWidget(curves)
        self.middle.addWidget(self.tree)
        page = QWidget()
        rg = vbox(page)
        rg.addWidget(self.row_plot, 4)
        rg.addWidget(self.middle, 4)
        rg.addWidget(self.compare, 4)
        return page

    def _attention_page(self) -> QWidget:
        self.scores_map = self.add_plot("tile_scores", TileHeatmap())
        self.acc_map = self.add_plot("accumulator", OutputHeatmap())
        self.m_lines = self.add_plot("rows_m", RunningLines(tr("online.rows_m.title"), tr("online.m.y"), "m"))
        self.l_lines = self.add_plot("rows_l", RunningLines(tr("online.rows_l.title"), tr("online.l.y"), "l"))
        self.rescale_bars = self.add_plot("rescale", RescaleBars())
        page = QWidget()
        ag = QGridLayout(page)
        ag.setContentsMargins(0, 0, 0, 0)
        ag.addWidget(self.scores_map, 0, 0)
        ag.addWidget(self.acc_map, 0, 1)
        ag.addWidget(self.m_lines, 1, 0)
        ag.addWidget(self.l_lines, 1, 1)
        ag.addWidget(self.rescale_bars, 2, 0, 1, 2)
        return page

    # -- wiring ------------------------------------------------------------------------------
    def _follow_scores(self) -> None:
        self.controls["block_size"].binding.follow()
        self.transport.follow()

    def _arrange_mode(self) -> None:
        """The page of the mode; a control shows where its parameter applies."""
        m = self.model
        attention = m.mode == "attention"
        self.pages.setCurrentIndex(1 if attention else 0)
        self.middle.setCurrentIndex(1 if m.mode == "tree" else 0)
        for name, line in self._lines.items():
            line.setVisible(m.applies(name))
        self.editor.setVisible(m.reads_scores)
        self.spacer.setVisible(not m.reads_scores)
        self.passes_box.setVisible(not attention)

    def shutdown(self) -> None:
        self.transport.stop()
        super().shutdown()

    def plots(self) -> dict[str, Plot]:
        """The plots of the current mode (the export writes what is on screen)."""
        keys = PLOTS[self.model.mode]
        return {k: v for k, v in self._plots.items() if k in keys}

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self) -> None:
        r = self.model.result(self.scores)
        for panel in self.panels[self.model.mode]:
            panel.show_result(r)

