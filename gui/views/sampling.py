"""Sampling: the LM head's knobs (temperature, top-k, top-p, min-p), seeded draws, Gumbel, the MoE router."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QThread, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

import compute
from gui import theme as themes
from gui.format import fmt
from gui.model.sampling import (
    CURVE_T,
    ROUTER_SHOWN,
    TAU_GRID,
    DrawInputs,
    DrawResult,
    SamplingModel,
    compute_draws,
)
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets.heatmap import Heatmap
from gui.widgets.plot import BarChart, Plot, style_current
from gui.widgets.sliders import ParamChoice, ParamSlider, ParamSpin, ParamSwitch

#: Draws that take more work than this (draws x candidate tokens for Gumbel-max,
#: draws for the inverse CDF) run in a worker thread.
SYNC_GUMBEL_WORK = 2_000_000
SYNC_DRAWS = 200_000
GUMBEL_TAB, ROUTER_TAB = 1, 2  # drawn only while their tab shows (and for exports)
STAGES = ("kept", "top_k", "top_p", "min_p")


class TokenBars(BarChart):
    """Bars over the top tokens; the hover text says which knob cut a token."""

    def __init__(self, title: str, series, **kwargs):
        super().__init__(title, series, value_labels=False, **kwargs)
        self.stages: np.ndarray = np.zeros(0, dtype=np.int8)
        plain = self.describe

        def describe(x: float, y: float) -> str:
            text = plain(x, y)
            i = int(round(x))
            if text and 0 <= i < self.stages.size:
                text += " — " + tr(f"sampling.stage.{STAGES[int(self.stages[i])]}")
            return text

        self.describe = describe

    def show_bars(self, labels, heights, stages=None) -> None:
        self.stages = np.zeros(len(labels), dtype=np.int8) if stages is None else np.asarray(stages)
        self.set_data(labels, heights)
        finite = [np.nan_to_num(h) for h in heights]
        top = max((float(h.max()) for h in finite if h.size), default=1.0)
        self.set_y_range(0.0, top * 1.15 if top > 0 else 1.0)


class LogXPlot(Plot):
    """A curve against a log x axis with the current x marked (dot and dashed line)."""

    def __init__(self, title: str, *, x_label: str, y_label: str, x_range: tuple[float, float], x_name: str):
        super().__init__(title, x_label=x_label, y_label=y_label)
        item = self.getPlotItem()
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        self.curve = item.plot([], [])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=10)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        lo, hi = (math.log10(v) for v in x_range)
        pad = 0.03 * (hi - lo)
        item.setXRange(lo - pad, hi + pad, padding=0)
        ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if x_range[0] <= t <= x_range[1]]
        item.getAxis("bottom").setTicks([[(math.log10(t), f"{t:g}") for t in ticks], []])
        self._y_name = y_label
        self.describe = lambda x, y: f"{x_name} = {fmt(x)}, {self._y_name} = {fmt(y)}"
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "now_line"):
            return
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        style_current(theme, self.marker, self.now_line)

    def set_curve(self, x: np.ndarray, y: np.ndarray, x_now: float, y_now: float, y_label: str | None = None) -> None:
        ok = np.isfinite(y)
        self.curve.setData(x[ok], y[ok])
        self.marker.setData(*(([x_now], [y_now]) if np.isfinite(y_now) else ([], [])))
        self.now_line.setValue(math.log10(x_now))
        if y_label is not None and y_label != self._y_name:
            self._y_name = y_label
            self.getPlotItem().setLabel("left", y_label)


class CumulativePlot(Plot):
    """Sorted cumulative probability against rank (log x), with the top-p level and cut."""

    def __init__(self):
        super().__init__(tr("sampling.cumulative.title"), x_label=tr("sampling.cumulative.x"),
                         y_label=tr("sampling.cumulative.y"))
        item = self.getPlotItem()
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        item.setYRange(0, 1.05, padding=0)
        self.curve = item.plot([], [])
        self.level = pg.InfiniteLine(angle=0, movable=False, label="", labelOpts={"position": 0.3})
        self.cut = pg.InfiniteLine(angle=90, movable=False, label="", labelOpts={"position": 0.2})
        for line in (self.level, self.cut):
            item.addItem(line, ignoreBounds=True)
        self.describe = lambda x, y: tr("sampling.cumulative.describe", rank=f"{x:,.0f}", p=fmt(y))
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "cut"):
            return
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        for line in (self.level, self.cut):
            line.setPen(pg.mkPen(theme.highlight, width=1.5, style=Qt.PenStyle.DashLine))
            line.label.setColor(theme.highlight)

    def set_curve(self, ranks: np.ndarray, cum: np.ndarray, top_p: float | None, cut_rank: int, v: int) -> None:
        self.curve.setData(ranks.astype(float), cum)
        self.getPlotItem().setXRange(0, math.log10(max(v, 10)), padding=0.02)
        on = top_p is not None
        self.level.setVisible(on)
        self.cut.setVisible(on and cut_rank > 0)
        if on:
            self.level.setValue(top_p)
            self.level.label.setFormat(f"top-p = {top_p:g}")
            self.cut.setValue(math.log10(max(cut_rank, 1)))
            self.cut.label.setFormat(tr("sampling.cumulative.cut", n=f"{cut_rank:,}"))


class DrawThread(QThread):
    """Makes one DrawResult off the GUI thread; cancel() stops Gumbel-max draws at the next chunk."""

    progressed = Signal(float)
    done = Signal(object)

    def __init__(self, inputs: DrawInputs):
        super().__init__()
        self.inputs = inputs
        self.key = inputs.key
        self.result: DrawResult | None = None
        self.error: str | None = None
        self.cancelled = False
        self.delivered = False
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self.cancelled = True
        self._cancel.set()

    def _progress(self, *args) -> None:
        frac = float(args[0]) / float(args[1]) if len(args) >= 2 and args[1] else float(args[0]) if args else 0.0
        self.progressed.emit(frac)

    def run(self) -> None:
        try:
            self.result = compute_draws(self.inputs, progress=self._progress, cancelled=self._cancel.is_set)
        except compute.Cancelled:
            self.cancelled = True
        except Exception as exc:  # noqa: BLE001 - shown to the user, never raised into Qt
            self.error = f"{type(exc).__name__}: {exc}"
        self.done.emit(self)


class SamplingView(BaseView):
    model: SamplingModel

    def build(self) -> None:
        m = self.model
        self._thread: DrawThread | None = None  # the job whose result is wanted
        self._threads: list[DrawThread] = []  # every job not yet delivered
        self._shut_down = False
        self._sync = False  # flush(): draw on this thread whatever the size
        self._cancelled_key: tuple | None = None  # the inputs whose draws the user cancelled
        self.setAcceptDrops(True)

        # -- controls ------------------------------------------------------------------
        source = QGroupBox(tr("sampling.group.vocab"))
        sl = QVBoxLayout(source)
        sl.addWidget(ParamChoice(m, "logits"))
        self.vocab = ParamSlider(m, "vocab")
        sl.addWidget(self.vocab)
        self.load_button = QPushButton(tr("sampling.load"))
        self.load_button.setToolTip(tr("sampling.load.tooltip"))
        self.load_button.clicked.connect(self.choose_file)
        self.file_label = QLabel()
        self.file_label.setWordWrap(True)
        row = QWidget()
        rl = QHBoxLayout(row)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.load_button)
        rl.addWidget(self.file_label, 1)
        sl.addWidget(row)
        seed_row = QWidget()
        sr = QHBoxLayout(seed_row)
        sr.setContentsMargins(0, 0, 0, 0)
        seed_label = QLabel(tr("param.seed.label"))
        seed_label.setToolTip(tr("param.seed.tooltip"))
        self.seed = ParamSpin(m, "seed")
        self.seed.message.connect(lambda text: self.tell(text, error=True))
        sr.addWidget(seed_label)
        sr.addWidget(self.seed, 1)
        sl.addWidget(seed_row)
        self.editor = self.score_editor()
        self.editor.setMinimumHeight(150)
        sl.addWidget(self.editor, 1)
        self.source_stretch = QWidget()  # takes the room the score table would when it is hidden
        sl.addWidget(self.source_stretch, 1)

        knobs = QGroupBox(tr("sampling.group.knobs"))
        kl = QGridLayout(knobs)
        kl.addWidget(ParamSlider(m, "temperature"), 0, 0, 1, 2)
        self.switches: dict[str, ParamSwitch] = {}
        self.knob_sliders: dict[str, ParamSlider] = {}
        for r, name in enumerate(("top_k", "top_p", "min_p"), start=1):
            self.switches[name] = ParamSwitch(m, f"{name}_on")
            self.knob_sliders[name] = ParamSlider(m, name)
            self.knob_sliders[name].label.hide()
            kl.addWidget(self.switches[name], r, 0)
            kl.addWidget(self.knob_sliders[name], r, 1)
        kl.setColumnStretch(1, 1)

        draws = QGroupBox(tr("sampling.group.draws"))
        dl = QVBoxLayout(draws)
        dl.addWidget(ParamSlider(m, "draws"))
        dl.addWidget(ParamChoice(m, "draw_method"))
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFormat(tr("sampling.draws.progress"))
        self.progress.setToolTip(tr("sampling.draws.progress.tooltip"))
        self.cancel_button = QPushButton(tr("sampling.draws.cancel"))
        self.cancel_button.setToolTip(tr("sampling.draws.cancel.tooltip"))
        self.cancel_button.clicked.connect(self.cancel_draws)
        self.progress_row = QWidget()
        pr = QHBoxLayout(self.progress_row)
        pr.setContentsMargins(0, 0, 0, 0)
        pr.addWidget(self.progress, 1)
        pr.addWidget(self.cancel_button)
        dl.addWidget(self.progress_row)
        self.progress_row.hide()

        more = QGroupBox(tr("sampling.group.more"))
        ml = QVBoxLayout(more)
        ml.addWidget(ParamSlider(m, "tau"))
        ml.addWidget(ParamSlider(m, "shown"))
        ml.addWidget(ParamChoice(m, "t_curve"))

        readouts = self.readout_box(("sampling.readout.kept", "sampling.readout.entropy",
                                     "sampling.readout.perplexity", "sampling.readout.chi2"))
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setObjectName("sampling.note")

        # -- plots ----------------------------------------------------------------------
        self.bars = self.add_plot("tokens", TokenBars(
            tr("sampling.bars.title"), [(tr("sampling.bars.before"), "secondary"),
                                        (tr("sampling.bars.after"), "accent")], y_label=tr("sampling.bars.y")))
        self.cumulative = self.add_plot("cumulative", CumulativePlot())
        self.draw_bars = self.add_plot("draws", TokenBars(
            tr("sampling.draws.title"), [(tr("sampling.draws.expected"), "secondary"),
                                         (tr("sampling.draws.observed"), "accent")],
            y_label=tr("sampling.draws.y"), value_name=tr("sampling.draws.count"), percent=False))
        self.curves = self.add_plot("temperature_curves", LogXPlot(
            tr("sampling.curves.title"), x_label=tr("plot.entropy.x"), y_label=tr("sampling.curve.entropy"),
            x_range=(float(CURVE_T[0]), float(CURVE_T[-1])), x_name="T"))
        self.gumbel = self.add_plot("gumbel", TokenBars(
            tr("sampling.gumbel.title"), [(tr("sampling.gumbel.relaxed"), "accent"),
                                          (tr("sampling.gumbel.hard"), "highlight")], y_label=tr("sampling.bars.y")))
        self.sharpening = self.add_plot("gumbel_sharpening", LogXPlot(
            tr("sampling.sharpening.title"), x_label=tr("sampling.sharpening.x"), y_label=tr("sampling.sharpening.y"),
            x_range=(float(TAU_GRID[0]), float(TAU_GRID[-1])), x_name="τ"))
        vocab_tab = QWidget()
        grid = QGridLayout(vocab_tab)
        grid.setContentsMargins(0, 0, 0, 0)
        for i, plot in enumerate((self.bars, self.cumulative, self.draw_bars, self.curves)):
            grid.addWidget(plot, i // 2, i % 2)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        gumbel_tab = QWidget()
        gl = QVBoxLayout(gumbel_tab)
        gl.setContentsMargins(0, 0, 0, 0)
        gl.addWidget(self.gumbel, 3)
        gl.addWidget(self.sharpening, 2)

        router_tab = QWidget()
        rl = QVBoxLayout(router_tab)
        rl.setContentsMargins(0, 0, 0, 0)
        rc = QGroupBox(tr("sampling.group.router"))
        rg = QGridLayout(rc)
        for i, name in enumerate(("experts", "router_k", "router_tokens", "gate_temperature")):
            rg.addWidget(ParamSlider(m, name), i // 2, i % 2)
        rl.addWidget(rc)
        self.router_readouts = self.readout_box(("sampling.readout.router_load", "sampling.readout.router_cv2"))
        rl.addWidget(self.router_readouts)
        self.router_map = self.add_plot("router_gates", Heatmap(
            tr("sampling.router.gates.title"), diverging=False, value_name=tr("sampling.router.weight")))
        self.router_load = self.add_plot("router_load", TokenBars(
            tr("sampling.router.load.title"), [(tr("sampling.router.load.tokens"), "accent"),
                                               (tr("sampling.router.load.importance"), "secondary")],
            y_label=tr("sampling.router.load.y")))
        self.ideal = pg.InfiniteLine(angle=0, movable=False, label=tr("sampling.router.ideal"),
                                     labelOpts={"position": 0.92, "anchors": [(1, 1), (1, 1)]})
        self.router_load.getPlotItem().addItem(self.ideal, ignoreBounds=True)
        rp = QHBoxLayout()
        rp.addWidget(self.router_map, 3)
        rp.addWidget(self.router_load, 2)
        rl.addLayout(rp, 1)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("sampling.tabs")
        self.tabs.addTab(vocab_tab, tr("sampling.tab.vocab"))
        self.tabs.addTab(gumbel_tab, tr("sampling.tab.gumbel"))
        self.tabs.addTab(router_tab, tr("sampling.tab.router"))
        self.tabs.currentChanged.connect(self._state_changed)
        self.arrange([source, knobs, draws, more, readouts, self.note], self.tabs, min_width=330)
        themes.manager().changed.connect(self._style_ideal)
        self._style_ideal(themes.current())

    def _style_ideal(self, theme: themes.Theme) -> None:
        self.ideal.setPen(pg.mkPen(theme.muted, width=1.5, style=Qt.PenStyle.DashLine))
        self.ideal.label.setColor(theme.muted)

    # -- messages and files --------------------------------------------------------------------
    def tell(self, text: str, *, error: bool = False) -> None:
        self.status.emit(text)
        if error:
            self.note.setText(text)

    def load_path(self, path: str | Path) -> bool:
        try:
            self.model.set_param("logits_file", str(path))
        except ValueError as exc:  # LoadError is a ValueError
            self.tell(str(exc), error=True)
            return False
        self.tell(tr("sampling.loaded", name=Path(path).name, v=f"{self.model.loaded.size:,}"))
        return True

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("sampling.load"), "", tr("sampling.load.filter"))
        if path:
            self.load_path(path)

    def dragEnterEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile() and urls[0].toLocalFile().lower().endswith((".npy", ".npz")):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        self.load_path(event.mimeData().urls()[0].toLocalFile())
        event.acceptProposedAction()

    # -- draws in a worker ---------------------------------------------------------------------
    @staticmethod
    def needs_worker(inputs: DrawInputs, kept: int) -> bool:
        if inputs.method == "gumbel_max":
            return inputs.n * kept > SYNC_GUMBEL_WORK
        return inputs.n > SYNC_DRAWS

    @property
    def draws_running(self) -> bool:
        return bool(self._threads)

    def _current_draws(self, kept: int) -> tuple[DrawResult | None, bool]:
        """(draws to show, whether they are the current ones)."""
        m = self.model
        cached = m.cached_draws(self.scores)
        if cached is not None:
            return cached, True
        inputs = m.draw_inputs(self.scores)
        if inputs.key == self._cancelled_key:
            return None, False
        if self._sync or not self.needs_worker(inputs, kept):
            return m.draw(self.scores), True
        self._request(inputs)
        return None, False

    def _request(self, inputs: DrawInputs) -> None:
        if self._shut_down or inputs.key == self._cancelled_key:
            return  # a cancelled job is not restarted until the inputs change
        if self._thread is not None and self._thread.key == inputs.key:
            return
        if self._thread is not None:
            self._thread.cancel()  # its result would be stale; Gumbel-max stops at the next chunk
            self._thread = None
        if self._threads:
            return  # one job at a time: _done asks again for whatever is current then
        thread = DrawThread(inputs)
        thread.progressed.connect(self._progressed)
        thread.done.connect(self._done)
        self._thread = thread
        self._threads.append(thread)
        self.progress.setValue(0)
        self.progress_row.show()
        thread.start()

    def _progressed(self, frac: float) -> None:
        if self.sender() is self._thread:
            self.progress.setValue(round(100 * frac))

    def _done(self, thread: DrawThread) -> None:
        if thread.delivered:
            return
        thread.delivered = True
        thread.wait()
        if thread in self._threads:
            self._threads.remove(thread)
        if thread is self._thread:
            self._thread = None
        if not thread.cancelled:
            if thread.result is not None:
                self.model.store_draws(thread.result, self.scores)
            elif thread.error:
                self.tell(thread.error, error=True)
        thread.deleteLater()
        if not self._threads:
            self.progress_row.hide()
        if not self._shut_down:
            self._redraw()

    def cancel_draws(self) -> None:
        thread = self._thread
        if thread is not None:
            thread.cancel()
            self._cancelled_key = thread.key
            self._thread = None
        self.tell(tr("sampling.draws.cancelled"))

    def wait_for_draws(self) -> None:
        for thread in list(self._threads):
            thread.wait()
            self._done(thread)

    def shutdown(self) -> None:
        self._shut_down = True
        for thread in list(self._threads):
            thread.cancel()
            thread.wait()
            thread.delivered = True
            thread.deleteLater()
        self._threads.clear()
        self._thread = None

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)

    def flush(self) -> None:
        """Redraw now with the current draws (made here if needed), so exports are never stale."""
        self.wait_for_draws()
        self._sync = True
        try:
            super().flush()
        finally:
            self._sync = False

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self) -> None:
        m = self.model
        self.vocab.setEnabled(m.logits == "zipf")
        self.editor.setVisible(m.logits == "scores")
        self.source_stretch.setVisible(m.logits != "scores")
        self.file_label.setVisible(m.logits == "file")
        self.file_label.setText(Path(m.file_path).name if m.file_path else tr("sampling.no_file"))
        for name, slider in self.knob_sliders.items():
            slider.setEnabled(getattr(m, f"{name}_on") == "on")
        notes = []
        if m.logits == "file" and m.loaded is None:
            notes.append(tr("sampling.no_file.note"))
        try:
            r = m.result(self.scores)
        except ValueError as exc:
            self.note.setText(str(exc))
            return
        labels = r.labels
        ids = r.shown
        self.bars.show_bars(labels, [r.probs[ids], r.filtered[ids]], r.stage[ids])
        knobs = m.knobs()
        self.cumulative.set_curve(r.cum_rank, r.cum_prob, knobs["top_p"], r.top_p_rank, r.size)
        rd = self.readouts
        rd["sampling.readout.kept"].setText(tr("sampling.kept", kept=f"{r.kept:,}", v=f"{r.size:,}"))
        rd["sampling.readout.entropy"].setText(f"{fmt(r.entropy)} → {fmt(r.entropy_filtered)} nats")
        rd["sampling.readout.perplexity"].setText(f"{fmt(r.perplexity)} → {fmt(r.perplexity_filtered)}")

        d, current = self._current_draws(r.kept)
        expected = m.draws * r.filtered[ids]
        if d is not None:
            self.draw_bars.show_bars(labels, [expected, d.counts[ids].astype(float)], r.stage[ids])
            p = "< 1e-300" if d.p_value < 1e-300 else fmt(d.p_value, 3)
            rd["sampling.readout.chi2"].setText(tr("sampling.chi2", chi2=fmt(d.chi2, 4), dof=d.dof, p=p))
        else:
            self.draw_bars.show_bars(labels, [expected, np.zeros_like(expected)], r.stage[ids])
            cancelled = self.model.draw_inputs(self.scores).key == self._cancelled_key
            rd["sampling.readout.chi2"].setText(tr("sampling.draws.cancelled" if cancelled else "sampling.draws.waiting"))
            notes.append(tr("sampling.draws.cancelled.note" if cancelled else "sampling.draws.note"))

        c = m.curves(self.scores)
        y = c[m.t_curve]
        now = {"entropy": r.entropy, "perplexity": r.perplexity}.get(m.t_curve)
        if now is None:  # tokens above 1 % and the top-2 gap: interpolate on the grid
            now = float(np.interp(math.log(m.temperature), np.log(CURVE_T), y))
        self.curves.set_curve(CURVE_T, y, m.temperature, now, tr(f"sampling.curve.{m.t_curve}"))

        if self.tabs.currentIndex() == GUMBEL_TAB or self._sync:  # 41 softmaxes of V: only when shown
            relaxed, hard = m.gumbel(self.scores)
            self.gumbel.show_bars(labels, [relaxed[ids], hard[ids]])
            if hard.argmax() not in set(ids.tolist()):
                notes.append(tr("sampling.gumbel.outside", label=r.vocab.label(int(hard.argmax()))))
            sharp = m.sharpening(self.scores)
            self.sharpening.set_curve(TAU_GRID, sharp, m.tau, float(relaxed.max()))

        if self.tabs.currentIndex() == ROUTER_TAB or self._sync:
            self._draw_router()
        self.note.setText("\n".join(notes))

    def _draw_router(self) -> None:
        m = self.model
        rt = m.router()
        experts = tuple(str(e + 1) for e in range(rt.gates.shape[1]))
        shown = min(ROUTER_SHOWN, rt.dense.shape[0])
        self.router_map.set_matrix(rt.dense[:shown], tuple(f"t{i + 1}" for i in range(shown)), experts)
        tokens, k = rt.indices.shape
        self.router_load.show_bars(experts, [rt.load / (tokens * k), rt.importance / tokens])
        self.ideal.setValue(1.0 / len(experts))
        busiest = int(rt.load.argmax())
        self.readouts["sampling.readout.router_load"].setText(tr(
            "sampling.router.busiest", expert=busiest + 1, share=f"{100 * rt.load[busiest] / (tokens * k):.1f}",
            ideal=f"{100 / len(experts):.1f}"))
        self.readouts["sampling.readout.router_cv2"].setText(fmt(rt.importance_cv2, 4))
