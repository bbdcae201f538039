"""Online softmax: the kernels' algorithm, step by step (sequential, tree, attention tiles)."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import signals_blocked

from compute import MEMORY_METHODS, memory_passes
from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.online import ITEMSIZE, AttentionRun, OnlineModel, RowResult
from gui.model.texts import tr
from gui.qt import pg
from gui.views.base import BaseView
from gui.widgets.heatmap import Heatmap
from gui.widgets.plot import BarChart, Plot, style_current
from gui.widgets.sliders import ParamChoice, ParamSlider

#: Steps per second when playing, and its range.
DEFAULT_SPEED = 2
MAX_SPEED = 60
#: Bar charts label every score up to this many; beyond, about this many ticks.
MAX_TICKS = 24
#: Tree nodes get their (m, d) written beside them up to this many nodes in all.
MAX_TREE_TEXTS = 31
#: Drawn values are clipped to this magnitude (pyqtgraph's auto range overflows near ±1.8e308).
RANGE_LIMIT = 1e300
#: Block boundaries are drawn up to this many blocks.
MAX_BOUNDARIES = 128


def sparse_ticks(labels: tuple[str, ...]) -> list[tuple[int, str]]:
    n = len(labels)
    stride = 1 if n <= MAX_TICKS else math.ceil(n / MAX_TICKS)
    return [(i, labels[i]) for i in range(0, n, stride)]


def finite_xy(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], np.clip(y[ok], -RANGE_LIMIT, RANGE_LIMIT)


def integer_ticks(item, last: int) -> None:
    """Whole-number ticks 0..last on the bottom axis (at most about MAX_TICKS of them)."""
    stride = max(1, math.ceil((last + 1) / MAX_TICKS))
    item.getAxis("bottom").setTicks([[(i, str(i)) for i in range(0, last + 1, stride)], []])


class IntControl(QWidget):
    """A label, an optional slider and a spin box bound to one integer parameter."""

    def __init__(self, model: OnlineModel, name: str, *, slider: bool = False):
        super().__init__()
        spec = model.params()[name]
        self.model, self.name = model, name
        self.label = QLabel(tr(f"param.{name}.label"))
        self.spin = QSpinBox()
        self.spin.setRange(int(spec.minimum), int(spec.maximum))
        self.spin.setKeyboardTracking(False)
        self.spin.setMinimumWidth(80)
        self.slider = QSlider(Qt.Orientation.Horizontal) if slider else None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        if self.slider is not None:
            self.slider.setRange(int(spec.minimum), int(spec.maximum))
            lay.addWidget(self.slider, 1)
            self.slider.valueChanged.connect(self._edited)
        else:
            lay.addStretch(1)
        lay.addWidget(self.spin)
        tip = tr(f"online.{name}.tooltip")
        for w in (self, self.label, self.spin, *([self.slider] if self.slider else [])):
            w.setToolTip(tip)
        self.spin.valueChanged.connect(self._edited)
        self._show(getattr(model, name))
        connect_while_alive(self, getattr(model.events, name), self._show)

    def set_maximum(self, top: int) -> None:
        """Narrow the range the controls offer (the model keeps its own wider range)."""
        top = max(int(top), self.spin.minimum())
        with signals_blocked(self.spin):
            self.spin.setMaximum(top)
        if self.slider is not None:
            with signals_blocked(self.slider):
                self.slider.setMaximum(top)
        self._show(getattr(self.model, self.name))

    def _edited(self, value: int) -> None:
        self.model.set_param(self.name, int(value))

    def _show(self, value: int) -> None:
        with signals_blocked(self.spin):
            self.spin.setValue(int(value))
        if self.slider is not None:
            with signals_blocked(self.slider):
                self.slider.setValue(int(value))


class RowPlot(Plot):
    """The row as bars: the block being read highlighted, the blocks already read tinted;
    the running max m drawn over the part read."""

    def __init__(self):
        super().__init__(tr("online.row.title"), x_label=tr("online.row.x"), y_label=tr("online.row.y"))
        item = self.getPlotItem()
        item.setMouseEnabled(x=False, y=False)
        self.bars = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.85)
        item.addItem(self.bars)
        self.boundaries = item.plot([], [], connect="pairs")
        self.running_max = item.plot([], [], connect="pairs")
        self.legend = self.add_legend(offset=(-10, 8))
        self.legend.addItem(self.running_max, tr("online.row.running_max"))
        self._values = np.zeros(0)
        self._labels: tuple[str, ...] = ()
        self._state = np.zeros(0, dtype=int)  # 0 unread, 1 read, 2 being read
        self.describe = self._describe
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "running_max"):
            return
        self.running_max.setPen(pg.mkPen(theme.highlight, width=2.5))
        for _sample, label in self.legend.items:
            label.setText(label.text, color=theme.foreground)
        self.boundaries.setPen(pg.mkPen(theme.muted, width=1, style=Qt.PenStyle.DotLine))
        self._paint_bars(theme)

    def _paint_bars(self, theme: themes.Theme) -> None:
        if not len(self._values):
            return
        unread = QColor(theme.secondary)
        unread.setAlpha(110)
        colours = [pg.mkBrush(unread), pg.mkBrush(theme.accent), pg.mkBrush(theme.highlight)]
        self.bars.setOpts(brushes=[colours[s] for s in self._state], pen=pg.mkPen(None))

    def set_row(self, r: RowResult) -> None:
        x = r.values
        n = len(x)
        heights = np.clip(np.where(np.isfinite(x), x, 0.0), -RANGE_LIMIT, RANGE_LIMIT)
        state = np.zeros(n, dtype=int)
        segments_x: list[float] = []
        segments_y: list[float] = []
        if r.mode == "sequential":
            for s in r.steps[:r.step]:
                state[s.start:s.stop] = 1
                if math.isfinite(s.m_after):
                    segments_x += [s.start - 0.45, s.stop - 0.55]
                    segments_y += [s.m_after, s.m_after]
            if r.current is not None:
                state[r.current.start:r.current.stop] = 2
        else:
            for node in r.current_level:
                state[node.start:node.stop] = 2
                if math.isfinite(node.m):
                    segments_x += [node.start - 0.45, node.stop - 0.55]
                    segments_y += [node.m, node.m]
        self._values, self._state = x, state
        self.bars.setOpts(x=np.arange(n, dtype=float), height=heights, width=0.85)
        self._paint_bars(themes.current())
        self.running_max.setData(np.array(segments_x), np.clip(segments_y, -RANGE_LIMIT, RANGE_LIMIT))
        self.running_max.setVisible(bool(segments_x))
        n_blocks = math.ceil(n / r.block)
        if 1 < n_blocks <= MAX_BOUNDARIES:
            edges = np.arange(r.block, n, r.block) - 0.5
            finite = x[np.isfinite(x)]
            lo = max(min(float(finite.min()), 0.0), -RANGE_LIMIT) if finite.size else -1.0
            hi = min(max(float(finite.max()), 0.0), RANGE_LIMIT) if finite.size else 1.0
            self.boundaries.setData(np.repeat(edges, 2), np.tile([lo, hi], len(edges)))
        else:
            self.boundaries.setData([], [])
        if r.labels != self._labels:
            self._labels = r.labels
            item = self.getPlotItem()
            item.getAxis("bottom").setTicks([sparse_ticks(r.labels)])
            item.setXRange(-0.6, n - 0.4, padding=0)
        self.getPlotItem().enableAutoRange(axis="y")

    def bar_state(self) -> np.ndarray:
        """0 unread, 1 read, 2 being read, per score (for tests)."""
        return self._state.copy()

    def _describe(self, x: float, y: float) -> str:
        i = int(round(x))
        if not 0 <= i < len(self._values):
            return ""
        key = ("online.row.unread", "online.row.read", "online.row.reading")[self._state[i]]
        return tr("online.row.describe", label=self._labels[i], value=fmt(self._values[i]), state=tr(key))


class StepCurve(Plot):
    """One running quantity (m or d) against the step, the current step marked."""

    def __init__(self, title: str, y_label: str, name: str):
        super().__init__(title, x_label=tr("online.step.x"), y_label=y_label)
        item = self.getPlotItem()
        item.setMouseEnabled(x=False, y=False)
        self.curve = item.plot([], [], symbol="o", symbolSize=5)
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=11)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        self.describe = lambda x, y: tr("online.step.describe", step=round(x), name=name, value=fmt(y))
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "now_line"):
            return
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        self.curve.setSymbolBrush(pg.mkBrush(theme.accent))
        self.curve.setSymbolPen(pg.mkPen(None))
        style_current(theme, self.marker, self.now_line)

    def set_curve(self, y: np.ndarray, step: int) -> None:
        steps = np.arange(len(y), dtype=float)
        self.curve.setData(*finite_xy(steps, y))
        self.marker.setData(*finite_xy(np.array([float(step)]), np.array([y[step]])))
        self.now_line.setValue(step)
        item = self.getPlotItem()
        item.setXRange(-0.3, max(len(y) - 1, 1) + 0.3, padding=0)
        integer_ticks(item, len(y) - 1)


class TreePlot(Plot):
    """The merge tree: leaves (one per block) at the bottom, the root at the top.

    Levels already computed are filled, the level of this step highlighted,
    later levels hollow; small trees carry each node's (m, d).
    """

    def __init__(self):
        super().__init__(tr("online.tree.title"), x_label=tr("online.row.x"), y_label=tr("online.tree.y"))
        item = self.getPlotItem()
        item.setMouseEnabled(x=False, y=False)
        item.showGrid(x=False, y=False)
        self.edges = item.plot([], [], connect="pairs")
        self.nodes = pg.ScatterPlotItem(size=14)
        item.addItem(self.nodes)
        self._texts: list[pg.TextItem] = []
        self._layout: list[tuple[float, int, float, float]] = []  # x, level, m, d
        self._levels_done = 0
        self.describe = self._describe
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "nodes"):
            return
        self.edges.setPen(pg.mkPen(theme.muted, width=1.5))
        for t in self._texts:
            t.setColor(theme.foreground)
        self._paint(theme)

    def _paint(self, theme: themes.Theme) -> None:
        if not self._layout:
            return
        brushes, pens = [], []
        for _x, level, _m, _d in self._layout:
            if level == self._levels_done - 1:
                brushes.append(pg.mkBrush(theme.highlight))
                pens.append(pg.mkPen(theme.highlight))
            elif level < self._levels_done:
                brushes.append(pg.mkBrush(theme.accent))
                pens.append(pg.mkPen(theme.accent))
            else:
                brushes.append(pg.mkBrush(theme.background))
                pens.append(pg.mkPen(theme.muted, width=1.5))
        self.nodes.setBrush(brushes)
        self.nodes.setPen(pens)

    def set_tree(self, r: RowResult) -> None:
        levels = r.levels
        layout, ex, ey = [], [], []
        for lv, level in enumerate(levels):
            for node in level:
                cx = (node.start + node.stop - 1) / 2
                layout.append((cx, lv, node.m, node.d))
                if lv:
                    below = levels[lv - 1]
                    for child in (node.left, node.right):
                        if child is not None:
                            c = below[child]
                            ex += [(c.start + c.stop - 1) / 2, cx]
                            ey += [lv - 1, lv]
        changed = ([(x, lv) for x, lv, _m, _d in layout] != [(x, lv) for x, lv, _m, _d in self._layout]
                   or r.labels != getattr(self, "_labels", None))
        self._layout = layout
        self._labels = r.labels
        self._levels_done = r.step
        xs = np.array([p[0] for p in layout])
        ys = np.array([p[1] for p in layout], dtype=float)
        self.nodes.setData(x=xs, y=ys)
        self.edges.setData(np.array(ex, dtype=float), np.array(ey, dtype=float))
        item = self.getPlotItem()
        if changed:
            for t in self._texts:
                item.removeItem(t)
            self._texts = []
            if len(layout) <= MAX_TREE_TEXTS:
                theme = themes.current()
                for _x, _lv, _m, _d in layout:
                    t = pg.TextItem(color=theme.foreground, anchor=(0.5, -0.25))
                    item.addItem(t)
                    self._texts.append(t)
            item.setXRange(-0.6, r.n - 0.4, padding=0)
            item.getAxis("bottom").setTicks([sparse_ticks(r.labels)])
            item.setYRange(-0.95, len(levels) - 0.2, padding=0)
            item.getAxis("left").setTicks([[(lv, str(lv)) for lv in range(len(levels))]])
        for t, (x, lv, m, d) in zip(self._texts, layout):
            shown = lv < r.step
            t.setText(tr("online.tree.node", m=fmt(m, 2), d=fmt(d, 2)) if shown else "")
            t.setPos(x, lv)
        self._paint(themes.current())

    def node_count(self) -> int:
        return len(self._layout)

    def _describe(self, x: float, y: float) -> str:
        lv = int(round(y))
        best = None
        for px, plv, m, d in self._layout:
            if plv == lv and (best is None or abs(px - x) < abs(best[0] - x)):
                best = (px, m, d)
        if best is None:
            return ""
        return tr("online.tree.describe", level=lv, m=fmt(best[1]), d=fmt(best[2]))


class ComparePlot(BarChart):
    """The result so far beside full softmax, with sparse ticks for long rows."""

    def set_data(self, labels, heights) -> None:
        super().set_data(labels, heights)
        self.getPlotItem().getAxis("bottom").setTicks([sparse_ticks(tuple(labels))])


class SparseHeatmap(Heatmap):
    """A Heatmap that writes values into its cells only while they are few enough to read."""

    MAX_TEXTS = 36

    def _make_texts(self, count: int) -> None:
        super()._make_texts(count if count <= self.MAX_TEXTS else 0)


class TileHeatmap(SparseHeatmap):
    """The scaled scores QKᵀ/√d (shown for orientation; the loop never forms them), the K/V
    tile being read outlined."""

    def set_tile(self, start: int, stop: int) -> None:
        n = self.matrix.shape[0]
        self.highlight.setRect(start, 0, stop - start, n)
        self.highlight.setVisible(stop > start)


class RunningLines(Plot):
    """One curve per query row: its running m or l against the tile step."""

    def __init__(self, title: str, y_label: str, name: str):
        super().__init__(title, x_label=tr("online.tile.x"), y_label=y_label)
        item = self.getPlotItem()
        item.setMouseEnabled(x=False, y=False)
        self.curves: list = []
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        self.describe = lambda x, y: tr("online.step.describe", step=round(x), name=name, value=fmt(y))
        self.apply_theme(themes.current())

    def theme_changed(self, theme: themes.Theme) -> None:
        if not hasattr(self, "now_line"):
            return
        for i, c in enumerate(self.curves):
            colour = themes.colour(theme, i)
            c.setPen(pg.mkPen(colour, width=1.5))
            c.setSymbolBrush(pg.mkBrush(colour))
            c.setSymbolPen(pg.mkPen(None))
        self.now_line.setPen(pg.mkPen(theme.highlight, width=1.5, style=Qt.PenStyle.DashLine))

    def set_lines(self, y: np.ndarray, step: int) -> None:
        """``y`` is (steps + 1, rows); step 0 (nothing read) is left out where it is not a number."""
        item = self.getPlotItem()
        rows = y.shape[1]
        while len(self.curves) < rows:
            self.curves.append(item.plot([], [], symbol="o", symbolSize=4))
        while len(self.curves) > rows:
            item.removeItem(self.curves.pop())
        self.theme_changed(themes.current())
        steps = np.arange(y.shape[0], dtype=float)
        for i, c in enumerate(self.curves):
            c.setData(*finite_xy(steps, y[:, i]))
        self.now_line.setValue(step)
        item.setXRange(-0.3, max(y.shape[0] - 1, 1) + 0.3, padding=0)
        integer_ticks(item, y.shape[0] - 1)


class PassTable(QTableWidget):
    """Passes over global memory for safe, online and fused softmax, and the bytes for this row."""

    COLUMNS = ("passes", "reads", "writes", "bytes")

    def __init__(self):
        super().__init__(len(MEMORY_METHODS), len(self.COLUMNS))
        self.setHorizontalHeaderLabels([tr(f"online.passes.{c}") for c in self.COLUMNS])
        self.setVerticalHeaderLabels([tr(f"online.passes.{m}") for m in MEMORY_METHODS])
        for r, method in enumerate(MEMORY_METHODS):
            self.verticalHeaderItem(r).setToolTip(tr(f"online.passes.{method}.tooltip"))
            for c in range(len(self.COLUMNS)):
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(tr(f"online.passes.{method}.tooltip"))
                self.setItem(r, c, item)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setToolTip(tr("online.passes.tooltip"))
        self.setFixedHeight(26 + 22 * len(MEMORY_METHODS) + 4)
        self._n = -1

    def show_row(self, n: int) -> None:
        height = self.horizontalHeader().sizeHint().height() + 22 * len(MEMORY_METHODS) + 2 * self.frameWidth()
        if self.height() != height:
            self.setFixedHeight(height)
        if n == self._n:
            return
        self._n = n
        for r, method in enumerate(MEMORY_METHODS):
            t = memory_passes(method)
            for c, v in enumerate((t.passes, t.reads, t.writes, t.bytes(n, ITEMSIZE))):
                self.item(r, c).setText(f"{v:,}")


class OnlineView(BaseView):
    model: OnlineModel

    def build(self) -> None:
        m = self.model
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)

        self.mode = ParamChoice(m, "mode")
        self.row = ParamChoice(m, "row")
        self.editor = self.score_editor()
        self.row_length = IntControl(m, "row_length")
        self.seed = IntControl(m, "seed")
        self.block = IntControl(m, "block_size", slider=True)
        self.temperature = ParamSlider(m, "temperature")
        self.n = IntControl(m, "n", slider=True)
        self.d_k = IntControl(m, "d_k", slider=True)
        self.tile = IntControl(m, "tile", slider=True)
        self.causal = QCheckBox(tr("param.causal.label"))
        self.causal.setToolTip(tr("param.causal.tooltip"))
        self.causal.toggled.connect(lambda on: m.set_param("causal", "on" if on else "off"))
        connect_while_alive(self, m.events.causal, self._show_causal)
        self._show_causal(m.causal)

        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        for w in (self.mode, self.row, self.editor, self.row_length, self.seed, self.block, self.temperature,
                  self.n, self.d_k, self.tile, self.causal):
            tv.addWidget(w, 1 if w is self.editor else 0)
        self.spacer = QWidget()
        tv.addWidget(self.spacer, 1)

        self.transport = self._build_transport()
        readouts = self.readout_box((
            "online.readout.step", "online.readout.block", "online.readout.m", "online.readout.d",
            "online.readout.rescale", "online.readout.block_partial", "online.readout.partial",
            "online.readout.diff",
        ))
        readouts.setTitle(tr("online.readouts.title"))
        self.passes = PassTable()
        self.passes_box = QGroupBox(tr("online.passes.title"))
        pb = QVBoxLayout(self.passes_box)
        pb.setContentsMargins(6, 4, 6, 4)
        pb.addWidget(self.passes)

        # the row modes: the row, m and d per step (or the tree), the result beside softmax
        self.row_plot = self.add_plot("row", RowPlot())
        self.m_plot = self.add_plot("running_m", StepCurve(tr("online.m.title"), tr("online.m.y"), "m"))
        self.d_plot = self.add_plot("running_d", StepCurve(tr("online.d.title"), tr("online.d.y"), "d"))
        self.tree = self.add_plot("tree", TreePlot())
        self.compare = self.add_plot("result", ComparePlot(
            tr("online.result.title"),
            [(tr("online.result.so_far"), "accent"), (tr("online.result.softmax"), "secondary")],
            value_labels=False, legend_columns=2, y_range=(-0.01, 1.15),
        ))
        curves = QWidget()
        cl = QHBoxLayout(curves)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.m_plot)
        cl.addWidget(self.d_plot)
        self.middle = QStackedWidget()
        self.middle.addWidget(curves)
        self.middle.addWidget(self.tree)
        row_page = QWidget()
        rg = QVBoxLayout(row_page)
        rg.setContentsMargins(0, 0, 0, 0)
        rg.addWidget(self.row_plot, 4)
        rg.addWidget(self.middle, 4)
        rg.addWidget(self.compare, 4)

        # the attention mode
        self.scores_map = self.add_plot("tile_scores", TileHeatmap(
            tr("online.scores.title"), diverging=True, value_name=tr("online.scores.value")))
        self.acc_map = self.add_plot("accumulator", SparseHeatmap(
            tr("online.acc.title"), diverging=True, value_name=tr("online.acc.value")))
        self.m_lines = self.add_plot("rows_m", RunningLines(tr("online.rows_m.title"), tr("online.m.y"), "m"))
        self.l_lines = self.add_plot("rows_l", RunningLines(tr("online.rows_l.title"), tr("online.l.y"), "l"))
        self.rescale_bars = self.add_plot("rescale", BarChart(
            tr("online.rescale.title"), [(tr("online.rescale.name"), "accent")], value_labels=False,
            percent=False, value_name=tr("online.rescale.name"), y_range=(-0.02, 1.1)))
        att_page = QWidget()
        ag = QGridLayout(att_page)
        ag.setContentsMargins(0, 0, 0, 0)
        ag.addWidget(self.scores_map, 0, 0)
        ag.addWidget(self.acc_map, 0, 1)
        ag.addWidget(self.m_lines, 1, 0)
        ag.addWidget(self.l_lines, 1, 1)
        ag.addWidget(self.rescale_bars, 2, 0, 1, 2)

        self.pages = QStackedWidget()
        self.pages.addWidget(row_page)
        self.pages.addWidget(att_page)
        self.arrange([top, self.transport, readouts, self.passes_box], self.pages, min_width=340)
        connect_while_alive(self, m.events.mode, lambda *_: self._arrange_mode())
        connect_while_alive(self, m.events.row, lambda *_: self._arrange_mode())
        self._arrange_mode()

    def _build_transport(self) -> QGroupBox:
        box = QGroupBox(tr("online.transport.title"))
        lay = QVBoxLayout(box)
        lay.setContentsMargins(6, 4, 6, 4)
        buttons = QWidget()
        bl = QHBoxLayout(buttons)
        bl.setContentsMargins(0, 0, 0, 0)
        self.reset_button = QPushButton(tr("online.reset"))
        self.back_button = QPushButton(tr("online.back"))
        self.play_button = QPushButton(tr("online.play"))
        self.forward_button = QPushButton(tr("online.forward"))
        self.end_button = QPushButton(tr("online.end"))
        for key, b in (("reset", self.reset_button), ("back", self.back_button), ("play", self.play_button),
                       ("forward", self.forward_button), ("end", self.end_button)):
            b.setToolTip(tr(f"online.{key}.tooltip"))
            bl.addWidget(b)
        self.play_button.setCheckable(True)
        self.reset_button.clicked.connect(lambda: self.go_to(0))
        self.back_button.clicked.connect(lambda: self.go_to(self.current_step() - 1))
        self.forward_button.clicked.connect(lambda: self.go_to(self.current_step() + 1))
        self.end_button.clicked.connect(lambda: self.go_to(self.model.n_steps(self.scores)))
        self.play_button.toggled.connect(self._play_toggled)

        self.step_slider = QSlider(Qt.Orientation.Horizontal)
        self.step_slider.setToolTip(tr("online.step.tooltip"))
        self.step_slider.valueChanged.connect(self.go_to)
        self.step_label = QLabel()
        self.step_label.setMinimumWidth(90)
        self.step_label.setToolTip(tr("online.step.tooltip"))
        step_row = QWidget()
        sl = QHBoxLayout(step_row)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.addWidget(self.step_slider, 1)
        sl.addWidget(self.step_label)

        self.speed = QSpinBox()
        self.speed.setRange(1, MAX_SPEED)
        self.speed.setValue(DEFAULT_SPEED)
        self.speed.setSuffix(tr("online.speed.suffix"))
        self.speed.setToolTip(tr("online.speed.tooltip"))
        self.speed.valueChanged.connect(self._speed_changed)
        self._speed_changed(DEFAULT_SPEED)
        speed_row = QWidget()
        spl = QHBoxLayout(speed_row)
        spl.setContentsMargins(0, 0, 0, 0)
        speed_label = QLabel(tr("online.speed"))
        speed_label.setToolTip(tr("online.speed.tooltip"))
        spl.addWidget(speed_label)
        spl.addStretch(1)
        spl.addWidget(self.speed)
        lay.addWidget(buttons)
        lay.addWidget(step_row)
        lay.addWidget(speed_row)
        return box

    # -- transport ---------------------------------------------------------------------------
    def current_step(self) -> int:
        return min(self.model.step, self.model.n_steps(self.scores))

    def go_to(self, step: int) -> None:
        step = min(max(int(step), 0), self.model.n_steps(self.scores))
        if step != self.model.step:
            self.model.set_param("step", step)

    def _play_toggled(self, on: bool) -> None:
        self.play_button.setText(tr("online.pause" if on else "online.play"))
        if on:
            if self.current_step() >= self.model.n_steps(self.scores):
                self.go_to(0)  # at the end, play starts over
            self.timer.start()
        else:
            self.timer.stop()

    def _speed_changed(self, speed: int) -> None:
        self.timer.setInterval(round(1000 / speed))

    def _tick(self) -> None:
        step, last = self.current_step(), self.model.n_steps(self.scores)
        if step < last:
            self.go_to(step + 1)
        if self.current_step() >= last:
            self.play_button.setChecked(False)

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    def shutdown(self) -> None:
        self.play_button.setChecked(False)

    # -- layout per mode ---------------------------------------------------------------------
    def _show_causal(self, value: str) -> None:
        with signals_blocked(self.causal):
            self.causal.setChecked(value == "on")

    def _arrange_mode(self) -> None:
        m = self.model
        attention = m.mode == "attention"
        self.pages.setCurrentIndex(1 if attention else 0)
        self.middle.setCurrentIndex(1 if m.mode == "tree" else 0)
        self.row.setVisible(not attention)
        self.editor.setVisible(not attention and m.row == "scores")
        self.spacer.setVisible(not self.editor.isVisibleTo(self))
        self.row_length.setVisible(not attention and m.row == "random")
        self.seed.setVisible(attention or m.row == "random")
        for w in (self.block, self.temperature, self.passes_box):
            w.setVisible(not attention)
        for w in (self.n, self.d_k, self.tile, self.causal):
            w.setVisible(attention)

    def plots(self) -> dict[str, Plot]:
        """The plots of the current mode (the export writes what is on screen)."""
        keys = {
            "sequential": ("row", "running_m", "running_d", "result"),
            "tree": ("row", "tree", "result"),
            "attention": ("tile_scores", "accumulator", "rows_m", "rows_l", "rescale"),
        }[self.model.mode]
        return {k: v for k, v in self._plots.items() if k in keys}

    # -- drawing -------------------------------------------------------------------------------
    def redraw(self) -> None:
        r = self.model.result(self.scores)
        with signals_blocked(self.step_slider):
            self.step_slider.setRange(0, r.n_steps)
            self.step_slider.setValue(r.step)
        self.step_label.setText(tr("online.step.label", step=r.step, steps=r.n_steps))
        self.back_button.setEnabled(r.step > 0)
        self.reset_button.setEnabled(r.step > 0)
        self.forward_button.setEnabled(r.step < r.n_steps)
        self.end_button.setEnabled(r.step < r.n_steps)
        if isinstance(r, AttentionRun):
            self.n.set_maximum(self.model.params()["n"].maximum)
            self.tile.set_maximum(self.model.n)
            self._draw_attention(r)
        else:
            self.block.set_maximum(min(r.n, self.model.params()["block_size"].maximum))
            self._draw_row(r)

    def _draw_row(self, r: RowResult) -> None:
        self.row_plot.set_row(r)
        if r.mode == "sequential":
            m, d = r.running()
            self.m_plot.set_curve(m, r.step)
            self.d_plot.set_curve(d, r.step)
        else:
            self.tree.set_tree(r)
        self.compare.set_data(r.labels, [r.partial, r.softmax])
        self.passes.show_row(r.n)

        out = self.readouts
        nothing = tr("online.readout.none")
        if r.mode == "sequential":
            s = r.current
            if s is None:
                block = m_text = d_text = rescale = partial_md = nothing
            else:
                block = tr("online.block.span", index=s.index + 1, blocks=r.n_steps, first=s.start + 1, last=s.stop)
                m_text = f"{fmt(s.m_before)} → {fmt(s.m_after)}"
                d_text = f"{fmt(s.d_before)} → {fmt(s.d_after)}"
                key = ("online.rescale.first" if s.d_before == 0 else
                       "online.rescale.value" if s.max_changed else "online.rescale.same")
                rescale = tr(key, factor=fmt(s.rescale, 4))
                partial_md = f"({fmt(s.m_block)}, {fmt(s.d_block)})"
        else:
            level = r.current_level
            if not level:
                block = m_text = d_text = rescale = partial_md = nothing
            else:
                lv = level[0].level
                merges = sum(1 for node in level if node.right is not None)
                block = (tr("online.tree.leaves", count=len(level)) if lv == 0
                         else tr("online.tree.level", level=lv, merges=merges))
                ms = np.array([node.m for node in level])
                ds = np.array([node.d for node in level])
                m_text, d_text = self._spread(ms), self._spread(ds)
                factors = [f for node in level if node.right is not None
                           for f in (node.rescale_left, node.rescale_right)]
                rescale = tr("online.rescale.smallest", factor=fmt(min(factors), 4)) if factors else nothing
                partial_md = tr("online.tree.nodes", count=len(level))
        out["online.readout.block"].setText(block)
        out["online.readout.m"].setText(m_text)
        out["online.readout.d"].setText(d_text)
        out["online.readout.rescale"].setText(rescale)
        out["online.readout.block_partial"].setText(partial_md)
        out["online.readout.step"].setText(tr("online.step.label", step=r.step, steps=r.n_steps))
        out["online.readout.partial"].setText(self._diff_text(r.partial_difference) if r.step else nothing)
        out["online.readout.diff"].setText(self._diff_text(r.max_abs_difference) if r.done
                                           else tr("online.readout.at_end"))

    @staticmethod
    def _spread(values: np.ndarray) -> str:
        if len(values) <= 3:
            return ", ".join(fmt(v) for v in values)
        return tr("online.range", lo=fmt(np.nanmin(values)) if not np.isnan(values).all() else "NaN",
                  hi=fmt(np.nanmax(values)) if not np.isnan(values).all() else "NaN", count=len(values))

    @staticmethod
    def _diff_text(v: float) -> str:
        return "NaN" if math.isnan(v) else "0" if v == 0 else f"{v:.2e}"

    def _draw_attention(self, r: AttentionRun) -> None:
        labels = [f"q{i + 1}" for i in range(r.n)]
        keys = [f"k{j + 1}" for j in range(r.n)]
        # masked cells (-inf) are drawn blank: an image cannot map -inf to a colour
        self.scores_map.set_matrix(np.where(np.isfinite(r.scores), r.scores, np.nan), labels, keys)
        s = r.current
        self.scores_map.set_tile(s.start, s.stop) if s is not None else self.scores_map.set_tile(0, 0)
        self.acc_map.set_matrix(r.partial_output, labels, [f"o{j + 1}" for j in range(r.v.shape[1])])
        m_run, l_run = r.running()
        self.m_lines.set_lines(m_run, r.step)
        self.l_lines.set_lines(l_run, r.step)
        factors = s.rescale if s is not None else np.full(r.n, np.nan)
        self.rescale_bars.set_data(labels, [factors])

        out = self.readouts
        nothing = tr("online.readout.none")
        out["online.readout.step"].setText(tr("online.step.label", step=r.step, steps=r.n_steps))
        if s is None:
            for key in ("block", "m", "d", "rescale", "block_partial"):
                out[f"online.readout.{key}"].setText(nothing)
        else:
            i = r.n - 1  # the last query row sees every key, with or without the causal mask
            row = f"q{r.n}"
            out["online.readout.block"].setText(tr("online.tile.span", first=s.start + 1, last=s.stop))
            out["online.readout.m"].setText(tr("online.last_row", row=row, text=f"{fmt(s.m_before[i])} → {fmt(s.m_after[i])}"))
            out["online.readout.d"].setText(tr("online.last_row", row=row, text=f"l: {fmt(s.l_before[i])} → {fmt(s.l_after[i])}"))
            changed = int(np.sum(s.rescale < 1))
            out["online.readout.rescale"].setText(tr("online.rescale.rows", changed=changed, rows=r.n,
                                                     factor=fmt(float(np.min(s.rescale)), 4)))
            out["online.readout.block_partial"].setText(tr("online.last_row", row=row, text=f"max {fmt(s.m_tile[i])}"))
        diff = float(np.max(np.abs(r.partial_output - r.reference)))
        out["online.readout.partial"].setText(self._diff_text(diff) if r.step else nothing)
        out["online.readout.diff"].setText(self._diff_text(r.max_abs_difference) if r.done
                                           else tr("online.readout.at_end"))
