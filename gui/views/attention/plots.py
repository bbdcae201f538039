"""The Attention view's plots: the heads grid, the score histogram and the d_k sweep."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QWidget

from gui import theme as themes
from gui.format import fmt
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import legends, unchanged
from gui.widgets.heatmap import PooledHeatmap
from gui.widgets.plot import Plot

#: The small heatmaps of the heads grid show block maxima beyond this many rows or columns.
TILE_MAX = 128
#: The heads grid shows at most this many heads.
MAX_TILES = 16
#: The sweep's left axis spans SWEEP_Y (its curves lie in 0..1, and the end ticks' labels need
#: room inside the axis); the right axis spans its data's top times the same.
SWEEP_Y = (-0.06, 1.08)
#: The sweep legend's text size: six entries above a small plot.
SWEEP_LEGEND_TEXT = "8pt"


class HeadTile(PooledHeatmap):
    """One head's weights in the heads grid: small, no annotations, no colour bar of its own."""

    def __init__(self, head: int):
        self.head = head
        super().__init__(tr("attention.grid.tile", head=head + 1), diverging=False, annotate=False,
                         display_max=TILE_MAX, compact=True, value_name=tr("attention.weights.value"))
        self.setMinimumSize(90, 80)

    def create_items(self, item) -> None:
        super().create_items(item)
        item.layout.removeItem(self.colorbar)  # one 0-to-1 scale: the bar would crowd a small tile
        self.colorbar.hide()

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


#: The histogram curves' opacity while they still show the previous result.
STALE_OPACITY = 0.35


class HistogramPlot(Plot):
    """The entries of Q Kᵀ with and without the scale, as two step curves."""

    def __init__(self):
        super().__init__(tr("attention.hist.title"), x_label=tr("attention.hist.x"), y_label=tr("attention.hist.y"))
        self.describe = lambda x, y: f"{tr('attention.hist.x')} = {fmt(x)}, {tr('attention.hist.y')} = {fmt(y)}"

    def create_items(self, item) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.add_legend(offset=(-6, 6))
        self.raw = item.plot([], [], name=tr("attention.hist.raw", std="–"))
        self.scaled = item.plot([], [], name=tr("attention.hist.scaled", std="–"))

    def theme_changed(self, theme: themes.Theme) -> None:
        self.raw.setPen(pg.mkPen(theme.secondary, width=2))
        self.scaled.setPen(pg.mkPen(theme.accent, width=2))

    def set_stale(self, stale: bool) -> None:
        """Faded while the curves are the previous result's (a partial core: its histograms are still to come)."""
        opacity = STALE_OPACITY if stale else 1.0
        for item in (self.raw, self.scaled, self.getPlotItem().legend):
            if item.opacity() != opacity:
                item.setOpacity(opacity)

    def set_data(self, edges, raw, scaled, std_raw: float, std_scaled: float) -> None:
        unchanged.set_curve(self.raw, edges, raw, stepMode="center")
        unchanged.set_curve(self.scaled, edges, scaled, stepMode="center")
        legend = self.getPlotItem().legend
        fg = themes.current().foreground
        unchanged.set_label(legend.items[0][1], tr("attention.hist.raw", std=fmt(std_raw, 2)), color=fg)
        unchanged.set_label(legend.items[1][1], tr("attention.hist.scaled", std=fmt(std_scaled, 2)), color=fg)


class SweepPlot(Plot):
    """Entropy / ln n and the largest weight against d_k, scaled and not; std(q·k) beside √d_k on the right."""

    def __init__(self):
        super().__init__(tr("attention.sweep.title"), x_label=tr("attention.sweep.x"), y_label=tr("attention.sweep.y"))
        self.describe = lambda x, y: f"dₖ = {fmt(x, 0)}, {tr('attention.sweep.y')} = {fmt(y)}"

    def create_items(self, item) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        item.setYRange(*SWEEP_Y, padding=0)
        item.getAxis("left").setTicks([[(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1.0)], []])
        item.setXRange(math.log10(4) - 0.09, math.log10(1024) + 0.09, padding=0)  # room for the "4"
        item.getAxis("bottom").setTicks([[(math.log10(d), str(d)) for d in (4, 16, 64, 256, 1024)], []])
        # In a row above the data, over the whole width, as many columns as fit: it can cover no
        # point. Colour names the quantity and one key says what a dashed line is, so five short
        # entries take two rows where six long ones took three.
        self.add_legend(outside=True, span=True, colCount=3, labelTextSize=SWEEP_LEGEND_TEXT)
        self.entropy_scaled = item.plot([], [], name=tr("attention.sweep.h_scaled"))
        self.max_scaled = item.plot([], [], name=tr("attention.sweep.max_scaled"))
        self.dashed_key = item.plot([], [], name=tr("attention.sweep.dashed"))  # a legend entry only
        self.entropy_raw = item.plot([], [])
        self.max_raw = item.plot([], [])
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

    def _room(self) -> float:
        """The title's room: the data's column, which the right-hand axis narrows too."""
        return super()._room() - self.getPlotItem().getAxis("right").width()

    def fit_legend(self) -> None:
        """The legend row spans the plot's whole width (the axes' columns too)."""
        legend, most = getattr(self, "_outside_legend", (None, 1))
        if legend is not None:
            legends.fit_columns(legend, most, legends.row_room(self))

    def _sync_right(self, *_args) -> None:
        self.right.setGeometry(self.getPlotItem().getViewBox().sceneBoundingRect())

    def theme_changed(self, theme: themes.Theme) -> None:
        dash = pg.QtCore.Qt.PenStyle.DashLine
        self.entropy_scaled.setPen(pg.mkPen(theme.accent, width=2))
        self.entropy_raw.setPen(pg.mkPen(theme.accent, width=2, style=dash))
        self.max_scaled.setPen(pg.mkPen(theme.series[1], width=2))
        self.max_raw.setPen(pg.mkPen(theme.series[1], width=2, style=dash))
        self.dashed_key.setPen(pg.mkPen(theme.foreground, width=2, style=dash))
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
        """Draw ``sweep`` (computed at ``n`` keys); the same sweep and n again changes nothing
        (every redraw shows the sweep: a slider step of d_k only moves the mark)."""
        if sweep is not None and sweep is getattr(self, "_sweep_shown", None) and n == self._sweep_n:
            return
        self._sweep_shown, self._sweep_n = sweep, n  # the sweep's dict is never changed in place
        if sweep is None:
            for c in (self.entropy_scaled, self.entropy_raw, self.max_scaled, self.max_raw, self.std, self.sqrt):
                unchanged.set_curve(c, [], [])
            return
        d = np.asarray(sweep["d_k"], dtype=float)
        ln_n = math.log(n) if n > 1 else 1.0
        unchanged.set_curve(self.entropy_scaled, d, np.asarray(sweep["entropy_scaled"]) / ln_n)
        unchanged.set_curve(self.entropy_raw, d, np.asarray(sweep["entropy_unscaled"]) / ln_n)
        unchanged.set_curve(self.max_scaled, d, sweep["max_weight_scaled"])
        unchanged.set_curve(self.max_raw, d, sweep["max_weight_unscaled"])
        x = np.log10(d)  # the right box is not in log mode: it shares the left box's log10 x
        unchanged.set_curve(self.std, x, sweep["std_qk"])
        unchanged.set_curve(self.sqrt, x, sweep["sqrt_dk"])
        top = float(max(np.max(sweep["std_qk"]), np.max(sweep["sqrt_dk"])))
        self.right.setYRange(top * SWEEP_Y[0], top * SWEEP_Y[1], padding=0)  # 0 and top in line with the left's 0 and 1

    def mark(self, d_k: int | None) -> None:
        """Mark the d_k shown (None: there is none, e.g. a real model whose q and k were not captured)."""
        self.now_line.setVisible(bool(d_k))
        if d_k:
            self.now_line.setValue(math.log10(d_k))
