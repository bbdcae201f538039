"""Sampling: the LM head's knobs (temperature, top-k, top-p, min-p), seeded draws, Gumbel, the MoE router.

The view only builds and wires: the model computes every result, each
panel draws one in its ``show_result``.  Small draws are made on the GUI
thread; large ones (see ``gui.model.sampling.needs_worker``) run in a
:class:`~gui.widgets.jobs.Job` over the model's ``draw_steps`` generator,
with a progress bar and Cancel, while the expected counts stay on screen.
With the model source (``logits`` "model") the vocabulary is a real
model's next-token logits and a generate strip draws from them
(:mod:`gui.views.sampling.real`).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QGridLayout, QLabel, QTabWidget, QWidget

from gui.export.atomic import ExportError
from gui.model import llm
from gui.model.sampling import (
    CURVE_T,
    CURVES_IN_JOB_V,
    DrawResult,
    SamplingModel,
    SamplingResult,
    curve_steps,
    draw_steps,
    needs_worker,
)
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.views.sampling.bars import TokenPlot
from gui.views.sampling.controls import VocabularyBox, form_box, knobs_box
from gui.views.sampling.curves import CumulativePlot, CurvePlot
from gui.views.sampling.draws import READOUTS, DrawPlot, DrawProgress, DrawState, Readouts
from gui.views.sampling.gumbel import GumbelTab
from gui.views.sampling.real import ModelPart
from gui.views.sampling.router import ROUTER_READOUTS, RouterTab
from gui.views.sampling.speculative import SPEC_READOUTS, SpeculativeTab
from gui.widgets.explanation import explanation_html
from gui.widgets.file_strip import FileDrops

#: While the vocabulary keeps changing (a Vocabulary V drag), a long vocabulary's curves job waits until
#: it has rested this long: each job is 61 softmaxes of V, computed for a V that the next step replaces,
#: and it takes a core (and the GIL now and then) from the drag's own redraws.
CURVES_REST_MS = 150


class SamplingView(FileDrops, BaseView):
    model: SamplingModel

    def build(self) -> None:
        m = self.model
        self.controls: dict[str, QWidget] = {}  # every parameter control, by parameter name
        self.job = self.add_job(draw_steps)
        self.curves_job = self.add_job(curve_steps)  # a long vocabulary's temperature curves, a block at a time

        # -- controls ------------------------------------------------------------------
        self.vocabulary = VocabularyBox(m, self.score_editor(), self._load_file, self._refused, self.controls)
        self.file_strip = self.vocabulary.files  # files dropped on the view go to it (FileDrops)
        self.file_strip.message.connect(lambda text, error: self.tell(text, error=error))
        self.setAcceptDrops(True)
        self.editor = self.vocabulary.editor
        knobs = knobs_box(m, self._refused, self.controls)
        self.progress = DrawProgress()
        draws = form_box(tr("sampling.group.draws"), m, ("draws", "draw_method"), self._refused, self.controls,
                         self.progress)
        more = form_box(tr("sampling.group.more"), m, ("tau", "shown", "t_curve"), self._refused, self.controls)
        readouts = self.readout_box(READOUTS)
        self.summary = Readouts(self.readouts)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setObjectName("sampling.note")

        # -- plots ----------------------------------------------------------------------
        self.bars = self.add_plot("tokens", TokenPlot())
        self.cumulative = self.add_plot("cumulative", CumulativePlot())
        self.draw_bars = self.add_plot("draws", DrawPlot())
        self.curves = self.add_plot("temperature_curves", CurvePlot(
            tr("sampling.curves.title"), x_label=tr("plot.entropy.x"), y_label=tr("sampling.curve.entropy"),
            x_range=(float(CURVE_T[0]), float(CURVE_T[-1])), x_name="T"))
        self.gumbel_tab = GumbelTab()
        self.gumbel = self.add_plot("gumbel", self.gumbel_tab.bars)
        self.sharpening = self.add_plot("gumbel_sharpening", self.gumbel_tab.sharpening)
        self.router_tab = RouterTab(m, self.readout_box(ROUTER_READOUTS), self.readouts, self._refused, self.controls)
        self.router_map = self.add_plot("router_gates", self.router_tab.gates)
        self.router_load = self.add_plot("router_load", self.router_tab.load)
        self.spec_tab = SpeculativeTab(m, self.readout_box(SPEC_READOUTS), self.readouts, self._refused, self.controls)
        for key in ("pq", "residual", "steps", "rate"):
            self.add_plot(f"speculative_{key}", getattr(self.spec_tab, key))
        self.real = ModelPart(self)  # the model source: model strip, generate strip, their job
        self.model_strip, self.generate = self.real.strip, self.real.generate
        self.vocabulary.add_source_widget(self.model_strip)
        self.bars.barClicked.connect(self.real.choose)

        self.vocab_tab = vocab_tab = QWidget()
        grid = QGridLayout(vocab_tab)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.generate, 0, 0, 1, 2)
        for i, plot in enumerate((self.bars, self.cumulative, self.draw_bars, self.curves)):
            grid.addWidget(plot, 1 + i // 2, i % 2)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("sampling.tabs")
        self.tabs.addTab(vocab_tab, tr("sampling.tab.vocab"))
        self.tabs.addTab(self.gumbel_tab, tr("sampling.tab.gumbel"))
        self.tabs.addTab(self.router_tab, tr("sampling.tab.router"))
        self.tabs.addTab(self.spec_tab, tr("sampling_model.tab.speculative"))
        self.tabs.currentChanged.connect(self.state_changed)
        self.arrange([self.vocabulary, knobs, draws, more, readouts, self.note], self.tabs, min_width=330)
        # the view's explanation, then the model source's and speculative decoding's
        self.explain.setHtml(explanation_html(f"{tr('view.sampling.explain')}\n\n{tr('sampling_model.explain')}"))

        # -- the background draws ------------------------------------------------------
        self.job.busy_changed.connect(self.progress.show_busy)
        self.job.progressed.connect(self.progress.show_fraction)
        self.job.delivered.connect(self._draws_delivered)
        self.job.failed.connect(lambda _key, text: self.tell(text, error=True))
        self.progress.cancel.connect(self.cancel_draws)
        self.curves_job.delivered.connect(self._curves_delivered)
        self._curves_asked = -math.inf  # when a new vocabulary last asked for its curves (time.monotonic)
        self._curves_timer = QTimer(self)
        self._curves_timer.setSingleShot(True)
        self._curves_timer.setInterval(CURVES_REST_MS)
        self._curves_timer.timeout.connect(self._ask_curves)
        self._curves_waiting: tuple | None = None  # the vocabulary the timer waits to ask for
        self.curves_job.failed.connect(lambda _key, text: self.tell(text, error=True))

    # -- messages and files --------------------------------------------------------------------
    def tell(self, text: str, *, error: bool = False) -> None:
        self.status.emit(text)
        if error:
            self.note.setText(text)

    def _refused(self, text: str) -> None:
        self.tell(text, error=True)

    def _load_file(self, path: str) -> str:
        self.model.set_param("logits_file", path)  # a bad file raises LoadError; nothing changes
        return tr("sampling.loaded", name=Path(path).name, v=f"{self.model.loaded.size:,}")

    def load_path(self, path: str | Path) -> bool:
        """Load a logits file as the Load button or a drop does; False (and a message) if refused."""
        return self.file_strip.load_path(path)

    # -- draws ---------------------------------------------------------------------------------
    def _draw_state(self, r: SamplingResult) -> DrawState:
        """The draws of the current inputs: made here if small, else asked of the job (None meanwhile)."""
        m = self.model
        d = m.cached_draws(self.scores)
        if d is None:
            inputs = m.draw_inputs(self.scores)
            if inputs.key == self.job.cancelled_key:  # not restarted until an input changes
                return DrawState(r, m.draws, None, cancelled=True)
            if self.synchronous or not needs_worker(inputs, r.kept):
                d = m.draw(self.scores)
            else:
                self.job.request(inputs.key, inputs)
        return DrawState(r, m.draws, d)

    def _draws_delivered(self, _key, result: DrawResult) -> None:
        self.model.store_draws(result, self.scores)  # refused if the inputs changed meanwhile
        self._redraw()

    def _show_curves(self) -> None:
        """The temperature curves: drawn at once when known or short; for a long new vocabulary asked of
        the job, the last curves staying on screen until it delivers (a V drag does not wait for them).

        A new vocabulary right after another (within CURVES_REST_MS: a drag) is not asked for at once:
        the job of the one before is stopped and the curves are asked for once V has rested."""
        m = self.model
        if m.cached_curves(self.scores) is None and not self.synchronous:
            key, logits = m.curves_inputs(self.scores)
            if logits.size >= CURVES_IN_JOB_V:
                waiting = self._curves_timer.isActive() and key == self._curves_waiting
                if not waiting and (key != self.curves_job.wanted_key or not self.curves_job.busy):
                    now = time.monotonic()
                    rest_s = self._curves_timer.interval() / 1000  # CURVES_REST_MS
                    resting = now - self._curves_asked >= rest_s and not self._curves_timer.isActive()
                    self._curves_asked = now
                    if resting:
                        self.curves_job.request(key, logits, again=True)
                    else:
                        if self.curves_job.busy:
                            self.curves_job.cancel()  # a vocabulary no longer shown: stop at its next block
                        self._curves_waiting = key
                        self._curves_timer.start()  # (re)started: asked for once V rests
                return
        self.curves.show_result(m.t_curve_result(self.scores))

    def _ask_curves(self) -> None:
        """V has rested: ask the job for the current vocabulary's curves (unless known by now)."""
        m = self.model
        if m.cached_curves(self.scores) is None:
            key, logits = m.curves_inputs(self.scores)
            if logits.size >= CURVES_IN_JOB_V:
                self.curves_job.request(key, logits, again=True)

    def _curves_delivered(self, key, curves) -> None:
        if self.model.store_curves(key, curves, self.scores):  # refused if the vocabulary changed meanwhile
            self._redraw()

    def cancel_draws(self) -> None:
        self.job.cancel()
        self.tell(tr("sampling.draws.cancelled"))
        self.schedule_redraw()

    def arrays(self):
        """The model's arrays; a real model that fails to run refuses the export with its reason."""
        try:
            return super().arrays()
        except llm.ModelError as exc:
            raise ExportError(str(exc)) from None

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self) -> None:
        m = self.model
        self.vocabulary.show_result(m)
        self.real.prepare()
        notes = self.real.notes()
        if m.logits == "file" and m.loaded is None:
            notes.append(tr("sampling.no_file.note"))
        try:
            r = m.result(self.scores)
        except ValueError as exc:
            self.note.setText(str(exc))
            return
        state = self._draw_state(r)
        tab = self.tabs.currentWidget()
        if tab is self.vocab_tab or self.synchronous:  # its plots only when shown (a tab switch redraws)
            self.bars.show_result(r)
            self.cumulative.show_result(r)
            self.draw_bars.show_result(state)
            self._show_curves()
        self.real.show(r)
        self.summary.show_result(state)  # the readouts are beside every tab
        if state.draws is None:
            notes.append(tr("sampling.draws.cancelled.note" if state.cancelled else "sampling.draws.note"))
        if tab is self.gumbel_tab or self.synchronous:  # 41 softmaxes of V: only when shown
            g = m.gumbel_result(self.scores)
            self.gumbel_tab.show_result(g)
            if not g.hard_shown:
                notes.append(tr("sampling.gumbel.outside", label=g.hard_label))
        if tab is self.router_tab or self.synchronous:
            self.router_tab.show_result(m.router())
        if tab is self.spec_tab or self.synchronous:
            self.spec_tab.show_result(m.speculative_result(self.scores))
        self.note.setText("\n".join(notes))
