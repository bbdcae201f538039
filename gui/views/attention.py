"""Attention: softmax once per query row of Q Kᵀ · scale, and why the scale is 1/√d_k."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QThread, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QKeySequence
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
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

import compute
from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.attention import (
    MAX_LABELLED,
    AttentionCore,
    AttentionModel,
    CoreInputs,
    LoadError,
    compute_core,
)
from gui.model.base import ExportArray
from gui.model.scores import parse_score
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets.heatmap import Heatmap
from gui.widgets.plot import BarChart, Plot
from gui.widgets.sliders import ParamChoice, ParamSlider, ParamSpin, ValueSlider
from gui.widgets.step_table import StepTable

#: Matrices with more rows or columns than this are shown as block maxima.
DISPLAY_MAX = 512
#: The small heatmaps of the heads grid show block maxima beyond this many rows or columns.
TILE_MAX = 128
#: The heads grid shows at most this many heads.
MAX_TILES = 16
#: The key dimensions of the d_k sweep (4 to 1024, log-spaced).
SWEEP_DK = np.unique(np.round(np.geomspace(4, 1024, 17)).astype(int))
SWEEP_DELAY_MS = 150
#: Token labels fit under a narrow plot up to this many columns; beyond, columns are numbered.
WORDS_ACROSS = 6
FILE_FILTER = "NumPy arrays (*.npz *.npy);;All files (*)"
#: Inputs with at least this many score cells (heads x n_q x n_k) are computed in a worker thread.
ASYNC_CELLS = 512 * 512
#: ... and so are inputs needing at least this many multiply-adds (512 x 512 x 2 x 64: about 60 ms).
ASYNC_WORK = 512 * 512 * 128


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


def few_ticks(count: int, most: int = 4) -> list[tuple[float, str]]:
    """At most ``most`` numbered ticks (1-based) at steps of 1, 2, 5, 10, 20, ... (small plots)."""
    k, step = 0, 1
    while -(-count // step) > most:
        k += 1
        step = (1, 2, 5)[k % 3] * 10 ** (k // 3)
    return [(i + 0.5, str(i + 1)) for i in range(0, count, step)]


class AttentionHeatmap(Heatmap):
    """A Heatmap in full-matrix coordinates that may show block maxima, a row outline and masked cells.

    The image always spans the full matrix (so clicks and hover read real
    rows and columns) even when it holds a pooled copy.  Masked cells get an
    overlay in the theme's muted colour, so they read apart from weights
    that are merely near 0.
    """

    def __init__(self, title: str, *, annotate: bool = False, display_max: int = DISPLAY_MAX,
                 compact: bool = False, **kwargs):
        super().__init__(title, **kwargs)
        self._annotate = annotate
        self.display_max = display_max
        self.compact = compact  # a few numbered ticks only (the heads grid's small tiles)
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
        shown, (fr, fc) = compute.max_pool2d(full, self.display_max, self.display_max)
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
            if self.compact:
                item.getAxis("left").setTicks([few_ticks(n)])
                item.getAxis("bottom").setTicks([few_ticks(m)])
            else:
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
            v = full[i, j]  # weights lie in 0..1: two decimals always fit the cell (hover for more)
            text.setText(f"{v:.2f}" if np.isfinite(v) else fmt(v))
            text.setPos(j + 0.5, i + 0.5)
        self._color_texts()
        return fr, fc

    def _show_mask(self, masked, fr, fc, width, height) -> None:
        if masked is None or not masked.any():
            self.overlay.hide()
            return
        allowed, _ = compute.max_pool2d((~masked).astype(float), self.display_max, self.display_max)
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


class HeadTile(AttentionHeatmap):
    """One head's weights in the heads grid: small, no annotations, no colour bar of its own."""

    def __init__(self, head: int):
        super().__init__(tr("attention.grid.tile", head=head + 1), diverging=False, annotate=False,
                         display_max=TILE_MAX, compact=True, value_name=tr("attention.weights.value"))
        self.head = head
        self.setMinimumSize(90, 80)
        item = self.getPlotItem()
        item.layout.removeItem(self.colorbar)  # one 0-to-1 scale: the bar would crowd a small tile
        self.colorbar.hide()
        item.setTitle(self._title, size="8pt")

    def apply_theme(self, theme: themes.Theme) -> None:
        super().apply_theme(theme)
        self.getPlotItem().setTitle(self._title, color=theme.foreground, size="8pt")


class HeadsGrid(QWidget):
    """Every head's weight matrix as a small heatmap (up to 16), in a near-square grid.

    ``rowClicked(head, row)`` (0-based) fires on a click in a tile.
    """

    rowClicked = Signal(int, int)

    def __init__(self):
        super().__init__()
        self.setObjectName("attention.heads_grid")
        self.tiles: list[HeadTile] = []
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(2)
        self._cols = 0

    def _tile(self, h: int) -> HeadTile:
        while len(self.tiles) <= h:  # made when first needed, then kept
            tile = HeadTile(len(self.tiles))
            tile.cellClicked.connect(lambda i, _j, head=tile.head: self.rowClicked.emit(head, i))
            self.tiles.append(tile)
        return self.tiles[h]

    def show_heads(self, weights: np.ndarray, allowed: np.ndarray, labels_q, labels_k, *,
                   query: int, auto_levels: bool) -> list[HeadTile]:
        """Draw weights[h] for every head; returns the visible tiles."""
        heads = min(weights.shape[0], MAX_TILES)
        cols = math.ceil(math.sqrt(heads))
        shown = [self._tile(h) for h in range(heads)]
        if cols != self._cols or any(self._grid.indexOf(t) < 0 for t in shown):
            for t in self.tiles:
                self._grid.removeWidget(t)
                t.hide()
            for h, t in enumerate(shown):
                self._grid.addWidget(t, h // cols, h % cols)
            self._cols = cols
        for h, t in enumerate(shown):
            t.getPlotItem().showAxis("bottom", heads <= 4)  # many small tiles: room for the matrix
            masked = ~allowed[h]
            t.show_matrix(weights[h], labels_q, labels_k, masked=masked if masked.any() else None,
                          auto_levels=auto_levels)
            t.set_row(query)
            t.show()
        for t in self.tiles[heads:]:
            t.hide()
        return shown


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
        self.add_legend(offset=(4, 1), colCount=2, labelTextSize="7pt")  # three columns overflow the plot
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


class CoreThread(QThread):
    """Computes one AttentionCore from an immutable snapshot off the GUI thread.

    NumPy cannot be interrupted mid-product, so there is no cancel inside:
    the view discards a result whose key is no longer current.  ``done``
    (queued to the GUI thread) carries the thread itself.
    """

    done = Signal(object)

    def __init__(self, inputs: CoreInputs):
        super().__init__()
        self.inputs = inputs
        self.key = inputs.key
        self.result: AttentionCore | None = None
        self.error: str | None = None
        self.cancelled = False  # set by the view: the result is dropped when it arrives
        self.delivered = False

    def run(self) -> None:
        try:
            self.result = compute_core(self.inputs)
        except Exception as exc:  # noqa: BLE001 - shown to the user, never raised into Qt
            self.error = f"{type(exc).__name__}: {exc}"
        self.done.emit(self)


def parse_entry(text: str) -> float:
    """A table entry: a finite number (Q, K and V must be finite, as in a loaded file).

    Reading the text is the score table's :func:`parse_score`; only the
    finiteness rule is the tables' own.
    """
    value, _note = parse_score(text)
    if not math.isfinite(value):
        raise ValueError(f"{text.strip()} is not finite; Q, K and V need finite numbers")
    return value


class MatrixTableModel(QAbstractTableModel):
    """One of the tables source's arrays (rows = tokens, columns = d) over the view model.

    A cell that does not parse keeps its last good value; it shows what was
    typed, in red, with the reason as its tooltip (as the score table does).
    """

    message = Signal(str)

    def __init__(self, model: AttentionModel, which: str, parent=None):
        super().__init__(parent)
        self.model, self.which = model, which
        self.invalid: dict[tuple[int, int], tuple[str, str]] = {}
        self._shape = self.array().shape

    def array(self) -> np.ndarray:
        tables = self.model.tables
        return np.zeros((0, 0)) if tables is None else getattr(tables, self.which)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shape[0]

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shape[1]

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return f"d{section + 1}" if orientation == Qt.Orientation.Horizontal else str(section + 1)

    def flags(self, index):
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        cell = (index.row(), index.column())
        bad = self.invalid.get(cell)
        value = float(self.array()[cell])
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if bad:
                return bad[0]
            return fmt(value, 3) if role == Qt.ItemDataRole.DisplayRole else repr(value)
        if role == Qt.ItemDataRole.BackgroundRole and bad:
            return QBrush(QColor(themes.current().invalid))
        if role == Qt.ItemDataRole.ToolTipRole:
            return tr("attention.table.invalid", reason=bad[1], value=repr(value)) if bad else repr(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        r, c = index.row(), index.column()
        text = str(value)
        try:
            number = parse_entry(text)
        except ValueError as exc:
            self.invalid[(r, c)] = (text, str(exc))
            self.dataChanged.emit(index, index)
            self.message.emit(tr("attention.table.invalid", reason=exc, value=repr(float(self.array()[r, c]))))
            return True
        self.invalid.pop((r, c), None)
        self.model.tables = self.model.start_tables().with_value(self.which, r, c, number)
        return True

    def paste_tsv(self, text: str, row: int, col: int) -> tuple[int, int]:
        """Paste a tab-separated block (a spreadsheet's copy) at (row, col); cells beyond the
        table are dropped.  A first line without a number, above cells that mostly are, is a header.
        The whole paste is one change.  Returns (cells pasted, invalid cells)."""
        lines = [ln.split("\t") for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        lines = [cells for cells in lines if any(c.strip() for c in cells)]

        def number(cell: str) -> bool:
            try:
                parse_entry(cell)
            except ValueError:
                return False
            return True

        if len(lines) > 1 and not any(map(number, lines[0])):
            rest = [number(c) for cells in lines[1:] for c in cells]
            if 2 * sum(rest) > len(rest):
                lines = lines[1:]  # a header row: no number in it, mostly numbers below
        if not lines:
            return 0, 0
        n, m = self._shape
        width = max(len(cells) for cells in lines)
        block = np.zeros((len(lines), width))
        good = np.zeros(block.shape, dtype=bool)
        bad: dict[tuple[int, int], tuple[str, str]] = {}
        count = 0
        for i, cells in enumerate(lines):
            for j, cell in enumerate(cells):
                if row + i >= n or col + j >= m:
                    continue
                count += 1
                try:
                    block[i, j] = parse_entry(cell)
                    good[i, j] = True
                    self.invalid.pop((row + i, col + j), None)
                except ValueError as exc:
                    bad[(row + i, col + j)] = (cell, str(exc))
        self.invalid.update(bad)
        self.model.tables = self.model.start_tables().with_block(self.which, row, col, block, good)
        self.refresh()
        return count, len(bad)

    def refresh(self) -> None:
        """Follow the model's arrays (a new shape resets the table and its red cells)."""
        shape = self.array().shape
        if shape != self._shape:
            self.beginResetModel()
            self._shape = shape
            self.invalid.clear()
            self.endResetModel()
        elif shape[0] and shape[1]:
            self.dataChanged.emit(self.index(0, 0), self.index(shape[0] - 1, shape[1] - 1))


class MatrixTable(QTableView):
    """An editable Q, K or V table; paste() (Edit ▸ Paste, Ctrl+V) takes a TSV block."""

    message = Signal(str)

    def __init__(self, model: AttentionModel, which: str):
        super().__init__()
        self.setObjectName(f"attention.table.{which}")
        self.table_model = MatrixTableModel(model, which, self)
        self.table_model.message.connect(self.message)
        self.setModel(self.table_model)
        self.horizontalHeader().setDefaultSectionSize(52)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setToolTip(tr("attention.table.tooltip"))

    def paste(self, text: str | None = None) -> None:
        if text is None:
            text = QGuiApplication.clipboard().text()
        cur = self.currentIndex()
        row, col = (cur.row(), cur.column()) if cur.isValid() else (0, 0)
        count, bad = self.table_model.paste_tsv(text, row, col)
        if not count:
            self.message.emit(tr("attention.table.paste_empty"))
        elif bad:
            self.message.emit(tr("attention.table.paste_bad", count=count, bad=bad))
        else:
            self.message.emit(tr("attention.table.pasted", count=count))

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Paste):
            self.paste()
            event.accept()
            return
        super().keyPressEvent(event)


class AttentionView(BaseView):
    model: AttentionModel

    def build(self) -> None:
        self.auto_levels = False
        self.sweep_data: dict | None = None
        self._sweep_n: int | None = None
        self._sweep_thread: SweepThread | None = None
        self._shut_down = False  # set by shutdown(): no new threads after that
        self._stale_threads: list[SweepThread] = []
        self._sweep_timer = QTimer(self)
        self._sweep_timer.setSingleShot(True)
        self._sweep_timer.setInterval(SWEEP_DELAY_MS)
        self._sweep_timer.timeout.connect(self.start_sweep)
        self._core_thread: CoreThread | None = None  # the job whose result is wanted
        self._core_threads: list[CoreThread] = []  # every job not yet delivered (cancelled ones too)
        self._sync_compute = False  # flush(): compute on this thread whatever the size
        self.computing = False  # a redraw is showing an older result while a job runs
        self._drawn: tuple = ()  # what the plots show: (core id, head, query, auto levels, theme)
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

        if m.source == "tables":
            m.start_tables()
        self.tables_tabs = QTabWidget()
        self.tables_tabs.setObjectName("attention.tables")
        self.matrix_tables: dict[str, MatrixTable] = {}
        for which in ("q", "k", "v"):
            table = MatrixTable(m, which)
            table.message.connect(lambda text: self.tell(text))
            self.matrix_tables[which] = table
            self.tables_tabs.addTab(table, which.upper())
        self.tables_tabs.setMinimumHeight(180)
        connect_while_alive(self, m.events.tables, self._tables_changed)
        connect_while_alive(self, m.events.source, self._source_changed)
        self.spins = {name: ParamSpin(m, name) for name in ("n", "heads", "seed", "padding", "head", "query")}
        for spin in self.spins.values():
            spin.message.connect(lambda text: self.tell(text, error=True))
        self.spins["head"].setSpecialValueText(tr("attention.head.all"))  # 0: every head, in a grid
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
        self.compute_bar = QProgressBar()
        self.compute_bar.setRange(0, 0)  # busy: NumPy cannot report progress inside a product
        self.compute_bar.setFormat(tr("attention.compute.progress"))
        self.compute_bar.setTextVisible(True)
        self.compute_bar.setToolTip(tr("attention.compute.progress.tooltip"))
        self.compute_cancel = QPushButton(tr("attention.compute.cancel"))
        self.compute_cancel.setToolTip(tr("attention.compute.cancel.tooltip"))
        self.compute_cancel.clicked.connect(self.cancel_compute)
        self.compute_row = QWidget()
        cr = QHBoxLayout(self.compute_row)
        cr.setContentsMargins(0, 0, 0, 0)
        cr.addWidget(self.compute_bar, 1)
        cr.addWidget(self.compute_cancel)
        self.compute_row.hide()

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
        tv.addWidget(self.tables_tabs)
        tv.addWidget(form_box)
        for w in (self.d_k, self.scaling, self.temperature, toggles):
            tv.addWidget(w)
        tv.addStretch(1)

        self.weights = self.add_plot("weights", AttentionHeatmap(
            tr("attention.weights.title"), diverging=False, annotate=True, value_name=tr("attention.weights.value")))
        self.weights.cellClicked.connect(self._cell_clicked)
        self.heads_grid = HeadsGrid()
        self.heads_grid.rowClicked.connect(self._head_clicked)
        self.weights_stack = QStackedWidget()
        self.weights_stack.addWidget(self.weights)
        self.weights_stack.addWidget(self.heads_grid)
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
        grid.addWidget(self.weights_stack, 0, 0)
        grid.addWidget(self.bars, 0, 1)
        grid.addWidget(self.scores_map, 1, 0)
        grid.addWidget(self.histogram, 1, 1)
        grid.addWidget(self.output_map, 2, 0)
        grid.addWidget(self.sweep, 2, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(0, 5)
        self._plot_grid = grid  # the heads grid gets a taller first row
        grid.setRowStretch(1, 4)
        grid.setRowStretch(2, 4)
        plots = QSplitter(pg.QtCore.Qt.Orientation.Vertical)
        plots.addWidget(grid_box)
        plots.addWidget(self.steps)
        plots.setSizes([640, 150])
        plots.setChildrenCollapsible(False)
        self.arrange([top, readouts, self.compute_row, self.note, sweep_row],
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

    def _source_changed(self, source: str) -> None:
        if source == "tables":
            self.model.start_tables()  # the first time: head 1 of what is shown now

    def _tables_changed(self, *_args) -> None:
        for table in self.matrix_tables.values():
            table.table_model.refresh()

    def _head_clicked(self, head: int, row: int) -> None:
        """A click in the heads grid: that head and that query (the grid gives way to the head)."""
        query = min(row + 1, int(self.model.params()["query"].maximum))
        self.model.update_from_dict({"query": query, "head": head + 1})

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
        if not self._shut_down:
            self._sweep_timer.start()

    def sweep_n(self) -> int:
        return self.model.shape()[2]

    def start_sweep(self) -> None:
        """(Re)start the sweep for the current n; a running one for another n is cancelled."""
        self._sweep_timer.stop()
        if self._shut_down:
            return
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
        """Cancel every sweep and recompute and wait for the threads to end (on close)."""
        self._sweep_timer.stop()
        self.cancel_sweep()
        for thread in list(self._stale_threads):
            thread.wait(30000)
        self._stale_threads.clear()
        self._core_thread = None
        for thread in list(self._core_threads):
            thread.cancelled = True
            thread.wait()  # NumPy cannot be interrupted: a product in progress runs to its end
            thread.delivered = True
            thread.deleteLater()
        self._core_threads.clear()

    # -- the main recompute in a worker (large inputs) -------------------------------------
    @staticmethod
    def needs_worker(inputs: CoreInputs) -> bool:
        """Whether the core of ``inputs`` is big enough to compute off the GUI thread."""
        h, n_q, n_k, _, _ = inputs.shape()
        return h * n_q * n_k >= ASYNC_CELLS or inputs.work() >= ASYNC_WORK

    @property
    def compute_running(self) -> bool:
        """Whether any recompute job (wanted or cancelled) is still running."""
        return bool(self._core_threads)

    def _current_core(self) -> AttentionCore | None:
        """What to draw: the current core (cached, or computed here when small or when flushing),
        else the last one while a worker computes the current one (``self.computing``)."""
        m = self.model
        cached = m.cached_core()
        if cached is not None:
            self.computing = False
            return cached
        problem = m.memory_problem()
        if problem:
            raise MemoryError(problem)
        inputs = m.snapshot()
        if self._sync_compute or not self.needs_worker(inputs):
            self.computing = False
            return m.core()
        self.computing = True
        self._request_compute(inputs)
        return m.last_core

    def _request_compute(self, inputs: CoreInputs) -> None:
        """Start a job for ``inputs`` unless one runs; the latest request starts when it ends."""
        if self._core_threads or self._shut_down:
            return  # at most one job: _core_done asks again for whatever is current then
        thread = CoreThread(inputs)
        thread.done.connect(self._core_done)
        self._core_thread = thread
        self._core_threads.append(thread)
        thread.start()

    def _core_done(self, thread: CoreThread) -> None:
        """A job ended (on the GUI thread): keep its result if still current, then go on."""
        if thread.delivered:
            return
        thread.delivered = True
        thread.wait()
        if thread in self._core_threads:
            self._core_threads.remove(thread)
        if thread is self._core_thread:
            self._core_thread = None
        if not thread.cancelled:
            if thread.result is not None:
                self.model.store_core(thread.inputs, thread.result)  # dropped when stale
            elif thread.error:
                self.tell(thread.error, error=True)
        thread.deleteLater()
        self._redraw()  # draws the result, or starts the job for newer inputs

    def cancel_compute(self) -> None:
        """Drop the running job's result and put back the inputs of the result shown."""
        thread = self._core_thread
        if thread is not None:
            thread.cancelled = True  # still runs to its end (waited for on close), then is dropped
            self._core_thread = None
        shown = self.model.last_inputs
        if shown is not None:
            self.model.restore(shown)
        self.tell(tr("attention.compute.cancelled"))
        self._redraw()

    def wait_for_compute(self) -> None:
        """Let the job for the current inputs finish and deliver (flush, tests)."""
        thread = self._core_thread
        if thread is not None and thread.key == self.model.core_key():
            thread.wait()
            self._core_done(thread)

    def shutdown(self) -> None:
        """Stop every worker for good: a redraw that fires later must not start a new one."""
        self._shut_down = True
        self.stop_workers()

    def closeEvent(self, event) -> None:
        self.shutdown()
        super().closeEvent(event)

    def flush(self) -> None:
        """Redraw now, of the current inputs: a sweep in progress is finished first, and the
        current core is waited for (or computed here), so that exports are never stale."""
        if self._sweep_timer.isActive():
            self.start_sweep()
        self.wait_for_workers()
        self.wait_for_compute()
        self._sync_compute = True
        try:
            super().flush()
        finally:
            self._sync_compute = False

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
        fixed = file_source or m.source == "tables"  # n, heads, d_k and seed come from the data
        for name in ("n", "heads"):
            self.spins[name].setEnabled(m.source == "random" or (m.source == "file" and not file_source))
        self.spins["heads"].setEnabled(not fixed)
        self.d_k.setEnabled(not fixed)
        self.spins["seed"].setEnabled(not fixed)
        self.sentence.setVisible(m.source == "sentence")
        self.tables_tabs.setVisible(m.source == "tables")
        self.temperature.setEnabled(m.scaling == "custom")
        self.file_label.setText(Path(m.file_path).name if m.file_path else tr("attention.no_file"))
        try:
            core = self._current_core()
        except MemoryError as exc:
            self.tell(str(exc), error=True)
            return
        self.compute_row.setVisible(self.computing)
        self.compute_cancel.setEnabled(m.last_core is not None)
        if core is None:
            self._show_note(tr("attention.compute.note"))
            return
        drawn = (id(core), m.head, m.query, self.auto_levels, themes.current())
        if self.computing and drawn == self._drawn:  # nothing new to draw until the job lands
            self._show_note(tr("attention.compute.note"))
            return
        self._drawn = drawn
        r = m.result_for(core)
        h, q = r.head, r.query
        labels_k, labels_q = r.k_labels, r.q_labels
        masked = ~r.allowed[h]
        fr, fc = self.weights.show_matrix(r.weights[h], labels_q, labels_k, masked=masked,
                                          auto_levels=self.auto_levels)
        self.weights.set_row(q)
        self.weights.set_title(tr("attention.weights.title_head", head=h + 1, heads=r.heads))
        if r.all_heads:
            self.heads_grid.show_heads(r.weights, r.allowed, labels_q, labels_k, query=q,
                                       auto_levels=self.auto_levels)
            self.weights_stack.setCurrentWidget(self.heads_grid)
        else:
            self.weights_stack.setCurrentWidget(self.weights)
        self._plot_grid.setRowStretch(0, 8 if r.all_heads and r.heads > 4 else 5)
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
        notes = [tr("attention.compute.note")] if self.computing else []
        if r.note:
            notes.append(r.note)
        if fr > 1 or fc > 1:
            notes.append(tr("attention.pooled", rows=-(-r.n_q // fr), cols=-(-r.n_k // fc), n_q=r.n_q, n_k=r.n_k))
        if empty:
            notes.append(tr("attention.masked.note"))
        if r.all_heads:
            notes.append(tr("attention.grid.note", heads=min(r.heads, MAX_TILES)))
        self._show_note("\n".join(notes))
