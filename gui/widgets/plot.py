"""Themed pyqtgraph plots that report the value under the mouse."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, Signal

from gui import theme as themes
from gui.format import fmt
from gui.qt import pg
from gui.widgets import legends
from gui.widgets.ticks import FittedAxis


def style_current(theme: themes.Theme, marker, now_line) -> None:
    """The look of "you are here" on every plot: a highlighted dot and a dashed line."""
    marker.setSymbolBrush(pg.mkBrush(theme.highlight))
    marker.setSymbolPen(pg.mkPen(theme.background))
    now_line.setPen(pg.mkPen(theme.highlight, width=1, style=pg.QtCore.Qt.PenStyle.DashLine))


class Plot(pg.PlotWidget):
    """A PlotWidget that follows the app theme and reports hover values.

    ``describe(x, y)`` turns the data coordinates under the mouse into the
    status-bar text; ``hovered`` carries it.

    Construction order: the base sets up the plot, calls :meth:`create_items` (subclasses make their
    curves, bars and lines there, after calling ``super().create_items(item)``), then applies the theme
    once.  A subclass stores its own options *before* calling ``super().__init__`` so that
    ``create_items`` can read them, and styles its items only in :meth:`theme_changed`, which therefore
    always finds them.
    """

    hovered = Signal(str)

    def __init__(self, title: str, *, x_label: str = "", y_label: str = "", parent=None):
        super().__init__(parent=parent, axisItems={"left": FittedAxis("left"), "bottom": FittedAxis("bottom")})
        self._title = title
        self._x_label = x_label
        self._y_label = y_label
        self.describe: Callable[[float, float], str] = (
            lambda x, y: f"{self._x_label or 'x'} = {fmt(x)}, {self._y_label or 'y'} = {fmt(y)}"
        )
        self.setMinimumSize(200, 150)  # a 1260 x 690 window holds three rows of plots and their controls
        # Repaint the bounding rectangle of what changed, not the exact region: a region of several
        # rectangles clips every item's drawing to it, which made a Calculator step's paint 4-6 ms where
        # repainting the rectangle around them (or the whole plot) takes 1.2-2 ms (bench/gui_latency.py);
        # the pixels are the same (tests/gui/test_paint_speed3_update.py).
        self.setViewportUpdateMode(pg.QtWidgets.QGraphicsView.ViewportUpdateMode.BoundingRectViewportUpdate)
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
        item = self.getPlotItem()
        if item is None:
            return  # closed (PlotWidget.close drops its plot item): nothing left to restyle
        self.setBackground(theme.background)
        item.setTitle(self._title, color=theme.foreground, size="11pt")
        self._fit_title()
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

    def add_legend(self, *, outside: bool = False, **kwargs) -> pg.LegendItem:
        """A legend whose swatches cannot hide curves (see legends.StaticSample).

        ``outside`` puts it in a row of its own between the title and the
        plot, where it can never cover data, with as many of its
        ``colCount`` columns as the width allows; otherwise it floats inside
        the plot (see :func:`gui.widgets.legends.float_legend`).
        """
        kwargs.setdefault("sampleType", legends.StaticSample)
        item = self.getPlotItem()
        if not outside:
            legend = legends.float_legend(item, **kwargs)
            legend.corner_keeper.moved_out = self._legend_moved_out
            return legend
        legend = legends.outside_legend(item, **kwargs)
        self._outside_legend = (legend, legend.columnCount)
        return legend

    def _legend_moved_out(self, legend: pg.LegendItem) -> None:
        self._outside_legend = (legend, max(legend.columnCount, 2))
        self.fit_legend()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if getattr(self, "plotItem", None) is not None and hasattr(self, "_title"):
            self._fit_title()  # before the base class sizes the plot item to the widget
            self.fit_legend()
        super().resizeEvent(event)

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # hidden (another tab or view), a plot lets go of its grid's images (gui/widgets/grid_lines.py)
        item = self.getPlotItem()
        if item is not None:
            for axis in item.axes.values():
                layers = getattr(axis["item"], "_grid_layers", None)
                if layers is not None:
                    layers.clear()
        super().hideEvent(event)

    def _room(self) -> float:
        """The width of the plot's own column (the title and an outside legend span it), in pixels."""
        return self.width() - self.getPlotItem().getAxis("left").width() - 24

    def _fit_title(self) -> None:
        legends.elide_title(self.getPlotItem().titleLabel, self._title, self._room())

    def fit_legend(self) -> None:
        """Give an outside legend as many of its columns as fit the plot's width (fewer rows first)."""
        legend, most = getattr(self, "_outside_legend", (None, 1))
        if legend is not None:
            legends.fit_columns(legend, most, self._room())

    def set_title(self, title: str) -> None:
        if title != self._title:
            self._title = title
            self.getPlotItem().setTitle(title, color=themes.current().foreground, size="11pt")
            self._fit_title()

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
