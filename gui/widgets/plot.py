"""Themed pyqtgraph plots that report the value under the mouse."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from PySide6.QtCore import QPointF, Signal

from gui import theme as themes
from gui.format import fmt
from gui.model.texts import tr
from gui.qt import pg


def style_current(theme: themes.Theme, marker, now_line) -> None:
    """The look of "you are here" on every plot: a highlighted dot and a dashed line."""
    marker.setSymbolBrush(pg.mkBrush(theme.highlight))
    marker.setSymbolPen(pg.mkPen(theme.background))
    now_line.setPen(pg.mkPen(theme.highlight, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))


class StaticSample(pg.ItemSample):
    """A legend swatch that ignores clicks.

    pyqtgraph's own swatch hides its curve when clicked, behind the back of
    the view's state; here what is drawn always follows the state.
    """

    def mouseClickEvent(self, event) -> None:
        event.ignore()


class Plot(pg.PlotWidget):
    """A PlotWidget that follows the app theme and reports hover values.

    ``describe(x, y)`` turns the data coordinates under the mouse into the
    status-bar text; ``hovered`` carries it.

    Construction order: the base sets up the plot, calls
    :meth:`create_items` (subclasses make their curves, bars and lines
    there, after calling ``super().create_items(item)``), then applies the
    theme once.  A subclass stores its own options *before* calling
    ``super().__init__`` so that ``create_items`` can read them, and styles
    its items only in :meth:`theme_changed`, which therefore always finds
    them.
    """

    hovered = Signal(str)

    def __init__(self, title: str, *, x_label: str = "", y_label: str = "", parent=None):
        super().__init__(parent=parent)
        self._title = title
        self._x_label = x_label
        self._y_label = y_label
        self.describe: Callable[[float, float], str] = (
            lambda x, y: f"{self._x_label or 'x'} = {fmt(x)}, {self._y_label or 'y'} = {fmt(y)}"
        )
        self.setMinimumSize(200, 150)  # a 1260 x 690 window holds three rows of plots and their controls
        item = self.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.15)
        for name in ("left", "bottom"):
            item.getAxis(name).enableAutoSIPrefix(False)  # show 0.25, not 250 (x0.001)
            # Grid lines at major ticks only: painting the minor ones' grid
            # cost ~10 ms per plot and redraw (bench/gui_latency.py).
            item.getAxis(name).setStyle(maxTickLevel=0)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.create_items(item)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        themes.manager().changed.connect(self.apply_theme)
        self.apply_theme(themes.current())

    def create_items(self, item: pg.PlotItem) -> None:
        """Make the plot's data items (called once, before the theme is applied); subclasses extend."""

    def apply_theme(self, theme: themes.Theme) -> None:
        self.setBackground(theme.background)
        item = self.getPlotItem()
        item.setTitle(self._title, color=theme.foreground, size="11pt")
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(theme.muted))
            axis.setTextPen(pg.mkPen(theme.foreground))
        if self._x_label:
            item.setLabel("bottom", self._x_label, color=theme.foreground)
        if self._y_label:
            item.setLabel("left", self._y_label, color=theme.foreground)
        legend = item.legend
        if legend is not None:
            legend.setLabelTextColor(theme.foreground)
        self.theme_changed(theme)

    def add_legend(self, **kwargs) -> pg.LegendItem:
        """A legend whose swatches cannot hide curves (see StaticSample)."""
        return self.getPlotItem().addLegend(sampleType=StaticSample, **kwargs)

    def set_title(self, title: str) -> None:
        if title != self._title:
            self._title = title
            self.getPlotItem().setTitle(title, color=themes.current().foreground, size="11pt")

    def theme_changed(self, theme: themes.Theme) -> None:
        """Restyle data items; subclasses override."""

    def _mouse_moved(self, pos: QPointF) -> None:
        item = self.getPlotItem()
        vb = item.getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            return
        p = vb.mapSceneToView(pos)
        x, y = p.x(), p.y()
        if item.ctrl.logXCheck.isChecked():
            x = 10.0**x
        self.hovered.emit(self.describe(x, y))


class BarChart(Plot):
    """Grouped bars over categories, created once and updated in place.

    ``series`` names each group of bars with the theme colour it uses (a
    role such as "accent" or "secondary", or an index into the theme's
    categorical colours).  With ``value_labels`` the first series gets its
    percentages written on top.  ``y_range`` is fixed (weights live in 0..1);
    :meth:`set_y_range` moves it when negative values must show.
    """

    def __init__(self, title: str, series: Sequence[tuple[str, str | int]], *, y_label: str = "",
                 y_range: tuple[float, float] = (-0.01, 1.12), value_labels: bool = True,
                 legend_columns: int = 1, value_name: str = "α", percent: bool = True, parent=None):
        self._series = list(series)
        k = len(self._series)
        self._width = 0.8 / k
        self._offsets = [(i - (k - 1) / 2) * self._width for i in range(k)]
        self._labels: tuple[str, ...] = ()
        self._heights: list[np.ndarray] = [np.zeros(0)] * k
        self._bars: list[pg.BarGraphItem] = []
        self._texts: list[pg.TextItem] = []
        self._value_labels = value_labels
        self._value_name = value_name
        self._percent = percent
        self._legend_columns = legend_columns
        super().__init__(title, y_label=y_label, parent=parent)
        self.set_y_range(*y_range)
        self.describe = self._describe_bar

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        if len(self._series) > 1:
            self.add_legend(offset=(-10, 10), colCount=self._legend_columns)
        for name, _role in self._series:
            bar = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=self._width, name=name)
            item.addItem(bar)  # a named item joins the legend by itself
            self._bars.append(bar)
        item.setMouseEnabled(x=False, y=False)
        item.getAxis("bottom").setStyle(tickTextOffset=6)

    def set_y_range(self, lo: float, hi: float) -> None:
        self.getPlotItem().setYRange(lo, hi, padding=0)

    def set_series_name(self, index: int, name: str) -> None:
        if self._series[index][0] == name:
            return
        self._series[index] = (name, self._series[index][1])
        legend = self.getPlotItem().legend
        if legend is not None:
            legend.items[index][1].setText(name, color=themes.current().foreground)

    def _style_legend(self, theme: themes.Theme) -> None:
        legend = self.getPlotItem().legend
        if legend is None:
            return
        for (_sample, label), (name, _role) in zip(legend.items, self._series):
            label.setText(name, color=theme.foreground)

    def set_data(self, labels: Sequence[str], heights: Sequence[np.ndarray]) -> None:
        labels = tuple(labels)
        n = len(labels)
        x = np.arange(n, dtype=float)
        self._heights = [np.asarray(h, dtype=float) for h in heights]
        for bar, off, h in zip(self._bars, self._offsets, self._heights):
            bar.setOpts(x=x + off, height=np.nan_to_num(h, nan=0.0), width=self._width)
        if labels != self._labels:
            self._labels = labels
            self.getPlotItem().getAxis("bottom").setTicks([list(enumerate(labels))])
            self.getPlotItem().setXRange(-0.6, n - 0.4, padding=0)
            self._make_texts(n if self._value_labels else 0)
        first = self._heights[0]
        for i, text in enumerate(self._texts):
            v = first[i]
            text.setText("NaN" if np.isnan(v) else f"{100 * v:.1f}%")
            text.setPos(i + self._offsets[0], 0.0 if np.isnan(v) else float(v))

    @property
    def heights(self) -> list[np.ndarray]:
        """The heights the bars hold now, one array per series (for tests)."""
        return [np.asarray(b.opts["height"], dtype=float) for b in self._bars]

    def _make_texts(self, n: int) -> None:
        item = self.getPlotItem()
        for t in self._texts:
            item.removeItem(t)
        theme = themes.current()
        self._texts = [pg.TextItem(color=theme.foreground, anchor=(0.5, 1.0)) for _ in range(n)]
        for t in self._texts:
            item.addItem(t)

    def theme_changed(self, theme: themes.Theme) -> None:
        for bar, (_name, role) in zip(self._bars, self._series):
            c = themes.colour(theme, role)
            bar.setOpts(brush=pg.mkBrush(c), pen=pg.mkPen(theme.background, width=1))
        for t in self._texts:
            t.setColor(theme.foreground)
        self._style_legend(theme)

    def _describe_bar(self, x: float, y: float) -> str:
        n = len(self._labels)
        i = int(round(x))
        if not 0 <= i < n:
            return ""
        parts = []
        for (name, _role), h in zip(self._series, self._heights):
            v = h[i]
            prefix = self._value_name if len(self._series) == 1 else f"{name}: {self._value_name}"
            text = f"{prefix} = {fmt(v)}"
            if self._percent:
                text += " (NaN)" if np.isnan(v) else f" ({100 * v:.2f}%)"
            parts.append(text)
        return f"{self._labels[i]} — " + "; ".join(parts)


class TemperatureCurve(Plot):
    """A quantity against temperature on a log axis (0.01 to 100), the current T marked.

    ``describe_y`` names the quantity in the status bar.  Subclasses add
    their own items (limit lines) in ``create_items`` and restyle them in
    ``theme_changed``.
    """

    def __init__(self, title: str, *, y_label: str, describe_y: str):
        super().__init__(title, x_label=tr("plot.entropy.x"), y_label=y_label)
        self.describe = lambda x, y: f"T = {fmt(x)}, {describe_y} = {fmt(y)}"

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setLogMode(x=True, y=False)
        item.setMouseEnabled(x=False, y=False)
        self.curve = item.plot([], [])
        self.marker = item.plot([], [], pen=None, symbol="o", symbolSize=11)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)
        item.setXRange(-2.15, 2.15, padding=0)  # a little past the end decades, so their labels show
        item.getAxis("bottom").setTicks([[(d, f"{10.0 ** d:g}") for d in range(-2, 3)], []])

    def theme_changed(self, theme: themes.Theme) -> None:
        self.curve.setPen(pg.mkPen(theme.accent, width=2))
        style_current(theme, self.marker, self.now_line)

    def set_curve(self, t: np.ndarray, y: np.ndarray, t_now: float, y_now: float) -> None:
        # pyqtgraph warns on all-NaN data (it takes nanmin of it): draw only the finite part
        ok = np.isfinite(y)
        self.curve.setData(t[ok], y[ok])
        self.marker.setData(*(([t_now], [y_now]) if np.isfinite(y_now) else ([], [])))
        self.now_line.setValue(math.log10(t_now))
