"""Variants: what today's models change around softmax, one tab per change.

The view only builds and wires: each tab's controls come from the model's
``TAB_PARAMS`` (the seed's on every tab), each panel draws one of the
model's results in ``show_result``, and only the tab on screen is computed
(all of them for an export or a flush).  The export writes the plots of the
tab shown and every tab's arrays.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QGridLayout, QGroupBox, QTabWidget, QVBoxLayout, QWidget

from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.texts import tr
from gui.model.variants import (
    METHODS,
    ROW_TABS,
    SCORE_TABS,
    SOURCE_PARAMS,
    SWITCH_GRID,
    TAB_PARAMS,
    VariantsModel,
)
from gui.model.variants.rows import logn_factor
from gui.views.base import BaseView, grid_page
from gui.views.variants.attention_plots import AlibiPanels, QkPanels, SigmoidPanels
from gui.views.variants.row_plots import LengthPlot, RowBars, SoftcapBars, SoftcapCurve, SoftcapGrad
from gui.widgets.plot import Plot
from gui.widgets.signals import signals_blocked
from gui.widgets.sliders import param_control, param_form

#: The readouts each tab shows.
TAB_READOUTS = {
    "row": (),
    "length": ("variants.readout.n", "variants.readout.logn_factor"),
    "softcap": (),
    "alibi": ("variants.readout.slope",),
    "sigmoid": ("variants.readout.sigmoid_sum",),
    "qk_norm": ("variants.readout.qk_bound", "variants.readout.qk_range"),
}
READOUTS = tuple(dict.fromkeys(k for keys in TAB_READOUTS.values() for k in keys))



class VariantsView(BaseView):
    model: VariantsModel

    def build(self) -> None:
        m = self.model
        self.controls: dict[str, QWidget] = {}
        self.editor = self.score_editor()
        self.source = self.param_group(tr("variants.group.row"), SOURCE_PARAMS)
        self.groups = {tab: self.param_group(tr(f"variants.group.{tab}"), self._column_params(tab))
                       for tab in TAB_PARAMS if self._column_params(tab)}
        seed = param_form(m, ("seed",), message=self.status, controls=self.controls)
        readouts = self.readout_group = self.readout_box(READOUTS)
        self.readout_rows = readouts.layout()

        self.row_bars = RowBars()
        self.row_bars.seriesClicked.connect(self._legend_clicked)
        self.length_top = LengthPlot("top")
        self.length_entropy = LengthPlot("entropy")
        self.softcap_curve = SoftcapCurve()
        self.softcap_grad = SoftcapGrad()
        self.softcap_bars = SoftcapBars()
        self.alibi = AlibiPanels()
        self.sigmoid = SigmoidPanels()
        self.qk = QkPanels()
        self.tab_plots: dict[str, dict[str, Plot]] = {
            "row": {"row": self.row_bars},
            "length": {"length_top": self.length_top, "length_entropy": self.length_entropy},
            "softcap": {"softcap_curve": self.softcap_curve, "softcap_grad": self.softcap_grad,
                        "softcap_bars": self.softcap_bars},
            "alibi": self.alibi.plots(),
            "sigmoid": self.sigmoid.plots(),
            "qk_norm": self.qk.plots(),
        }
        for plots in self.tab_plots.values():
            for key, plot in plots.items():
                self.add_plot(key, plot)
        pages = {
            "row": self._row_page(),
            "length": grid_page((self.length_top,), (self.length_entropy,)),
            "softcap": grid_page((self.softcap_curve, self.softcap_grad), (self.softcap_bars,)),
            "alibi": grid_page((self.alibi.bias, self.alibi.slopes), (self.alibi.plain, self.alibi.biased)),
            "sigmoid": grid_page((self.sigmoid.sigmoid, self.sigmoid.softmax), (self.sigmoid.sums, self.sigmoid.curve)),
            "qk_norm": grid_page((self.qk.hist,), (self.qk.max, self.qk.entropy)),
        }
        self.tabs = QTabWidget()
        self.tabs.setObjectName("variants.tabs")
        self.tabs.setUsesScrollButtons(False)  # every tab's name in sight (the window is wide enough)
        for tab, page in pages.items():
            self.tabs.addTab(page, tr(f"variants.tab.{tab}"))
            self.tabs.setTabToolTip(self.tabs.count() - 1, tr(f"variants.tab.{tab}.tooltip"))
        self.tabs.currentChanged.connect(self._tab_changed)
        # one column: the score table (or, while it is hidden, an empty spacer) takes the spare height
        column = QWidget()
        lay = QVBoxLayout(column)
        lay.setContentsMargins(0, 0, 0, 0)
        self.spacer = QWidget()
        for w in (self.editor, self.source, *self.groups.values(), seed, readouts, self.spacer):
            lay.addWidget(w, 1 if w in (self.editor, self.spacer) else 0)
        self.arrange([column], self.tabs, min_width=330)
        connect_while_alive(self, m.events.row, lambda *_: self._arrange_tab())
        self._arrange_tab()

    @staticmethod
    def _column_params(tab: str) -> tuple[str, ...]:
        """A tab's own parameters in the control column: not the source's, not the row tab's switches."""
        under_bars = {cell[1] for row in SWITCH_GRID for cell in row if cell is not None and cell[0] == "param"}
        return tuple(p for p in TAB_PARAMS[tab] if p not in SOURCE_PARAMS and p not in under_bars)

    def _row_page(self) -> QWidget:
        """The bars over the variants' switches and knobs (two to a row, so the column needs no scrolling)."""
        box = QGroupBox(tr("variants.group.row_tab"))
        lay = QGridLayout(box)
        lay.setContentsMargins(6, 4, 6, 4)
        lay.setVerticalSpacing(2)
        self.show_boxes: dict[str, QCheckBox] = {}
        for r, cells in enumerate(SWITCH_GRID):
            for c, cell in enumerate(cells):
                if cell is None:
                    continue
                kind, name = cell
                if kind == "show":
                    control = QCheckBox(tr(f"variants.show.{name}"))
                    control.setToolTip(tr(f"variants.show.{name}.tooltip"))
                    control.toggled.connect(lambda on, name=name: self.model.show_variant(name, on))
                    self.show_boxes[name] = control
                else:
                    control = param_control(self.model, name)
                    control.message.connect(self.status)
                    self.controls[name] = control
                lay.addWidget(control, r, c)
        connect_while_alive(self, self.model.events.shown, lambda *_: self._follow_shown())
        self._follow_shown()
        lay.setColumnStretch(1, 1)
        page = QWidget()
        column = QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.row_bars, 1)
        column.addWidget(box)
        return page


    # -- wiring ----------------------------------------------------------------------------------
    @property
    def current_tab(self) -> str:
        return self.model.TAB_NAMES[self.tabs.currentIndex()]

    def _tab_changed(self, *_args) -> None:
        self._arrange_tab()
        self.state_changed()

    def _arrange_tab(self) -> None:
        """The current tab's controls and readouts; the score table while the tab reads the shared row."""
        tab = self.current_tab
        for name, box in self.groups.items():
            box.setVisible(name == tab)
        self.source.setVisible(tab in ROW_TABS)
        self.editor.setVisible(self.model.row == "scores" and tab in SCORE_TABS)
        self.spacer.setVisible(self.editor.isHidden())
        for key in READOUTS:
            self.readout_rows.setRowVisible(self.readouts[key], key in TAB_READOUTS[tab])
        self.readout_group.setVisible(bool(TAB_READOUTS[tab]))

    def _follow_shown(self) -> None:
        for name, box in self.show_boxes.items():
            with signals_blocked(box):
                box.setChecked(name in self.model.shown)

    def _legend_clicked(self, index: int) -> None:
        method = METHODS[index]
        if method != "softmax":
            self.model.toggle(method)

    def plots(self) -> dict[str, Plot]:
        """The plots of the tab shown (the export writes what is on screen)."""
        return dict(self.tab_plots[self.current_tab])

    # -- drawing ---------------------------------------------------------------------------------
    def redraw(self) -> None:
        self._redraw_tabs()

    def _redraw_tabs(self) -> None:
        m, tab, every = self.model, self.current_tab, self.synchronous
        out = self.readouts
        if tab in ROW_TABS or every:
            # only the row tab needs every variant's weights; the others read the row's length or logits
            n = m.current_n(self.scores)
            out["variants.readout.n"].setText(f"{n:,}")
            out["variants.readout.logn_factor"].setText(tr(
                "variants.readout.logn_factor.value", factor=fmt(logn_factor(n, m.logn_length), 3),
                n=f"{n:,}", length=f"{m.logn_length:,}"))
            if tab == "row" or every:
                self.row_bars.show_result(m.row_result(self.scores), {
                    "softcap": f"C={m.cap:g}", "ssmax": f"s={m.ssmax_s:g}", "logn": f"L={m.logn_length}"})
            if tab == "length" or every:
                length = m.length_result()
                self.length_top.show_result(length, n)
                self.length_entropy.show_result(length, n)
            if tab == "softcap" or every:
                s = m.softcap_result(self.scores)
                self.softcap_curve.show_result(s)
                self.softcap_grad.show_result(s)
                self.softcap_bars.show_result(s, m.row_logits(self.scores)[1])
        if tab == "alibi" or every:
            a = m.alibi_result()
            self.alibi.show_result(a)
            out["variants.readout.slope"].setText(tr("variants.readout.slope.value", head=a.head,
                                                     slope=fmt(a.slope, 5)))
        if tab == "sigmoid" or every:
            s = m.sigmoid_result()
            self.sigmoid.show_result(s)
            sums = s.sigmoid_sums
            out["variants.readout.sigmoid_sum"].setText(tr(
                "variants.readout.sigmoid_sum.value", lo=fmt(float(sums.min()), 3), hi=fmt(float(sums.max()), 3)))
        if tab == "qk_norm" or every:
            q = m.qk_result()
            self.qk.show_result(q)
            out["variants.readout.qk_bound"].setText(fmt(q.bound, 2))
            out["variants.readout.qk_range"].setText(tr(
                "variants.readout.qk_range.value", plain=fmt(float(abs(q.plain).max()), 2),
                normed=fmt(float(abs(q.normed).max()), 2)))

