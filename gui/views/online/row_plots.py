"""The plots of the row modes (sequential and tree); each draws a RowResult in ``show_result``."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from gui import theme as themes
from gui.format import fmt
from gui.model.online import RowResult
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.bar_chart import BarChart
from gui.widgets.plot import Plot, style_current
from gui.widgets.ticks import integer_ticks, strided_labels

#: Bar charts label every score up to this many; beyond, about this many ticks.
MAX_TICKS = 24
#: Tree nodes get their (m, d) written beside them up to this many nodes in all.
MAX_TREE_TEXTS = 31
#: Drawn values are clipped to this magnitude (pyqtgraph's auto range overflows near ±1.8e308).
RANGE_LIMIT = 1e300
#: Block boundaries are drawn up to this many blocks.
MAX_BOUNDARIES = 128


def finite_xy(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], np.clip(y[ok], -RANGE_LIMIT, RANGE_LIMIT)


def set_step_axis(item: pg.PlotItem, last: int) -> None:
    """Steps 0..last along the bottom, whole-number ticks."""
    item.setXRange(-0.3, max(last, 1) + 0.3, padding=0)
    item.getAxis("bottom").setTicks([integer_ticks(last, MAX_TICKS), []])


class RowPlot(Plot):
    """The row as bars: the block being read highlighted, the blocks already read tinted;
    the running max m drawn over the part read."""

    def __init__(self):
        self._values = np.zeros(0)
        self._labels: tuple[str, ...] = ()
        self._state = np.zeros(0, dtype=int)  # 0 unread, 1 read, 2 being read
        super().__init__(tr("online.row.title"), x_label=tr("online.row.x"), y_label=tr("online.row.y"))
        self.describe = self._describe

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.bars = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.85)
        item.addItem(self.bars)
        self.boundaries = item.plot([], [], connect="pairs")
        self.running_max = item.plot([], [], connect="pairs")
        self.legend = self.add_legend(offset=(-10, 8))
        self.legend.addItem(self.running_max, tr("online.row.running_max"))

    def theme_changed(self, theme: themes.Theme) -> None:
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
        unchanged.set_opts(self.bars, brushes=[colours[s] for s in self._state], pen=pg.mkPen(None))

    def show_result(self, r: RowResult) -> None:
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
        unchanged.set_opts(self.bars, x=np.arange(n, dtype=float), height=heights, width=0.85)
        self._paint_bars(themes.current())
        unchanged.set_curve(self.running_max, np.array(segments_x), np.clip(segments_y, -RANGE_LIMIT, RANGE_LIMIT))
        self.running_max.setVisible(bool(segments_x))
        self._show_boundaries(x, r.block)
        if r.labels != self._labels:
            self._labels = r.labels
            item = self.getPlotItem()
            item.getAxis("bottom").setTicks([strided_labels(r.labels, MAX_TICKS)])
            item.setXRange(-0.6, n - 0.4, padding=0)
        self.getPlotItem().enableAutoRange(axis="y")

    def _show_boundaries(self, x: np.ndarray, block: int) -> None:
        n = len(x)
        n_blocks = math.ceil(n / block)
        if 1 < n_blocks <= MAX_BOUNDARIES:
            edges = np.arange(block, n, block) - 0.5
            finite = x[np.isfinite(x)]
            lo = max(min(float(finite.min()), 0.0), -RANGE_LIMIT) if finite.size else -1.0
            hi = min(max(float(finite.max()), 0.0), RANGE_LIMIT) if finite.size else 1.0
            unchanged.set_curve(self.boundaries, np.repeat(edges, 2), np.tile([lo, hi], len(edges)))
        else:
            unchanged.set_curve(self.boundaries, [], [])

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
    """One running quantity of the sequential run (``name`` "m" or "d") against the step, up to
    the current step (marked); the steps still to come are on the axis but not drawn."""

    def __init__(self, title: str, y_label: str, name: str):
        self._quantity = name
        super().__init__(title, x_label=tr("online.step.x"), y_label=y_label)
        self.describe = lambda x, y: tr("online.step.describe", step=round(x), name=name, value=fmt(y))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.curve = item.plot([], [], symbol="o", symbolSize=5)
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=11)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)

    def theme_changed(self, theme: themes.Theme) -> None:
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        self.curve.setSymbolBrush(pg.mkBrush(theme.accent))
        self.curve.setSymbolPen(pg.mkPen(None))
        style_current(theme, self.marker, self.now_line)

    def show_result(self, r: RowResult) -> None:
        m, d = r.running()
        y = m if self._quantity == "m" else d
        steps = np.arange(len(y), dtype=float)
        done = r.step + 1  # steps that have not happened yet are not drawn; the axis still shows them
        unchanged.set_curve(self.curve, *finite_xy(steps[:done], y[:done]))
        unchanged.set_curve(self.marker, *finite_xy(np.array([float(r.step)]), np.array([y[r.step]])))
        self.now_line.setValue(r.step)
        set_step_axis(self.getPlotItem(), len(y) - 1)


class TreePlot(Plot):
    """The merge tree: leaves (one per block) at the bottom, the root at the top.

    Levels already computed are filled, the level of this step highlighted,
    later levels hollow; small trees carry each node's (m, d).
    """

    def __init__(self):
        self._texts: list[pg.TextItem] = []
        self._layout: list[tuple[float, int, float, float]] = []  # x, level, m, d
        self._labels: tuple[str, ...] | None = None
        self._levels_done = 0
        super().__init__(tr("online.tree.title"), x_label=tr("online.row.x"), y_label=tr("online.tree.y"))
        self.describe = self._describe

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        item.showGrid(x=False, y=False)
        self.edges = item.plot([], [], connect="pairs")
        self.nodes = pg.ScatterPlotItem(size=14)
        item.addItem(self.nodes)

    def theme_changed(self, theme: themes.Theme) -> None:
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

    def show_result(self, r: RowResult) -> None:
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
                   or r.labels != self._labels)
        self._layout = layout
        self._labels = r.labels
        self._levels_done = r.step
        xs = np.array([p[0] for p in layout])
        ys = np.array([p[1] for p in layout], dtype=float)
        self.nodes.setData(x=xs, y=ys)
        unchanged.set_curve(self.edges, np.array(ex, dtype=float), np.array(ey, dtype=float))
        if changed:
            self._rebuild(r, len(levels))
        for t, (x, lv, m, d) in zip(self._texts, layout):
            shown = lv < r.step
            t.setText(tr("online.tree.node", m=fmt(m, 2), d=fmt(d, 2)) if shown else "")
            t.setPos(x, lv)
        self._paint(themes.current())

    def _rebuild(self, r: RowResult, n_levels: int) -> None:
        """New node texts and axes for a tree of another shape."""
        item = self.getPlotItem()
        for t in self._texts:
            item.removeItem(t)
        self._texts = []
        if len(self._layout) <= MAX_TREE_TEXTS:
            theme = themes.current()
            for _node in self._layout:
                t = pg.TextItem(color=theme.foreground, anchor=(0.5, -0.25))
                item.addItem(t)
                self._texts.append(t)
        item.setXRange(-0.6, r.n - 0.4, padding=0)
        item.getAxis("bottom").setTicks([strided_labels(r.labels, MAX_TICKS)])
        item.setYRange(-0.95, n_levels - 0.2, padding=0)
        item.getAxis("left").setTicks([[(lv, str(lv)) for lv in range(n_levels)]])

    def node_count(self) -> int:
        return len(self._layout)

    def node_texts(self) -> list[str]:
        """The (m, d) written beside each node, leaves first ("" where not computed yet)."""
        return [t.toPlainText() for t in self._texts]

    def _describe(self, x: float, y: float) -> str:
        lv = int(round(y))
        best = None
        for px, plv, m, d in self._layout:
            if plv == lv and (best is None or abs(px - x) < abs(best[0] - x)):
                best = (px, m, d)
        if best is None:
            return ""
        if lv >= self._levels_done:  # not merged yet: its (m, d) is not known at this step
            return tr("online.tree.pending", level=lv)
        return tr("online.tree.describe", level=lv, m=fmt(best[1]), d=fmt(best[2]))


class ComparePlot(BarChart):
    """The result so far beside full softmax, with strided ticks for long rows; no bar where
    nothing has been read yet."""

    def __init__(self):
        super().__init__(
            tr("online.result.title"),
            [(tr("online.result.so_far"), "accent"), (tr("online.result.softmax"), "secondary")],
            value_labels=False, legend_columns=2, y_range=(-0.01, 1.15),
        )

    def show_result(self, r: RowResult) -> None:
        # a score not read yet has no bar (a NaN there would be drawn as a NaN placeholder)
        read = r.block_of() < r.step if r.mode == "sequential" else np.full(r.n, r.step > 0)
        self.set_data(r.labels, [np.where(read, r.partial, 0.0), r.softmax])
        self.getPlotItem().getAxis("bottom").setTicks([strided_labels(r.labels, MAX_TICKS)])
