"""Attention: softmax once per query row of Q Kᵀ · scale, and why the scale is 1/√d_k."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
from PySide6.QtCore import QThread, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

import compute
from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.attention import MAX_LABELLED, AttentionModel, LoadError
from gui.model.base import ExportArray
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.views.calculator import StepTable
from gui.widgets.heatmap import Heatmap
from gui.widgets.plot import BarChart, Plot
from gui.widgets.sliders import ParamChoice, ParamSlider, ValueSlider

#: Matrices with more rows or columns than this are shown as block maxima.
DISPLAY_MAX = 512
#: The key dimensions of the d_k sweep (4 to 1024, log-spaced).
SWEEP_DK = np.unique(np.round(np.geomspace(4, 1024, 17)).astype(int))
SWEEP_DELAY_MS = 150
#: Token labels fit under a narrow plot up to this many columns; beyond, columns are numbered.
WORDS_ACROSS = 6
FILE_FILTER = "NumPy arrays (*.npz *.npy);;All files (*)"


def sparse_ticks(count: int, labels, most: int = MAX_LABELLED) -> list[tuple[float, str]]:
    """Every label when at most ``most``, numbers for every entry up to MAX_LABELLED, else about 8 numbers."""
    if count <= most:
        return [(i + 0.5, str(lb)) for i, lb in enumerate(labels)]
    if count <= MAX_LABELLED:
        return [(i + 0.5, str(i + 1)) for i in range(count)]
    step = max(1, 10 ** math.floor(math.log10(count / 8)))
    for mult in (1, 2, 5, 10):
        if count / (step * mult) <= 10:
            step *= mult
            break
    return [(i + 0.5, str(i + 1)) for i in range(0, count, step)]


class AttentionHeatmap(Heatmap):
    """A Heatmap in full-matrix coordinates that may show block maxima, a row outline and masked cells.

    The image always spans the full matrix (so clicks and hover read real
    rows and columns) even when it holds a pooled copy.  Masked cells get an
    overlay in the theme's muted colour, so they read apart from weights
    that are merely near 0.
    """

    def __init__(self, title: str, *, annotate: bool = False, **kwargs):
        super().__init__(title, **kwargs)
        self._annotate = annotate
        self._full: np.ndarray = np.zeros((0, 0))
        self._shape = (0, 0)
        self._ticks_key: tuple = ()
        self.overlay = pg.ImageItem(axisOrder="row-major")
        self.overlay.setZValue(4)
        self.overlay.hide()
        self.getPlotItem().addItem(self.overlay)

    def show_matrix(self, full: np.ndarray, rows, cols, *, masked: np.ndarray | None = None,
                    auto_levels: bool = False) -> tuple[int, int]:
        """Draw ``full`` (block maxima beyond DISPLAY_MAX); returns the pooling factors."""
        full = np.asarray(full, dtype=float)
        n, m = full.shape
        shown, (fr, fc) = compute.max_pool2d(full, DISPLAY_MAX, DISPLAY_MAX)
        shown = np.asarray(shown, dtype=float)
        finite = shown[np.isfinite(shown)]
        if self._diverging:
            top = float(np.abs(finite).max()) if finite.size else 0.0
            levels = (-top, top) if top > 0 else (-1.0, 1.0)
        elif auto_levels and finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            levels = (lo, hi) if hi > lo else (lo, lo + 1.0)
        else:
            levels = self._levels
        self.image.setImage(np.nan_to_num(shown, nan=0.0, posinf=0.0, neginf=0.0), levels=levels)
        width, height = shown.shape[1] * fc, shown.shape[0] * fr
        self.image.setRect(0, 0, width, height)
        self.colorbar.setLevels(levels)
        self._show_mask(masked, fr, fc, width, height)
        item = self.getPlotItem()
        key = (tuple(rows), tuple(cols))
        if key != self._ticks_key:
            self._ticks_key = key
            item.getAxis("left").setTicks([sparse_ticks(n, rows)])
            item.getAxis("bottom").setTicks([sparse_ticks(m, cols, WORDS_ACROSS)])
            item.setXRange(0, m, padding=0.02)
            item.setYRange(0, n, padding=0.02)
            self._rows, self._cols = tuple(rows), tuple(cols)
            self._matrix = shown
            self._make_texts(n * m if self._annotate and max(n, m) <= 8 else 0)
        self._matrix = shown
        self._full = full
        self._shape = (n, m)
        for k, text in enumerate(self._texts):
            i, j = divmod(k, m)
            text.setText(fmt(full[i, j], 2))
            text.setPos(j + 0.5, i + 0.5)
        self._color_texts()
        return fr, fc

    def _show_mask(self, masked, fr, fc, width, height) -> None:
        if masked is None or not masked.any():
            self.overlay.hide()
            return
        allowed, _ = compute.max_pool2d((~masked).astype(float), DISPLAY_MAX, DISPLAY_MAX)
        hidden = np.asarray(allowed) <= 0  # a block is drawn masked when all its cells are
        rgba = np.zeros(hidden.shape + (4,), dtype=np.uint8)
        c = pg.mkColor(themes.current().muted)
        rgba[hidden] = (c.red(), c.green(), c.blue(), 215)
        self.overlay.setImage(rgba, autoLevels=False, levels=(0, 255))
        self.overlay.setRect(0, 0, width, height)
        self.overlay.show()

    def set_row(self, row: int | None) -> None:
        """Outline query row ``row`` (or nothing)."""
        n, m = self._shape
        if row is None or not 0 <= row < n:
            self.highlight.hide()
            return
        self.highlight.setRect(0, row, m, 1)
        self.highlight.show()

    @property
    def full_matrix(self) -> np.ndarray:
        return self._full

    def cell_at(self, scene_pos):
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(p.y())), int(np.floor(p.x()))
        n, m = self._shape
        return (i, j) if 0 <= i < n and 0 <= j < m else None

    def _color_texts(self) -> None:
        if len(self._texts) != self._matrix.size:
            return
        super()._color_texts()

    def _describe_cell(self, x: float, y: float) -> str:
        i, j = int(np.floor(y)), int(np.floor(x))
        n, m = self._shape
        if not (0 <= i < n and 0 <= j < m):
            return ""
        row = self._rows[i] if i < len(self._rows) else str(i + 1)
        col = self._cols[j] if j < len(self._cols) else str(j + 1)
        return f"{self._value_name}[{row}, {col}] = {fmt(self._full[i, j], 4)}"


class HistogramPlot(Plot):
    """The entries of Q Kᵀ with and without the scale, as two step curves."""

    def __init__(self):
        super().__init__(tr("attention.hist.title"), x_label=tr("attention.hist.x"), y_label=tr("attention.hist.y"))
        item = self.getPlotItem()
        item.setMouseEnabled(x=False, y=False)
        self.add_legend(offset=(-6, 6))
        self.raw = item.plot([], [], name=tr("attention.hist.raw", std="–"))
        self.scaled = item.plot([], [], name=tr("attention.hist.scaled", std="–"))
        self.describe = lambda x, y: f"{tr('attention.hist.x')} = {fmt(x)}, {tr('attention.hist.y')} = {fmt(y)}"
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "scaled"):
            return
        self.raw.setPen(pg.mkPen(theme.secondary, width=2))
        self.scaled.setPen(pg.mkPen(theme.accent, width=2))

    def set_data(self, edges, raw, scaled, std_raw: float, std_scaled: float) -> None:
        self.raw.setData(edges, raw, stepMode="center")
        self.scaled.setData(edges, scaled, stepMode="center")
        legend = self.getPlotItem().legend
        fg = themes.current().foreground
        legend.items[0][1].setText(tr("attention.hist.raw", std=fmt(std_raw, 2)), color=fg)
        legend.items[1][1].setText(tr("attention.hist.scaled", std=fmt(std_scaled, 2)), color=fg)


class SweepPlot(Plot):
    """Entropy / ln n and the largest weight against d_k, scaled and not; std(q·k) beside √d_k on the right."""

    def __init__(self):
        super().__init__(tr("attention.sweep.title"), x_label=tr("attention.sweep.x"), y_label=tr("attention.sweep.y"))
        item = self.getPlotItem()
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        item.setYRange(0, 1.6, padding=0)
        item.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1.0)], []])
        item.setXRange(math.log10(4) - 0.05, math.log10(1024) + 0.05, padding=0)
        item.getAxis("bottom").setTicks([[(math.log10(d), str(d)) for d in (4, 16, 64, 256, 1024)], []])
        self.add_legend(offset=(4, 1), colCount=3, labelTextSize="7pt")
        self.entropy_scaled = item.plot([], [], name=tr("attention.sweep.h_scaled"))
        self.entropy_raw = item.plot([], [], name=tr("attention.sweep.h_raw"))
        self.max_scaled = item.plot([], [], name=tr("attention.sweep.max_scaled"))
        self.max_raw = item.plot([], [], name=tr("attention.sweep.max_raw"))
        # std(q·k) and √d_k on a right-hand axis of their own
        item.showAxis("right")
        self.right = pg.ViewBox()
        self.right.setMouseEnabled(x=False, y=False)
        item.scene().addItem(self.right)
        item.getAxis("right").linkToView(self.right)
        item.getAxis("right").setLabel(tr("attention.sweep.y2"))
        self.right.setXLink(item)
        self.std = pg.PlotDataItem([], [], symbol="o", symbolSize=5, name=tr("attention.sweep.std"))
        self.sqrt = pg.PlotDataItem([], [], name=tr("attention.sweep.sqrt"))
        self.right.addItem(self.std)
        self.right.addItem(self.sqrt)
        item.legend.addItem(self.std, tr("attention.sweep.std"))
        item.legend.addItem(self.sqrt, tr("attention.sweep.sqrt"))
        item.getViewBox().sigResized.connect(self._sync_right)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        self.describe = lambda x, y: f"d_k = {fmt(x, 0)}, {tr('attention.sweep.y')} = {fmt(y)}"
        self.apply_theme(themes.current())

    def _sync_right(self, *_args) -> None:
        self.right.setGeometry(self.getPlotItem().getViewBox().sceneBoundingRect())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "now_line"):
            return
        dash = pg.QtCore.Qt.PenStyle.DashLine
        self.entropy_scaled.setPen(pg.mkPen(theme.accent, width=2))
        self.entropy_raw.setPen(pg.mkPen(theme.accent, width=2, style=dash))
        self.max_scaled.setPen(pg.mkPen(theme.series[1], width=2))
        self.max_raw.setPen(pg.mkPen(theme.series[1], width=2, style=dash))
        self.std.setPen(None)
        self.std.setSymbolBrush(pg.mkBrush(theme.highlight))
        self.std.setSymbolPen(pg.mkPen(theme.background))
        self.sqrt.setPen(pg.mkPen(theme.muted, width=1.5))
        self.now_line.setPen(pg.mkPen(theme.highlight, width=1, style=dash))
        axis = self.getPlotItem().getAxis("right")
        axis.setPen(pg.mkPen(theme.muted))
        axis.setTextPen(pg.mkPen(theme.foreground))
        axis.setLabel(tr("attention.sweep.y2"), color=theme.foreground)
        for _sample, label in self.getPlotItem().legend.items:
            label.setText(label.text, color=theme.foreground)

    def set_sweep(self, sweep: dict | None, n: int) -> None:
        if sweep is None:
            for c in (self.entropy_scaled, self.entropy_raw, self.max_scaled, self.max_raw, self.std, self.sqrt):
                c.setData([], [])
            return
        d = np.asarray(sweep["d_k"], dtype=float)
        ln_n = math.log(n) if n > 1 else 1.0
        self.entropy_scaled.setData(d, np.asarray(sweep["entropy_scaled"]) / ln_n)
        self.entropy_raw.setData(d, np.asarray(sweep["entropy_unscaled"]) / ln_n)
        self.max_scaled.setData(d, sweep["max_weight_scaled"])
        self.max_raw.setData(d, sweep["max_weight_unscaled"])
        x = np.log10(d)  # the right box is not in log mode: it shares the left box's log10 x
        self.std.setData(x, sweep["std_qk"])
        self.sqrt.setData(x, sweep["sqrt_dk"])
        top = float(max(np.max(sweep["std_qk"]), np.max(sweep["sqrt_dk"])))
        self.right.setYRange(0, top * 1.05, padding=0)

    def mark(self, d_k: int) -> None:
        self.now_line.setValue(math.log10(d_k))


class SweepThread(QThread):
    """Runs compute.dk_sweep off the GUI thread; cancel() stops it at the next check."""

    progressed = Signal(float)

    def __init__(self, n: int, seed: int):
        super().__init__()
        self.n, self.seed = n, seed
        self.result: dict | None = None
        self.error: str | None = None
        self.cancelled = False
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def _progress(self, *args) -> None:
        if len(args) >= 2 and args[1]:
            frac = float(args[0]) / float(args[1])
        elif args:
            frac = float(args[0])
        else:
            return
        self.progressed.emit(frac)

    def run(self) -> None:
        try:
            self.result = compute.dk_sweep(self.n, SWEEP_DK, seed=self.seed, heads=1,
                                           progress=self._progress, cancelled=self._cancel.is_set)
        except compute.Cancelled:
            self.cancelled = True
        except Exception as exc:  # noqa: BLE001 - shown to the user, never raised into Qt
            self.error = f"{type(exc).__name__}: {exc}"


class IntSpin(QSpinBox):
    """A spin box bound to one integer parameter; a refused value goes to ``message`` and is undone."""

    def __init__(self, view: AttentionView, name: str):
        super().__init__()
        model = view.model
        spec = model.params()[name]
        self.setRange(int(spec.minimum), int(spec.maximum))
        self.setKeyboardTracking(False)
        self.setToolTip(tr(f"param.{name}.tooltip"))
        self.model, self.name, self.view = model, name, view
        self._show(getattr(model, name))
        self.valueChanged.connect(self._edited)
        connect_while_alive(self, getattr(model.events, name), self._show)

    def _edited(self, value: int) -> None:
        try:
            self.model.set_param(self.name, value)
        except ValueError as exc:
            self.view.tell(str(exc), error=True)
            self._show(getattr(self.model, self.name))

    def _show(self, value: int) -> None:
        with signals_blocked(self):
            self.setValue(int(value))


class AttentionView(BaseView):
    model: AttentionModel

    def build(self) -> None:
        self.auto_levels = False
        self.sweep_data: dict | None = None
        self._sweep_n: int | None = None
        self._sweep_thread: SweepThread | None = None
        self._stale_threads: list[SweepThread] = []
        self._sweep_timer = QTimer(self)
        self._sweep_timer.setSingleShot(True)
        self._sweep_timer.setInterval(SWEEP_DELAY_MS)
        self._sweep_timer.timeout.connect(self.start_sweep)
        self.setAcceptDrops(True)
        m = self.model

        self.source = ParamChoice(m, "source")
        self.sentence = QLineEdit(m.sentence)
        self.sentence.setToolTip(tr("attention.sentence.tooltip"))
        self.sentence.setPlaceholderText(tr("attention.sentence.placeholder"))
        self.sentence.editingFinished.connect(self._sentence_edited)
        connect_while_alive(self, m.events.sentence, self._show_sentence)
        self.load_button = QPushButton(tr("attention.load"))
        self.load_button.setToolTip(tr("attention.load.tooltip"))
        self.load_button.clicked.connect(self.choose_file)
        self.file_label = QLabel()
        self.file_label.setWordWrap(True)
        self.file_label.setObjectName("attention.file")
        file_row = QWidget()
        fr = QHBoxLayout(file_row)
        fr.setContentsMargins(0, 0, 0, 0)
        fr.addWidget(self.load_button)
        fr.addWidget(self.file_label, 1)

        self.spins = {name: IntSpin(self, name) for name in ("n", "heads", "seed", "padding", "head", "query")}
        spec = m.params()["d_k"]
        self.d_k = ValueSlider(tr("param.d_k.label"), spec.minimum, spec.maximum, spec.default, log=True,
                               decimals=0, tooltip=tr("param.d_k.tooltip"))
        self.d_k.setValue(m.d_k)
        self.d_k.valueEdited.connect(self._d_k_edited)
        connect_while_alive(self, m.events.d_k, self.d_k.setValue)
        self.scaling = ParamChoice(m, "scaling")
        self.temperature = ParamSlider(m, "temperature")
        self.temperature.setToolTip(tr("attention.temperature.tooltip"))
        self.causal = QCheckBox(tr("param.causal.label"))
        self.causal.setToolTip(tr("param.causal.tooltip"))
        self.causal.toggled.connect(lambda on: m.set_param("causal", "on" if on else "off"))
        connect_while_alive(self, m.events.causal, self._show_causal)
        self._show_causal(m.causal)
        self.auto_box = QCheckBox(tr("attention.auto_levels"))
        self.auto_box.setToolTip(tr("attention.auto_levels.tooltip"))
        self.auto_box.toggled.connect(self._auto_toggled)

        form_box = QWidget()
        form = QFormLayout(form_box)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(4)
        form.addRow(tr("param.n.label") + ":", self.spins["n"])
        form.addRow(tr("param.heads.label") + ":", self.spins["heads"])
        form.addRow(tr("param.seed.label") + ":", self.spins["seed"])
        form.addRow(tr("param.padding.label") + ":", self.spins["padding"])
        form.addRow(tr("param.head.label") + ":", self.spins["head"])
        form.addRow(tr("param.query.label") + ":", self.spins["query"])
        self.spins["seed"].setToolTip(tr("attention.seed.tooltip"))
        readouts = self.readout_box(("attention.readout.scale", "attention.readout.std",
                                     "attention.readout.row", "attention.readout.masked",
                                     "attention.readout.memory"))
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setObjectName("attention.note")
        self.sweep_bar = QProgressBar()
        self.sweep_bar.setRange(0, 100)
        self.sweep_bar.setFormat(tr("attention.sweep.progress"))
        self.sweep_bar.setToolTip(tr("attention.sweep.progress.tooltip"))
        self.sweep_cancel = QPushButton(tr("attention.sweep.cancel"))
        self.sweep_cancel.clicked.connect(self.cancel_sweep)
        self.sweep_run = QPushButton(tr("attention.sweep.run"))
        self.sweep_run.setToolTip(tr("attention.sweep.run.tooltip"))
        self.sweep_run.clicked.connect(self.start_sweep)
        sweep_row = QWidget()
        sr = QHBoxLayout(sweep_row)
        sr.setContentsMargins(0, 0, 0, 0)
        sr.addWidget(self.sweep_bar, 1)
        sr.addWidget(self.sweep_cancel)
        sr.addWidget(self.sweep_run)

        toggles = QWidget()
        tl = QHBoxLayout(toggles)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.causal)
        tl.addWidget(self.auto_box)
        tl.addStretch(1)

        top = QWidget()  # the first control stretches: the source and data block
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(self.source)
        tv.addWidget(self.sentence)
        tv.addWidget(file_row)
        tv.addWidget(form_box)
        for w in (self.d_k, self.scaling, self.temperature, toggles):
            tv.addWidget(w)
        tv.addStretch(1)

        self.weights = self.add_plot("weights", AttentionHeatmap(
            tr("attention.weights.title"), diverging=False, annotate=True, value_name=tr("attention.weights.value")))
        self.weights.cellClicked.connect(self._cell_clicked)
        self.bars = self.add_plot("row", BarChart(tr("attention.row.title", label="1"), [("α", "accent")],
                                                  value_labels=False, value_name="α"))
        self.scores_map = self.add_plot("scores", AttentionHeatmap(
            tr("attention.scores.title"), diverging=True, value_name=tr("attention.scores.value")))
        self.scores_map.cellClicked.connect(self._cell_clicked)
        self.histogram = self.add_plot("histogram", HistogramPlot())
        self.output_map = self.add_plot("output", AttentionHeatmap(
            tr("attention.output.title"), diverging=True, value_name=tr("attention.output.value")))
        self.output_map.cellClicked.connect(lambda i, _j: self._cell_clicked(i, 0))
        self.sweep = self.add_plot("sweep", SweepPlot())
        self.steps = StepTable()
        grid_box = QWidget()
        grid = QGridLayout(grid_box)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.weights, 0, 0)
        grid.addWidget(self.bars, 0, 1)
        grid.addWidget(self.scores_map, 1, 0)
        grid.addWidget(self.histogram, 1, 1)
        grid.addWidget(self.output_map, 2, 0)
        grid.addWidget(self.sweep, 2, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 5)
        grid.setRowStretch(1, 4)
        grid.setRowStretch(2, 4)
        plots = QSplitter(pg.QtCore.Qt.Orientation.Vertical)
        plots.addWidget(grid_box)
        plots.addWidget(self.steps)
        plots.setSizes([640, 150])
        plots.setChildrenCollapsible(False)
        self.arrange([top, readouts, self.note, sweep_row],
                     plots, min_width=290)
        for name in ("n", "heads", "seed", "source"):
            connect_while_alive(self, getattr(m.events, name), self._schedule_sweep)
        self.start_sweep()

    # -- user actions ---------------------------------------------------------------------
    def tell(self, text: str, *, error: bool = False) -> None:
        """A message for the status bar and the note under the controls."""
        self._message = (text, error)
        self._show_note()
        self.status.emit(text)

    def _show_note(self, extra: str = "") -> None:
        text, error = getattr(self, "_message", ("", False))
        parts = [p for p in (text, extra) if p]
        self.note.setText("\n".join(parts))
        colour = themes.current().highlight if error else themes.current().muted
        self.note.setStyleSheet(f"color: {colour}")

    def _sentence_edited(self) -> None:
        text = self.sentence.text()
        if text != self.model.sentence:
            self.model.sentence = text

    def _show_sentence(self, text: str) -> None:
        if self.sentence.text() != text:
            self.sentence.setText(text)

    def _show_causal(self, value: str) -> None:
        with signals_blocked(self.causal):
            self.causal.setChecked(value == "on")

    def _auto_toggled(self, on: bool) -> None:
        self.auto_levels = on
        self.schedule_redraw()

    def _d_k_edited(self, value: float) -> None:
        try:
            self.model.set_param("d_k", int(round(value)))
        except ValueError as exc:
            self.tell(str(exc), error=True)
            self.d_k.setValue(self.model.d_k)

    def _cell_clicked(self, row: int, _col: int) -> None:
        self.model.set_param("query", min(row + 1, int(self.model.params()["query"].maximum)))

    def load_path(self, path: str | Path) -> bool:
        """Load a file into the model; on failure the message says why and nothing changes."""
        try:
            loaded = self.model.load_file(path)
        except LoadError as exc:
            self.tell(str(exc), error=True)
            return False
        h, n_q, d = loaded.q.shape
        self.tell(tr("attention.loaded", name=Path(path).name, heads=h, n_q=n_q, n_k=loaded.k.shape[1], d=d))
        return True

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("attention.load.dialog"), "", FILE_FILTER)
        if path:
            self.load_path(path)

    @staticmethod
    def _dropped_file(event) -> str | None:
        mime = event.mimeData()
        if mime is None or not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile():
                return url.toLocalFile()
        return None

    def dragEnterEvent(self, event) -> None:
        if self._dropped_file(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        path = self._dropped_file(event)
        if path is None:
            event.ignore()
            return
        event.acceptProposedAction()
        self.load_path(path)

    # -- the d_k sweep ----------------------------------------------------------------------
    def _schedule_sweep(self, *_args) -> None:
        self._sweep_timer.start()

    def sweep_n(self) -> int:
        return self.model.shape()[2]

    def start_sweep(self) -> None:
        """(Re)start the sweep for the current n; a running one for another n is cancelled."""
        self._sweep_timer.stop()
        n = self.sweep_n()
        if self._sweep_thread is not None:
            if self._sweep_thread.n == n and self._sweep_thread.seed == self.model.seed:
                return
            self.cancel_sweep()
        if self.sweep_data is not None and self._sweep_n == (n, self.model.seed):
            return
        thread = SweepThread(n, self.model.seed)
        thread.progressed.connect(self._sweep_progress)
        thread.finished.connect(lambda t=thread: self._sweep_finished(t))
        self._sweep_thread = thread
        self.sweep_bar.setValue(0)
        self.sweep_bar.setFormat(tr("attention.sweep.progress"))
        self.sweep_cancel.setEnabled(True)
        thread.start()

    def cancel_sweep(self) -> None:
        thread = self._sweep_thread
        if thread is None:
            return
        thread.cancel()
        self._stale_threads.append(thread)
        self._sweep_thread = None
        self.sweep_cancel.setEnabled(False)
        self.sweep_bar.setFormat(tr("attention.sweep.cancelled"))

    @property
    def sweep_running(self) -> bool:
        return self._sweep_thread is not None or any(t.isRunning() for t in self._stale_threads)

    def _sweep_progress(self, frac: float) -> None:
        if self.sender() is self._sweep_thread:
            self.sweep_bar.setValue(round(100 * frac))

    def _sweep_finished(self, thread: SweepThread) -> None:
        if thread in self._stale_threads:
            self._stale_threads.remove(thread)
        if thread is not self._sweep_thread:
            thread.deleteLater()
            return
        self._sweep_thread = None
        self.sweep_cancel.setEnabled(False)
        if thread.result is not None:
            self.sweep_data = thread.result
            self._sweep_n = (thread.n, thread.seed)
            self.sweep_bar.setValue(100)
            self.sweep_bar.setFormat(tr("attention.sweep.done", n=thread.n))
            self.sweep.set_sweep(self.sweep_data, thread.n)
        elif thread.error:
            self.tell(thread.error, error=True)
        thread.deleteLater()

    def wait_for_workers(self, timeout_ms: int = 30000) -> None:
        """Cancel nothing, but let running work finish and deliver (export, tests)."""
        thread = self._sweep_thread
        if thread is not None:
            thread.wait(timeout_ms)
            self._sweep_finished(thread)

    def stop_workers(self) -> None:
        """Cancel every sweep and wait for the threads to end (on close)."""
        self._sweep_timer.stop()
        self.cancel_sweep()
        for thread in list(self._stale_threads):
            thread.wait(30000)
        self._stale_threads.clear()

    def closeEvent(self, event) -> None:
        self.stop_workers()
        super().closeEvent(event)

    def flush(self) -> None:
        """Redraw now; a sweep in progress is finished first so that exports are complete."""
        if self._sweep_timer.isActive():
            self.start_sweep()
        self.wait_for_workers()
        super().flush()

    def arrays(self) -> dict[str, ExportArray]:
        out = self.model.arrays(self.scores)
        if self.sweep_data is not None:
            s = self.sweep_data
            keys = ("d_k", "entropy_scaled", "entropy_unscaled", "max_weight_scaled", "max_weight_unscaled",
                    "std_qk", "sqrt_dk")
            out["dk_sweep"] = ExportArray(np.column_stack([np.asarray(s[k], dtype=float) for k in keys]), keys)
        return out

    # -- drawing ------------------------------------------------------------------------------
    def redraw(self) -> None:
        m = self.model
        file_source = m.source == "file" and m.loaded is not None
        for name in ("n", "heads"):
            self.spins[name].setEnabled(m.source == "random" or (m.source == "file" and not file_source))
        self.spins["heads"].setEnabled(not file_source)
        self.d_k.setEnabled(not file_source)
        self.spins["seed"].setEnabled(not file_source)
        self.sentence.setVisible(m.source == "sentence")
        self.temperature.setEnabled(m.scaling == "custom")
        self.file_label.setText(Path(m.file_path).name if m.file_path else tr("attention.no_file"))
        try:
            r = m.result()
        except MemoryError as exc:
            self.tell(str(exc), error=True)
            return
        h, q = r.head, r.query
        labels_k, labels_q = r.k_labels, r.q_labels
        masked = ~r.allowed[h]
        fr, fc = self.weights.show_matrix(r.weights[h], labels_q, labels_k, masked=masked,
                                          auto_levels=self.auto_levels)
        self.weights.set_row(q)
        self.weights.set_title(tr("attention.weights.title_head", head=h + 1, heads=r.heads))
        self.scores_map.show_matrix(r.raw[h], labels_q, labels_k, masked=masked)
        self.scores_map.set_row(q)
        d_cols = tuple(str(j + 1) for j in range(r.output.shape[2]))
        self.output_map.show_matrix(r.output[h], labels_q, d_cols)
        self.output_map.set_row(q)
        self.bars.set_title(tr("attention.row.title", label=labels_q[q]))
        self.bars.set_data(labels_k, [r.row])
        if len(labels_k) > WORDS_ACROSS:
            self.bars.getPlotItem().getAxis("bottom").setTicks(
                [[(t - 0.5, s) for t, s in sparse_ticks(len(labels_k), labels_k, WORDS_ACROSS)]])
        top = float(r.row.max()) if r.row.size else 1.0
        self.bars.set_y_range(-0.01, 1.12 if top > 0.25 or not self.auto_levels else top * 1.15)
        self.steps.show_table(labels_k, r.table())
        self.histogram.set_data(r.hist_edges, r.hist_raw, r.hist_scaled, r.std_raw, r.std_scaled)
        self.sweep.mark(r.q.shape[2])
        if self._sweep_n is not None and self._sweep_n[0] == r.n_k:
            self.sweep.set_sweep(self.sweep_data, r.n_k)
        elif self._sweep_thread is None and self.sweep_data is not None:
            self.sweep.set_sweep(None, r.n_k)
        d = r.q.shape[2]
        how = {"sqrt_dk": f"1/√{d} = {fmt(r.scale, 4)}", "none": "1 (no scale)",
               "custom": f"1/T = {fmt(r.scale, 4)}"}[m.scaling]
        self.readouts["attention.readout.scale"].setText(how)
        self.readouts["attention.readout.std"].setText(f"{fmt(r.std_raw, 2)} → {fmt(r.std_scaled, 2)}")
        probs = r.steps.probs
        if np.isnan(probs).any():
            self.readouts["attention.readout.row"].setText(tr("attention.row.masked"))
        else:
            ent = float(compute.entropy(probs))
            self.readouts["attention.readout.row"].setText(f"max {fmt(probs.max())}, H {fmt(ent)}")
        empty = r.masked_row_indices
        self.readouts["attention.readout.masked"].setText(
            tr("attention.masked.none") if not empty else
            tr("attention.masked.rows", count=len(empty), rows=", ".join(labels_q[i] for i in empty[:8])
               + (" …" if len(empty) > 8 else "")))
        self.readouts["attention.readout.memory"].setText(f"{r.memory / 1024**2:.2f} MiB")
        notes = []
        if r.note:
            notes.append(r.note)
        if fr > 1 or fc > 1:
            notes.append(tr("attention.pooled", rows=-(-r.n_q // fr), cols=-(-r.n_k // fc), n_q=r.n_q, n_k=r.n_k))
        if empty:
            notes.append(tr("attention.masked.note"))
        self._show_note("\n".join(notes))
