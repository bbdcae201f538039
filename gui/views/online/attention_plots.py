"""The plots of the attention mode; each draws an AttentionRun in ``show_result``."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from gui import theme as themes
from gui.format import fmt
from gui.model.online import AttentionRun
from gui.model.texts import tr
from gui.qt import pg
from gui.views.online.row_plots import finite_xy, set_step_axis
from gui.widgets import unchanged
from gui.widgets.bar_chart import BarChart
from gui.widgets.heatmap import Heatmap
from gui.widgets.plot import Plot


def query_labels(n: int) -> list[str]:
    return [f"q{i + 1}" for i in range(n)]


class SparseHeatmap(Heatmap):
    """A Heatmap that writes values into its cells only while they are few enough to read."""

    MAX_TEXTS = 36

    def _make_texts(self, count: int) -> None:
        super()._make_texts(count if count <= self.MAX_TEXTS else 0)


class TileHeatmap(SparseHeatmap):
    """The scaled scores QKᵀ/√d (shown for orientation; the loop never forms them), the K/V
    tile being read outlined."""

    def __init__(self):
        super().__init__(tr("online.scores.title"), diverging=True, value_name=tr("online.scores.value"))

    def show_result(self, r: AttentionRun) -> None:
        keys = [f"k{j + 1}" for j in range(r.n)]
        # masked cells (-inf) are drawn blank: an image cannot map -inf to a colour
        self.set_matrix(np.where(np.isfinite(r.scores), r.scores, np.nan), query_labels(r.n), keys)
        s = r.current
        if s is None:
            self.set_tile(0, 0)
        else:
            self.set_tile(s.start, s.stop)

    def set_tile(self, start: int, stop: int) -> None:
        n = self.matrix.shape[0]
        self.highlight.setRect(start, 0, stop - start, n)
        self.highlight.setVisible(stop > start)


class OutputHeatmap(SparseHeatmap):
    """The output so far, acc / l, one row per query."""

    def __init__(self):
        super().__init__(tr("online.acc.title"), diverging=True, value_name=tr("online.acc.value"))

    def show_result(self, r: AttentionRun) -> None:
        cols = [f"o{j + 1}" for j in range(r.v.shape[1])]
        self.set_matrix(r.partial_output, query_labels(r.n), cols)


class RunningLines(Plot):
    """One curve per query row: its running m or l (``name``) against the tile step, up to the current one."""

    def __init__(self, title: str, y_label: str, name: str):
        self._quantity = name
        self.curves: list = []
        super().__init__(title, x_label=tr("online.tile.x"), y_label=y_label)
        self.describe = lambda x, y: tr("online.step.describe", step=round(x), name=name, value=fmt(y))

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.setMouseEnabled(x=False, y=False)
        self.now_line = pg.InfiniteLine(angle=90, movable=False)
        item.addItem(self.now_line, ignoreBounds=True)

    def theme_changed(self, theme: themes.Theme) -> None:
        for i, c in enumerate(self.curves):
            self._style_curve(c, i, theme)
        self.now_line.setPen(pg.mkPen(theme.highlight, width=1.5, style=Qt.PenStyle.DashLine))

    @staticmethod
    def _style_curve(c, i: int, theme: themes.Theme) -> None:
        colour = themes.colour(theme, i)
        c.setPen(pg.mkPen(colour, width=1.5))
        c.setSymbolBrush(pg.mkBrush(colour))
        c.setSymbolPen(pg.mkPen(None))

    def show_result(self, r: AttentionRun) -> None:
        m_run, l_run = r.running()
        self._set_lines(m_run if self._quantity == "m" else l_run, r.step)

    def _set_lines(self, y: np.ndarray, step: int) -> None:
        """``y`` is (steps + 1, rows); step 0 (nothing read) is left out where it is not a number."""
        item = self.getPlotItem()
        rows = y.shape[1]
        theme = themes.current()
        while len(self.curves) < rows:
            curve = item.plot([], [], symbol="o", symbolSize=4)
            self._style_curve(curve, len(self.curves), theme)
            self.curves.append(curve)
        while len(self.curves) > rows:
            item.removeItem(self.curves.pop())
        steps = np.arange(y.shape[0], dtype=float)
        done = step + 1  # tiles not read yet are not drawn; the axis still shows them
        for i, c in enumerate(self.curves):
            unchanged.set_curve(c, *finite_xy(steps[:done], y[:done, i]))
        self.now_line.setValue(step)
        set_step_axis(item, y.shape[0] - 1)


class RescaleBars(BarChart):
    """This tile's rescale factor e^(m_old − m_new) per query row (NaN, no bar, at step 0)."""

    def __init__(self):
        super().__init__(tr("online.rescale.title"), [(tr("online.rescale.name"), "accent")], value_labels=False,
                         percent=False, value_name=tr("online.rescale.name"), y_range=(-0.02, 1.1))

    def show_result(self, r: AttentionRun) -> None:
        s = r.current
        factors = s.rescale if s is not None else np.full(r.n, np.nan)
        self.set_data(query_labels(r.n), [factors])
