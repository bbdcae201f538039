"""Grouped bar charts whose values are written on the bars (:class:`BarChart`, a themed :class:`Plot`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush

from gui import theme as themes
from gui.format import fmt
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import bar_labels, legends, unchanged
from gui.widgets.plot import Plot
from gui.widgets.ticks import strided_labels

MAX_LABELLED_BARS = 256  # beyond: no value labels, every k-th tick (items stay bounded; hover names each bar)


def _empty_hole(hole: pg.BarGraphItem, width: float) -> bool:
    """Whether a placeholder item holds no bars, at this ``width`` (a cheaper test than set_opts')."""
    x, height = hole.opts.get("x"), hole.opts.get("height")
    return (isinstance(x, np.ndarray) and x.size == 0 and isinstance(height, np.ndarray) and height.size == 0
            and hole.opts.get("width") == width)


#: Bars narrower than this many pixels are drawn without their outline (it would cover them).
OUTLINE_MIN_PX = 3.0


class BarChart(Plot):
    """Grouped bars over categories, created once and updated in place, their values written on them.

    ``series`` names each group of bars with the theme colour it uses (a
    role such as "accent" or "secondary", or an index into the theme's
    categorical colours).  With ``value_labels`` every shown series gets its
    values written past the end of each bar (percent when ``percent``, else
    numbers with one count of decimals, three digits on the largest), laid out in pixels by
    :mod:`gui.widgets.bar_labels` again after every resize or range change,
    so crowded labels thin out instead of overlapping.  NaN and ±inf are
    drawn as hatched placeholders reaching the edge of the range, tagged
    "NaN", "÷0" (see ``nan_tags`` in :meth:`set_data`), "∞" or "−∞", and the
    hover text says so.  ``y_range`` is fixed (weights live in 0..1);
    :meth:`set_y_range` moves it when negative values must show.  Several
    series get a legend above the plot, never on the bars, in up to
    ``legend_columns`` columns (fewer when the width is short); ``clickable_legend``
    makes a click on a swatch emit :attr:`seriesClicked` (the view decides,
    through its model, what is shown: :meth:`set_shown`).
    """

    seriesClicked = Signal(int)

    def __init__(self, title: str, series: Sequence[tuple[str, str | int]], *, y_label: str = "",
                 y_range: tuple[float, float] = (-0.01, 1.12), value_labels: bool = True,
                 legend_columns: int = 4, value_name: str = "α", percent: bool = True,
                 clickable_legend: bool = False, parent=None):
        self._series = list(series)
        self._shown = [True] * len(self._series)
        self._labels: tuple[str, ...] = ()
        self._heights: list[np.ndarray] = [np.zeros(0)] * len(self._series)
        self._nan_tags: dict[int, str] = {}
        self._bars: list[pg.BarGraphItem] = []
        self._holes: list[pg.BarGraphItem] = []  # the placeholders of NaN and ±inf, one item per series
        self._value_labels = value_labels
        self._value_name = value_name
        self._percent = percent
        self._legend_columns = legend_columns
        self._clickable = clickable_legend
        self._y_range = self._shown_range = y_range
        self._laying_out = False
        self._batching = 0  # inside batched(): layouts wait for its end
        self._outlined = True  # the bars' background-coloured outline (off while bars are thinner than it needs)
        self._layout_pending = False
        self._legend_pending = False  # a series renamed inside batched(): the legend fits at the end
        super().__init__(title, y_label=y_label, parent=parent)
        self.set_y_range(*y_range)
        self.describe = self._describe_bar
        vb = self.getPlotItem().getViewBox()
        vb.sigResized.connect(self._layout_labels)
        vb.sigRangeChanged.connect(self._layout_labels)

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        self.values = bar_labels.ValueLabels(item)
        if len(self._series) > 1:
            self.add_legend(outside=True, colCount=self._legend_columns,
                            sampleType=legends.ToggleSample if self._clickable else legends.StaticSample)
        for i, (name, _role) in enumerate(self._series):
            bar = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8, name=name)
            bar.legend_clicked = lambda i=i: self.seriesClicked.emit(i)
            item.addItem(bar)  # a named item joins the legend by itself
            self._bars.append(bar)
            hole = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8)
            item.addItem(hole)
            self._holes.append(hole)
        item.setMouseEnabled(x=False, y=False)
        item.getAxis("bottom").setStyle(tickTextOffset=6)

    # -- state ------------------------------------------------------------------
    def set_y_range(self, lo: float, hi: float) -> None:
        """The data range the plot must show; value labels may widen it by the pixels they need."""
        if (lo, hi) == self._y_range and getattr(self, "_y_range_set", False):
            return  # the same range: nothing to repaint
        first = not getattr(self, "_y_range_set", False)
        self._y_range_set = True
        self._y_range = (lo, hi)
        self._shown_range = (lo, hi)
        if first or self._laying_out:  # the first call also turns pyqtgraph's auto range off
            self.getPlotItem().setYRange(lo, hi, padding=0)
        self._layout_labels()  # sets the range the labels need (lo..hi widened), in one move

    @contextmanager
    def batched(self) -> Iterator[None]:
        """Changes inside (set_data, set_y_range, set_shown, set_series_name) lay the labels out, fit the
        legend and move the range once, at the end: the state the same calls make one by one (the layout
        depends only on the bars, the range asked for and the plot's pixels)."""
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching and self._legend_pending:
                self._legend_pending = False
                self.fit_legend()
            if not self._batching and self._layout_pending:
                self._layout_pending = False
                self._layout_labels()

    def set_series_name(self, index: int, name: str) -> None:
        if self._series[index][0] == name:
            return
        self._series[index] = (name, self._series[index][1])
        legend = self.getPlotItem().legend
        if legend is not None:
            legend.items[index][1].setText(name, color=themes.current().foreground)
            if not self._batching:
                self.fit_legend()
            self._legend_pending = bool(self._batching)

    def set_shown(self, shown: Sequence[bool]) -> None:
        """Which series are drawn (the legend keeps every entry; a hidden one shows a crossed eye)."""
        shown = [bool(s) for s in shown]
        if shown != self._shown:
            self._shown = shown
            self._make_texts()
            self._place_bars()

    @property
    def shown(self) -> list[bool]:
        return list(self._shown)

    def set_data(self, labels: Sequence[str], heights: Sequence[np.ndarray], *,
                 nan_tags: dict[int, str] | None = None) -> None:
        """New bars; ``nan_tags`` maps a series index to the tag of its NaN values ("nan" or "div0")."""
        labels = tuple(labels)
        heights = [np.asarray(h, dtype=float) for h in heights]
        nan_tags = dict(nan_tags or {})
        if (labels == self._labels and nan_tags == self._nan_tags and len(heights) == len(self._heights)
                and all(unchanged.same(a, b) for a, b in zip(heights, self._heights))):
            return  # the same bars: nothing to repaint
        self._heights = heights
        self._nan_tags = nan_tags
        self._make_texts()  # before the range moves: its signal lays the labels out
        if labels != self._labels:
            self._labels = labels
            self.getPlotItem().getAxis("bottom").setTicks([strided_labels(labels, MAX_LABELLED_BARS)])
            self.getPlotItem().setXRange(-0.6, len(labels) - 0.4, padding=0)
        self._place_bars()

    @property
    def heights(self) -> list[np.ndarray]:
        """The heights the bars hold now, one array per series (for tests); undefined values hold 0."""
        return [np.asarray(b.opts["height"], dtype=float) for b in self._bars]

    def value_texts(self, series: int | None = None, *, visible_only: bool = False) -> list[str]:
        """The value labels' texts (of one series, or all), in category order."""
        return [t.toPlainText() for s, _i, t in self.values.items()
                if (series is None or s == series) and (t.isVisible() or not visible_only)]

    def placeholders(self) -> list[tuple[int, int, str]]:
        """(series, category, tag) of every drawn placeholder: tag "nan", "div0", "inf" or "neg_inf"."""
        out = []
        for s, h in enumerate(self._heights):
            if self._shown[s]:
                out += [(s, int(i), self._tag(s, h[i])) for i in np.flatnonzero(~np.isfinite(h))]
        return out

    # -- drawing ------------------------------------------------------------------
    def _geometry(self) -> tuple[float, dict[int, float]]:
        """The bar width and each shown series' offset from its category's centre."""
        shown = [s for s, on in enumerate(self._shown) if on]
        width = 0.8 / max(len(shown), 1)
        return width, {s: (r - (len(shown) - 1) / 2) * width for r, s in enumerate(shown)}

    def _tag(self, series: int, v: float) -> str:
        if np.isnan(v):
            return self._nan_tags.get(series, "nan")
        return "inf" if v > 0 else "neg_inf"

    def _place_bars(self) -> None:
        width, offsets = self._geometry()
        x = np.arange(len(self._labels), dtype=float)
        for s, (bar, h) in enumerate(zip(self._bars, self._heights)):
            unchanged.set_visible(bar, self._shown[s])
            ok = np.isfinite(h)
            unchanged.set_opts(bar, x=x[: h.size] + offsets.get(s, 0.0), height=np.where(ok, h, 0.0), width=width)
        self._place_holes()
        self._layout_labels()

    def _place_holes(self) -> None:
        if not self._holes:
            return
        width, offsets = self._geometry()
        lo, hi = self._shown_range
        for s, (hole, h) in enumerate(zip(self._holes, self._heights)):
            bad = np.flatnonzero(~np.isfinite(h)) if self._shown[s] else np.zeros(0, dtype=int)
            if not bad.size and not hole.isVisible() and _empty_hole(hole, width):
                continue  # no placeholders, and none drawn: what the calls below would leave as it is
            tops = np.where(np.isneginf(h[bad]), lo, hi)
            unchanged.set_opts(hole, x=bad + offsets.get(s, 0.0), height=tops, width=width)
            unchanged.set_visible(hole, bad.size > 0)

    def _bars_now(self) -> bar_labels.Bars:
        width, offsets = self._geometry()
        return bar_labels.Bars(self._heights, self._shown, offsets, width, self._shown_range)

    def _make_texts(self) -> None:
        """One label per shown bar (the values, if ``value_labels``) and per placeholder (its tag)."""
        if max((h.size for h in self._heights), default=0) > MAX_LABELLED_BARS:
            return self.values.set_texts([], [])
        self.values.set_texts(*bar_labels.label_texts(
            self._heights, self._shown, percent=self._percent, values=self._value_labels,
            tag=lambda s, v: tr(f"plot.undefined.{self._tag(s, v)}")))

    def _layout_labels(self, *_args) -> None:
        """Make room for the value labels above and below the bars, then place them (in pixels)."""
        if self._laying_out or not hasattr(self, "values"):
            return  # (a layout that new texts reach while it runs writes them: ValueLabels.layout)
        if self._batching:
            self._layout_pending = True
            return
        self._laying_out = True
        try:
            self._fit_y_range()
            self._fit_outline()
            self._place_holes()
            theme = themes.current()
            self.values.layout(self._bars_now(), [themes.colour(theme, r) for _n, r in self._series],
                               theme.foreground)
        finally:
            self._laying_out = False

    def _bar_pen(self, theme: themes.Theme):
        """The bars' outline: the background colour between neighbours, none where bars are too thin for it."""
        return pg.mkPen(theme.background, width=1) if self._outlined else pg.mkPen(None)

    def _fit_outline(self) -> None:
        """Outline the bars only while one is at least OUTLINE_MIN_PX wide: on a thinner bar the 1-pixel
        outline in the background colour covers its whole fill (512 keys in 200 pixels drew nothing)."""
        vb = self.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        if x1 <= x0 or vb.width() <= 0:
            return
        outlined = self._geometry()[0] * vb.width() / (x1 - x0) >= OUTLINE_MIN_PX
        if outlined != self._outlined:
            self._outlined = outlined
            pen = self._bar_pen(themes.current())
            for bar in self._bars:
                bar.setOpts(pen=pen)

    def _fit_y_range(self) -> None:
        lo, hi = self._y_range
        vb = self.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        bars = self._bars_now()
        ends = np.concatenate([h[np.isfinite(h)] for s, h in enumerate(self._heights) if self._shown[s]]
                              or [np.zeros(0)])
        if ends.size and self._value_labels and vb.height() > 0 and x1 > x0:
            up, down = self.values.headroom(bars, vb.width() / (x1 - x0))
            top, bottom = float(ends.max()), float(ends.min())
            lo, hi = bar_labels.fit_range(lo, hi, max(top, 0.0), min(bottom, 0.0), vb.height(),
                                          up if top > 0 else 0.0, down if bottom < 0 else 0.0)
        self._shown_range = (lo, hi)
        if tuple(vb.viewRange()[1]) != (lo, hi):
            vb.setYRange(lo, hi, padding=0)

    def theme_changed(self, theme: themes.Theme) -> None:
        for bar, hole, (_name, role) in zip(self._bars, self._holes, self._series):
            c = themes.colour(theme, role)
            bar.setOpts(brush=pg.mkBrush(c), pen=self._bar_pen(theme))
            hatch = QBrush(pg.mkColor(c), Qt.BrushStyle.BDiagPattern)
            hole.setOpts(brush=hatch, pen=pg.mkPen(c, width=1.5, style=Qt.PenStyle.DashLine))
        self._style_legend(theme)
        self._layout_labels()

    def _style_legend(self, theme: themes.Theme) -> None:
        legend = self.getPlotItem().legend
        if legend is None:
            return
        names = [name for name, _role in self._series]
        for k, (_sample, label) in enumerate(legend.items):  # entries a subclass added too (after the series)
            label.setText(names[k] if k < len(names) else label.text, color=theme.foreground)

    def _describe_bar(self, x: float, y: float) -> str:
        """The hovered bar's value (every shown series' when the mouse is between bars)."""
        n = len(self._labels)
        i = int(round(x))
        if not 0 <= i < n:
            return ""
        width, offsets = self._geometry()
        # the bar under the mouse (its inner 80%: near an edge between two bars, both are named)
        under = [s for s, off in offsets.items() if abs(x - i - off) < 0.4 * width]
        parts = []
        for s, ((name, _role), h) in enumerate(zip(self._series, self._heights)):
            if not self._shown[s] or i >= h.size or (under and s not in under):
                continue
            v = h[i]
            prefix = self._value_name if len(self._series) == 1 else f"{name}: {self._value_name}"
            if not np.isfinite(v):
                parts.append(f"{prefix} = {tr('plot.undefined.' + self._tag(s, v) + '.hover')}")
                continue
            text = f"{prefix} = {fmt(v)}"
            if self._percent:
                text += f" ({100 * v:.2f}%)"
            parts.append(text)
        return f"{self._labels[i]} — " + "; ".join(parts)
