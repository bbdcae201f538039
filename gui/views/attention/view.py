"""Attention: softmax once per query row of Q Kᵀ · scale, and why the scale is 1/√d_k.

The view builds and wires: controls from the model's parameters, the data
source widgets, the panels, and two background jobs (the core of large
inputs and the d_k sweep).  Everything drawn comes from the model's result.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gui import theme as themes
from gui.binding import connect_while_alive
from gui.export.atomic import ExportError
from gui.format import fmt
from gui.model import llm
from gui.model.attention import AttentionModel, sweep_steps
from gui.model.texts import tr
from gui.qt import pg
from gui.views.attention import job as core_jobs
from gui.views.attention.panels import OutputPanel, Readouts, RowPanel, ScoresPanel, SweepPanel, WeightsPanel
from gui.views.attention.plots import MAX_TILES
from gui.views.attention.real import RECOMPUTE, ModelPart
from gui.views.attention.tables import QkvTables
from gui.views.base import BaseView
from gui.widgets.file_strip import FileDrops, FileStrip
from gui.widgets.sliders import param_control, param_form

SWEEP_DELAY_MS = 150
#: When the typical row of the shown head peaks below this (auto colour range off), a note says how to see the pattern.
FAINT_WEIGHTS = 0.1
SPINS = ("n", "heads", "seed", "padding", "head", "layer", "query")


class AttentionView(FileDrops, BaseView):
    model: AttentionModel

    def build(self) -> None:
        m = self.model
        self.computing = False  # a redraw is showing an older result while a job runs
        self._drawn: tuple = ()  # what the plots show: (core's heads, head, query, auto levels, theme)
        self._drawn_partial = False  # ... from a partial core: its histograms and spreads still to come
        self._partial = core_jobs.PartialCores()  # the running job's partial core, drawn before the rest
        if m.source == "tables":
            m.start_tables()
        error = lambda text: self.tell(text, error=True)  # noqa: E731

        # -- the data ---------------------------------------------------------------------
        self.source = param_control(m, "source")
        self.sentence = QLineEdit(m.sentence)
        self.sentence.setToolTip(tr("attention.sentence.tooltip"))
        self.sentence.setPlaceholderText(tr("attention.sentence.placeholder"))
        self.sentence.editingFinished.connect(lambda: m.set_sentence(self.sentence.text()))
        connect_while_alive(self, m.events.sentence, self._show_sentence)
        self.file_strip = FileStrip(self._load, button=tr("attention.load"), tooltip=tr("attention.load.tooltip"),
                                    dialog_title=tr("attention.load.dialog"), no_file=tr("attention.no_file"),
                                    object_name="attention.file")
        self.file_strip.message.connect(lambda text, is_error: self.tell(text, error=is_error))
        self.setAcceptDrops(True)
        self.load_button = self.file_strip.button
        self.tables_tabs = QkvTables(m)
        self.tables_tabs.message.connect(lambda text: self.tell(text))
        self.matrix_tables = self.tables_tabs.tables

        # -- the parameters ------------------------------------------------------------------
        self.spins: dict = {}
        form_box = param_form(m, SPINS, message=error, controls=self.spins)
        self.spins["head"].setSpecialValueText(tr("attention.head.all"))  # 0: every head, in a grid
        self.spins["seed"].setToolTip(tr("attention.seed.tooltip"))
        self.d_k, self.scaling, self.temperature, self.causal = (
            param_control(m, name) for name in ("d_k", "scaling", "temperature", "causal"))
        for control in (self.source, self.d_k, self.scaling, self.temperature, self.causal):
            control.message.connect(error)
        self.temperature.setToolTip(tr("attention.temperature.tooltip"))
        self.auto_box = param_control(m, "auto_levels")  # the model's switch: saved in sessions, undoable
        self.auto_box.message.connect(error)
        readouts = self.readout_box(Readouts.KEYS + (RECOMPUTE,))
        self._form, self._readout_form = form_box.layout(), readouts.layout()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setObjectName("attention.note")

        # -- the panels ------------------------------------------------------------------------
        self.weights_panel = WeightsPanel()
        self.weights_stack, self.weights, self.heads_grid = (
            self.weights_panel, self.weights_panel.heatmap, self.weights_panel.grid)
        self.row_panel = RowPanel()
        self.bars, self.steps = self.row_panel.bars, self.row_panel.steps
        self.scores_panel = ScoresPanel()
        self.scores_map, self.histogram = self.scores_panel.heatmap, self.scores_panel.histogram
        self.output_map = OutputPanel()
        self.sweep_panel = SweepPanel()
        self.sweep = self.sweep_panel.plot
        self.sweep_bar, self.sweep_cancel = self.sweep_panel.bar, self.sweep_panel.cancel
        self.readouts_panel = Readouts(self.readouts)
        for key, plot in (("weights", self.weights), ("row", self.bars), ("scores", self.scores_map),
                          ("histogram", self.histogram), ("output", self.output_map), ("sweep", self.sweep)):
            self.add_plot(key, plot)
        for heatmap in (self.weights, self.scores_map, self.output_map):
            heatmap.cellClicked.connect(lambda i, _j: self._row_clicked(i))
        self.heads_grid.rowClicked.connect(self._head_clicked)
        self.model_grid = self.weights_panel.overview
        self.model_grid.cellClicked.connect(self._model_cell_clicked)
        self.real = ModelPart(self)  # the model source: strip, job, overview button, recomputation readout
        self.model_strip = self.real.strip

        # -- the background jobs ------------------------------------------------------------------
        self.core_job = self.add_job(core_jobs.core_job)  # looked up now: a bench may time it
        self.core_job.delivered.connect(self._core_delivered)
        self.core_job.partial.connect(self._core_partial)
        self.core_job.failed.connect(lambda _key, text: self.tell(text, error=True))
        self.sweep_job = self.add_job(sweep_steps)
        self.sweep_job.progressed.connect(self.sweep_panel.progressed)
        self.sweep_job.delivered.connect(self._sweep_delivered)
        self.sweep_job.failed.connect(lambda _key, text: self.tell(text, error=True))
        self.sweep_panel.cancel.clicked.connect(self.cancel_sweep)
        self.sweep_panel.run.clicked.connect(lambda: self.start_sweep(again=True))
        self._sweep_timer = QTimer(self)
        self._sweep_timer.setSingleShot(True)
        self._sweep_timer.setInterval(SWEEP_DELAY_MS)
        self._sweep_timer.timeout.connect(self.start_sweep)
        for name in ("n", "heads", "seed", "source", "loaded", "tables", "sentence"):
            connect_while_alive(self, getattr(m.events, name), lambda *_: self._sweep_timer.start())
        self.compute_bar = QProgressBar()
        self.compute_bar.setRange(0, 0)  # busy: NumPy cannot report progress inside a product
        self.compute_bar.setFormat(tr("attention.compute.progress"))
        self.compute_bar.setTextVisible(True)
        self.compute_bar.setToolTip(tr("attention.compute.progress.tooltip"))
        self.compute_cancel = QPushButton(tr("attention.compute.cancel"))
        self.compute_cancel.setToolTip(tr("attention.compute.cancel.tooltip"))
        self.compute_cancel.clicked.connect(self.cancel_compute)
        self.compute_row = _row(self.compute_bar, self.compute_cancel)
        self.compute_row.hide()
        self._layout(form_box, readouts)
        self.start_sweep()

    def _layout(self, form_box: QWidget, readouts: QWidget) -> None:
        top = QWidget()  # the first control stretches: the source and data block
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        for w in (self.source, self.sentence, self.file_strip, self.tables_tabs, self.real.strip, form_box,
                  self.real.overview, self.d_k,
                  self.scaling, self.temperature, _row(self.causal, self.auto_box, stretch=True)):
            tv.addWidget(w)
        tv.addStretch(1)
        grid_box = QWidget()
        grid = QGridLayout(grid_box)
        grid.setContentsMargins(0, 0, 0, 0)
        for i, w in enumerate((self.weights_stack, self.bars, self.scores_map, self.histogram,
                               self.output_map, self.sweep)):
            grid.addWidget(w, i // 2, i % 2)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        for row, stretch in enumerate((5, 4, 4)):
            grid.setRowStretch(row, stretch)
        self._plot_grid = grid  # the heads grid gets a taller first row
        plots = QSplitter(pg.QtCore.Qt.Orientation.Vertical)
        plots.addWidget(grid_box)
        plots.addWidget(self.steps)
        plots.setSizes([640, 150])
        plots.setChildrenCollapsible(False)
        self.arrange([top, readouts, self.compute_row, self.note, self.sweep_panel.row], plots, min_width=290)

    # -- messages and user actions ----------------------------------------------------------------
    def tell(self, text: str, *, error: bool = False) -> None:
        """A message for the status bar and the note under the controls."""
        self._message = (text, error)
        self._show_note()
        self.status.emit(text)

    def _show_note(self, extra: str = "") -> None:
        text, error = getattr(self, "_message", ("", False))
        self.note.setText("\n".join(p for p in (text, extra) if p))
        colour = themes.current().highlight if error else themes.current().muted
        palette = QPalette()  # only the text colour is set: every other role follows the theme
        palette.setColor(QPalette.ColorRole.WindowText, QColor(colour))
        self.note.setPalette(palette)

    def _show_sentence(self, text: str) -> None:
        if self.sentence.text() != text:
            self.sentence.setText(text)

    def _row_clicked(self, row: int) -> None:
        self.model.set_param("query", min(row + 1, int(self.model.params()["query"].maximum)))

    def _head_clicked(self, head: int, row: int) -> None:
        """A click in the heads grid: that head and that query (the grid gives way to the head)."""
        query = min(row + 1, int(self.model.params()["query"].maximum))
        self.model.update_from_dict({"query": query, "head": head + 1})

    def _model_cell_clicked(self, layer: int, head: int) -> None:
        """A click in the model's overview: that layer and head, in the full view."""
        self.model.update_from_dict({"layer": layer + 1, "head": head + 1})

    def _load(self, path: str) -> str:
        loaded = self.model.load_file(path)  # LoadError (a ValueError) says why and changes nothing
        h, n_q, d = loaded.q.shape
        return tr("attention.loaded", name=Path(path).name, heads=h, n_q=n_q, n_k=loaded.k.shape[1], d=d)

    def load_path(self, path: str | Path) -> bool:
        """Load a file into the model; on failure the message says why and nothing changes."""
        return self.file_strip.load_path(path)

    # -- the d_k sweep ----------------------------------------------------------------------------
    @property
    def sweep_data(self) -> dict | None:
        return self.model.sweep()

    @property
    def sweep_running(self) -> bool:
        return self.sweep_job.running

    def start_sweep(self, *, again: bool = False) -> None:
        """(Re)start the sweep for the current inputs unless it is computed; stale sweeps are stopped."""
        self._sweep_timer.stop()
        if self.model.sweep() is not None:
            self._draw_sweep()
            return
        inputs = self.model.sweep_inputs()
        was = self.sweep_job.wanted_key if self.sweep_job.busy else None
        if self.sweep_job.request(inputs, inputs, again=again) and was != inputs:
            self.sweep_panel.started()

    def start_sweep_soon(self) -> None:
        """(Re)start the sweep after the usual delay (new data whose size the sweep follows)."""
        self._sweep_timer.start()

    def cancel_sweep(self) -> None:
        if self.sweep_job.cancel() is not None:
            self.sweep_panel.finished(None)

    def _sweep_delivered(self, inputs, sweep: dict) -> None:
        self.model.store_sweep(inputs, sweep)
        self.sweep_panel.finished(inputs.n)
        self._draw_sweep()

    def _draw_sweep(self, core=None) -> None:
        """The sweep, its mark at the d_k of ``core`` (the one drawn; else the model's last)."""
        core = self.model.last_core if core is None else core
        if core is not None:
            self.sweep_panel.show(self.model.sweep(), core.n_k, core.q.shape[2] or None)

    # -- the core of large inputs in a worker -------------------------------------------------------
    @property
    def compute_running(self) -> bool:
        """Whether any recompute job (wanted or cancelled) is still running."""
        return self.core_job.running

    def _core_to_draw(self):
        """The current core (cached, or computed here when small or when flushing), else, while the
        job computes the current one (``self.computing``), the newest partial core when it shows the
        head shown (a superseded job's too: it is newer than the last whole core), or the last one."""
        m = self.model
        inputs = m.pending_core()
        if inputs is None or self.synchronous:
            self.computing = False
            self._partial.forget()
            return m.core()  # MemoryError when the inputs are refused
        self.computing = True
        self.core_job.request(inputs.key, (inputs, m.head, self._partial.event_for(inputs.key)))
        partial = self._partial.to_draw(m.head)
        return m.last_core if partial is None else partial

    def _core_partial(self, _key, value) -> None:
        """The shown head of the running job's core: drawn now, the rest when the job delivers
        (the job goes on once this redraw is done)."""
        drawn = self._partial.arrived(value)
        try:
            self._redraw()
        finally:
            drawn.set()

    def _core_delivered(self, _key, pair) -> None:
        inputs, core = pair
        self._partial.forget()
        self.model.store_core(inputs, core)  # dropped when stale
        self._redraw()

    def cancel_compute(self) -> None:
        """Drop the running job's result and put back the inputs of the result shown."""
        self.core_job.cancel()
        self._partial.release()
        shown = self.model.last_inputs
        if shown is not None:
            self.model.restore(shown)
        self.tell(tr("attention.compute.cancelled"))
        self._redraw()

    def arrays(self):
        """The model's arrays; a real model that fails to run refuses the export with its reason."""
        try:
            return super().arrays()
        except llm.ModelError as exc:
            raise ExportError(str(exc)) from None

    def shutdown(self) -> None:
        """Stop every job for good: a redraw that fires later must not start a new one."""
        self._sweep_timer.stop()
        self._partial.release()
        super().shutdown()

    def flush(self) -> None:
        """A sweep waiting for its timer starts now, so that flush waits for it too; the core job
        does not wait for its partial core to be drawn (this thread waits for the job)."""
        if self._sweep_timer.isActive():
            self.start_sweep()
        self._partial.release()
        super().flush()

    # -- drawing ------------------------------------------------------------------------------------
    def _redraw(self, *args) -> None:
        """A redraw that only starts the core job (large inputs) shows nothing of the new inputs yet:
        it does not count in ``redraw_count``; the redraw that draws the delivered core does.  So a
        caller waiting for the count to go up (tests, bench/gui_latency.py) waits for the new data to
        be drawn, and times the job too."""
        count = self.redraw_count
        super()._redraw(*args)
        if self.computing:
            self.redraw_count = count

    def redraw(self) -> None:
        m = self.model
        self.sentence.setVisible(m.source == "sentence")
        self.tables_tabs.setVisible(m.source == "tables")
        self.file_strip.show_path(m.file_path)
        self.real.prepare()
        self._form.setRowVisible(self.spins["layer"], m.source == "model")
        try:
            core = self._core_to_draw()
        except MemoryError as exc:
            self.tell(str(exc), error=True)
            return
        self.compute_row.setVisible(self.computing)
        self.compute_cancel.setEnabled(m.last_core is not None)
        if core is None:
            self._show_note(tr("attention.compute.note"))
            return
        auto = m.auto_levels == "on"
        self.weights_panel.auto_levels = self.row_panel.auto_levels = auto
        drawn = (id(core.parts), m.head, m.query, auto, themes.current())  # a partial core and its whole share parts
        if self.computing and drawn == self._drawn:  # nothing new to draw until the job lands
            self._show_note(tr("attention.compute.partial_note" if self._drawn_partial else "attention.compute.note"))
            return
        completing = drawn == self._drawn and self._drawn_partial and core.statistics
        self._drawn, self._drawn_partial = drawn, not core.statistics
        r = m.result_for(core)
        if completing:  # the partial core drawn is complete now: only its statistics are new
            self.scores_panel.show_statistics(r)
            self.readouts_panel.show(r)
        else:
            for panel in (self.weights_panel, self.row_panel, self.scores_panel, self.output_map,
                          self.readouts_panel):
                panel.show(r)
        self.real.show_readout(r, self._readout_form)
        self._plot_grid.setRowStretch(0, 8 if r.all_heads and (core.heads > 4 or core.real is not None) else 5)
        if self.sweep_job.busy and m.sweep() is None:
            if core.q.shape[2]:
                self.sweep_panel.plot.mark(core.q.shape[2])  # the old curves stay until the new sweep lands
        else:
            self._draw_sweep(core)
        self._show_note("\n".join(self._notes(r)))

    def _notes(self, r) -> list[str]:
        c = r.core
        notes = [tr("attention.compute.note" if c.statistics else "attention.compute.partial_note")] if self.computing else []
        if c.note:
            notes.append(c.note)
        fr, fc = self.weights.pooling
        if fr > 1 or fc > 1:
            notes.append(tr("attention.pooled", rows=-(-c.n_q // fr), cols=-(-c.n_k // fc), n_q=c.n_q, n_k=c.n_k))
        if r.masked_row_indices:
            notes.append(tr("attention.masked.note"))
        if self.model.auto_levels != "on" and not r.all_heads:
            peaks = c.head_weights(r.head).max(axis=1)[~c.empty_rows[r.head]] if c.n_k else np.ones(0)
            top = float(np.median(peaks)) if peaks.size else 1.0  # the typical row's largest weight
            if top < FAINT_WEIGHTS:  # on the fixed 0..1 colours and bars every weight looks the same
                notes.append(tr("attention.faint.note", top=fmt(top, 3)))
        if r.all_heads and c.real is None:
            notes.append(tr("attention.grid.note", heads=min(c.heads, MAX_TILES)))
        return notes + self.real.notes(r)


def _row(*widgets: QWidget, stretch: bool = False) -> QWidget:
    """Widgets side by side (the first stretches, or a stretch at the end)."""
    row = QWidget()
    lay = QHBoxLayout(row)
    lay.setContentsMargins(0, 0, 0, 0)
    for i, w in enumerate(widgets):
        lay.addWidget(w, 0 if stretch or i else 1)
    if stretch:
        lay.addStretch(1)
    return row
