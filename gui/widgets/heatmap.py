"""A matrix drawn as a heatmap with a colour bar, labelled rows and columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPointF, Signal
from PySide6.QtGui import QColor, QFontMetricsF

import compute
from gui import theme as themes
from gui.format import fmt
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.plot import Plot
from gui.widgets.ticks import few_ticks, label_html_once, label_ticks
from gui.widgets.value_text import Turns, ValueText

#: Cells get text items for their values up to this many rows/columns; the numbers show
#: only while they fit their cells in pixels (see Heatmap.fit_cell_texts).
MAX_ANNOTATED = 16
#: Pixels a cell keeps free around its number, across and down.
CELL_PAD = (4.0, 2.0)
#: PooledHeatmap shows block maxima beyond this many rows or columns.
DISPLAY_MAX = 512
#: Token labels fit under a narrow plot up to this many columns; beyond, columns are numbered.
WORDS_ACROSS = 6


def _two_decimals(v: float) -> str:
    return f"{v:.2f}" if np.isfinite(v) else fmt(v)


def _one_decimal(v: float) -> str:
    return f"{v:.1f}" if np.isfinite(v) else fmt(v)


#: themes.text_on's rule: black text when (L + 0.05)^2 > 0.05 * 1.05, L the background's relative luminance.
BLACK_ABOVE = 0.05 * 1.05
#: Cells whose (L + 0.05)^2 computed here lies this close to BLACK_ABOVE are decided by themes.text_on
#: itself (NumPy's power may differ from Python's in the last bits; the margin is far wider).
DOUBT = 1e-4


def _linear(v: np.ndarray) -> np.ndarray:
    """sRGB to linear light, as theme._luminance."""
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def dark_text(lut: pg.ColorMap, fractions: np.ndarray) -> np.ndarray:
    """Whether ``themes.text_on`` picks black on ``lut.map(f, mode="qcolor")`` for each ``f``, all at once.

    The same interpolation as the map's QColor mode, each channel rounded to the 16 bits a QColor keeps
    (``QColor.fromRgbF`` takes floats), then text_on's luminance and threshold; a colour too near the
    threshold to be sure of goes through text_on as a QColor, so the choice is text_on's exactly.
    """
    fractions = np.asarray(fractions, dtype=float)
    rgba = np.asarray(lut.map(fractions, mode="float"), dtype=float).reshape(fractions.size, -1)
    # QColor.fromRgbF(float r, ...) keeps int(r * 65535 + 0.5) in float arithmetic (qRound of a float)
    sixteen = np.floor(rgba[:, :3].astype(np.float32) * np.float32(65535) + np.float32(0.5))
    channel = sixteen.astype(np.float64) / 65535
    lum = 0.2126 * _linear(channel[:, 0]) + 0.7152 * _linear(channel[:, 1]) + 0.0722 * _linear(channel[:, 2])
    score = (lum + 0.05) ** 2
    black = score > BLACK_ABOVE
    for k in np.flatnonzero(np.abs(score - BLACK_ABOVE) < DOUBT):
        black[k] = themes.text_on(QColor.fromRgbF(*rgba[k].tolist())) == "#000000"
    return black


class Heatmap(Plot):
    """An n x m matrix as an image: row 0 at the top, one cell per entry.

    ``diverging`` uses a blue-white-red map with levels symmetric about 0
    (for Jacobians); otherwise viridis over ``levels``.  Cell values are
    written in the cells for small matrices.  ``cellClicked(row, col)``
    fires on a left click inside a cell.
    """

    cellClicked = Signal(int, int)

    def __init__(self, title: str, *, diverging: bool = True, levels: tuple[float, float] = (0.0, 1.0),
                 value_name: str = "value", x_label: str = "", y_label: str = "", parent=None):
        self._diverging = diverging
        self._levels = levels
        self._value_name = value_name
        self._matrix = np.zeros((0, 0))
        self._rows: tuple[str, ...] = ()
        self._cols: tuple[str, ...] = ()
        self._texts: list[ValueText] = []
        self._text_colours: list[str | None] = []
        self._cell_values = np.zeros((0, 0))
        self._cell_formats: tuple = (fmt,)
        #: Whether the cells' numbers are drawn now (they fit their cells); else the colour bar gives the reading.
        self.cell_numbers_shown = False
        super().__init__(title, x_label=x_label, y_label=y_label)
        self.scene().sigMouseClicked.connect(self._clicked)
        self.describe = self._describe_cell

    def create_items(self, item: pg.PlotItem) -> None:
        super().create_items(item)
        item.showGrid(x=False, y=False)
        item.setMouseEnabled(x=False, y=False)
        item.invertY(True)
        item.setAspectLocked(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        cmap = pg.colormap.get("CET-D1" if self._diverging else "viridis")
        self.colorbar = pg.ColorBarItem(values=self._levels, colorMap=cmap, interactive=False, width=14)
        self.colorbar.setImageItem(self.image, insert_in=item)
        for side in ("left", "right", "top", "bottom"):
            label_html_once(self.colorbar.getAxis(side))
        # the title spans the plot and its colour bar: fitted to the room right of the left axis, over
        # the plot's column alone it pushed the colour bar and its labels out of the widget
        item.layout.removeItem(item.titleLabel)
        item.layout.addItem(item.titleLabel, 0, 1, 1, 5)
        self.highlight = pg.QtWidgets.QGraphicsRectItem(0, 0, 1, 1)
        self.highlight.setZValue(10)
        self.highlight.hide()
        item.addItem(self.highlight)
        vb = item.getViewBox()
        vb.sigResized.connect(self.fit_cell_texts)
        vb.sigRangeChanged.connect(self.fit_cell_texts)
        vb.sigResized.connect(self._keep_colorbar_inside)

    def theme_changed(self, theme: themes.Theme) -> None:
        axis = self.colorbar.axis
        axis.setPen(pg.mkPen(theme.muted))
        axis.setTextPen(pg.mkPen(theme.foreground))
        pen = pg.mkPen(theme.foreground, width=2)
        pen.setCosmetic(True)
        self.highlight.setPen(pen)
        self._color_texts()

    def _keep_colorbar_inside(self, *_args) -> None:
        """A title fitted before the axes took their width leaves the plot wider than the widget, the
        colour bar's labels cut off: fit the title again and put the plot back inside the widget."""
        item = self.getPlotItem()
        if item.geometry().width() > self.width() + 0.5:
            self._fit_title()
            item.setGeometry(self.range)

    def set_matrix(self, matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str]) -> None:
        matrix = np.asarray(matrix, dtype=float)
        key = (tuple(rows), tuple(cols), self._levels, self._diverging)
        if key == getattr(self, "_drawn_key", None) and unchanged.same(matrix, getattr(self, "_drawn", None)):
            return  # the same matrix: nothing to repaint
        self._drawn_key, self._drawn = key, unchanged.kept(matrix)
        n, m = matrix.shape
        if self._diverging:
            finite = np.abs(matrix[np.isfinite(matrix)])
            top = float(finite.max()) if finite.size else 0.0
            top = top if top > 0 else 1.0
            levels = (-top, top)
        else:
            levels = self._levels
        self.image.setImage(np.nan_to_num(matrix, nan=0.0), levels=levels)
        self.image.setRect(0, 0, m, n)
        self.colorbar.setLevels(levels)
        rows, cols = tuple(rows), tuple(cols)
        item = self.getPlotItem()
        if (rows, cols) != (self._rows, self._cols):
            self._rows, self._cols = rows, cols
            item.getAxis("left").setTicks([[(i + 0.5, r) for i, r in enumerate(rows)]])
            item.getAxis("bottom").setTicks([[(j + 0.5, c) for j, c in enumerate(cols)]])
            item.setXRange(0, m, padding=0.02)
            item.setYRange(0, n, padding=0.02)
            self._make_texts(n * m if max(n, m) <= MAX_ANNOTATED else 0)
        self._matrix = matrix
        self._write_cells(matrix, (fmt, _two_decimals))

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix

    def set_highlight(self, col: int | None) -> None:
        """Outline column ``col`` (or nothing)."""
        n, m = self._matrix.shape
        if col is None or not 0 <= col < m:
            self.highlight.hide()
            return
        self.highlight.setRect(col, 0, 1, n)
        self.highlight.show()

    def _write_cells(self, values: np.ndarray, formats: tuple) -> None:
        """Cell k's text shows ``values.flat[k]`` in the first of ``formats`` that fits (see fit_cell_texts)."""
        m = values.shape[1] if values.ndim == 2 else 1
        placed = getattr(self, "_placed", None)
        if placed is None or placed[0] is not self._texts or placed[1] != m:  # positions follow the shape alone
            self._placed = (self._texts, m)
            for k, text in enumerate(self._texts):
                i, j = divmod(k, m)
                text.setPos(j + 0.5, i + 0.5)
        self._cell_values = values
        self._cell_formats = formats
        self.fit_cell_texts()
        self._color_texts()

    def fit_cell_texts(self, *_args) -> None:
        """Show the cells' numbers in the longest format that fits every cell in pixels, or hide them all.

        Re-run on every resize and range change; while hidden, the colour
        bar (and the hover text) carry the reading.
        """
        texts = self._texts
        if not texts or self._cell_values.size < len(texts):
            self.cell_numbers_shown = False
            return
        vb = self.getPlotItem().getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        cell_w = vb.width() / abs(x1 - x0) if x1 != x0 else 0.0
        cell_h = vb.height() / abs(y1 - y0) if y1 != y0 else 0.0
        metrics = QFontMetricsF(texts[0].textItem.font())
        values = self._cell_values.ravel()[: len(texts)]
        chosen = None
        if metrics.height() + CELL_PAD[1] <= cell_h:
            # each distinct value (bit for bit: -0.0 and 0.0 may print apart) formatted and measured once
            bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
            _, first, inverse = np.unique(bits, return_index=True, return_inverse=True)
            uniq = values[first]
            for f in self._cell_formats:
                texts_u = [f(v) for v in uniq]
                if all(metrics.horizontalAdvance(t) + CELL_PAD[0] <= cell_w for t in dict.fromkeys(texts_u)):
                    chosen = [texts_u[i] for i in inverse.ravel()]
                    break
        was = self.cell_numbers_shown
        self.cell_numbers_shown = shown = chosen is not None
        if shown and not was:
            self._color_texts()
        for k, text in enumerate(texts):
            if shown and text.toPlainText() != chosen[k]:
                text.setText(chosen[k])
            if text.isVisible() != shown:
                text.setVisible(shown)

    def _make_texts(self, count: int) -> None:
        item = self.getPlotItem()
        for t in self._texts:
            item.removeItem(t)
        turns = Turns()  # the cells' shared transforms (one parent)
        self._texts = [ValueText(turns, anchor=(0.5, 0.5)) for _ in range(count)]
        self._text_colours: list[str | None] = [None] * count  # what each text was last coloured
        for t in self._texts:
            t.setZValue(5)
            item.addItem(t)

    def _color_texts(self) -> None:
        """Dark text on light cells, light text on dark ones."""
        if not self._texts or not self.cell_numbers_shown:
            return  # hidden numbers are coloured when they show (fit_cell_texts)
        lut = self.colorbar.colorMap()
        lo, hi = self.colorbar.levels()
        span = (hi - lo) or 1.0
        # one map call for every cell (np.interp entry by entry: the colours one call per cell gives)
        values = np.asarray(self._matrix, dtype=float).ravel()[: len(self._texts)]
        black = dark_text(lut, (np.nan_to_num(values) - lo) / span)  # themes.text_on's choice, cell by cell
        names = ("#ffffff", "#000000")
        for k, (text, is_black) in enumerate(zip(self._texts, black.tolist())):
            colour = names[is_black]  # black or white, whichever reads better (>= 4.58:1)
            if self._text_colours[k] != colour:  # a text set its colour again repaints
                self._text_colours[k] = colour
                text.setColor(colour)

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(p.y())), int(np.floor(p.x()))
        n, m = self._matrix.shape
        return (i, j) if 0 <= i < n and 0 <= j < m else None

    def _clicked(self, event) -> None:
        if event.button() != pg.QtCore.Qt.MouseButton.LeftButton:
            return
        cell = self.cell_at(event.scenePos())
        if cell is not None:
            self.cellClicked.emit(*cell)

    def _describe_cell(self, x: float, y: float) -> str:
        i, j = int(np.floor(y)), int(np.floor(x))
        n, m = self._matrix.shape
        if not (0 <= i < n and 0 <= j < m):
            return ""
        return f"{self._value_name}[{self._rows[i]}, {self._cols[j]}] = {fmt(self._matrix[i, j], 4)}"


class PooledHeatmap(Heatmap):
    """A Heatmap in full-matrix coordinates that may show block maxima, a row outline and masked cells.

    The image always spans the full matrix (so clicks and hover read real
    rows and columns) even when it holds a pooled copy (block maxima beyond
    ``display_max`` rows or columns; :attr:`pooling` says by how much).
    Masked cells get an overlay in the theme's masked colour, so they read
    apart from weights that are merely near 0.  ``compact`` tiles get a few
    numbered ticks only.
    """

    def __init__(self, title: str, *, annotate: bool = False, display_max: int = DISPLAY_MAX,
                 compact: bool = False, words_across: int = WORDS_ACROSS, **kwargs):
        self._annotate = annotate
        self.display_max = display_max
        self.compact = compact
        self._words_across = words_across
        self._full: np.ndarray = np.zeros((0, 0))
        self._shape = (0, 0)
        self._ticks_key: tuple = ()
        self.pooling = (1, 1)
        super().__init__(title, **kwargs)

    def create_items(self, item) -> None:
        super().create_items(item)
        self.overlay = pg.ImageItem(axisOrder="row-major")
        self.overlay.setZValue(4)
        self.overlay.hide()
        item.addItem(self.overlay)

    def show_matrix(self, full: np.ndarray, rows, cols, *, masked: np.ndarray | None = None,
                    auto_levels: bool = False) -> tuple[int, int]:
        """Draw ``full`` (block maxima beyond ``display_max``); returns the pooling factors."""
        full = np.asarray(full, dtype=float)
        key = (tuple(rows), tuple(cols), auto_levels, self.display_max, self.compact, self._annotate,
               self._words_across, self._levels, self._diverging)
        if (key == getattr(self, "_drawn_key", None) and unchanged.same(full, getattr(self, "_drawn", None))
                and unchanged.same(masked, getattr(self, "_drawn_mask", None))):
            return self.pooling  # the same matrix: nothing to repaint
        self._drawn_key, self._drawn, self._drawn_mask = key, unchanged.kept(full), unchanged.kept(masked)
        n, m = full.shape
        shown, (fr, fc) = compute.max_pool2d(full, self.display_max, self.display_max)
        shown = np.asarray(shown, dtype=float)
        # the finite entries set the levels only when they follow the data (a copy only if some are not)
        ok = np.isfinite(shown)
        all_finite = bool(ok.all())
        finite = (shown if all_finite else shown[ok]) if self._diverging or auto_levels else None
        if self._diverging:
            top = float(np.abs(finite).max()) if finite.size else 0.0
            levels = (-top, top) if top > 0 else (-1.0, 1.0)
        elif auto_levels and finite.size:
            lo, hi = float(finite.min()), float(finite.max())
            levels = (lo, hi) if hi > lo else (lo, lo + 1.0)
        else:
            levels = self._levels
        drawn = shown.copy() if all_finite else np.nan_to_num(shown, nan=0.0, posinf=0.0, neginf=0.0)
        self.image.setImage(drawn, levels=levels)
        width, height = shown.shape[1] * fc, shown.shape[0] * fr
        self.image.setRect(0, 0, width, height)
        self.colorbar.setLevels(levels)
        self._show_mask(masked, width, height)
        item = self.getPlotItem()
        key = (tuple(rows), tuple(cols))
        if key != self._ticks_key:
            self._ticks_key = key
            if self.compact:
                item.getAxis("left").setTicks([few_ticks(n)])
                item.getAxis("bottom").setTicks([few_ticks(m)])
            else:
                item.getAxis("left").setTicks([label_ticks(n, rows)])
                item.getAxis("bottom").setTicks([label_ticks(m, cols, self._words_across)])
            item.setXRange(0, m, padding=0.02)
            item.setYRange(0, n, padding=0.02)
            self._rows, self._cols = tuple(rows), tuple(cols)
            self._matrix = shown
            self._make_texts(n * m if self._annotate and max(n, m) <= MAX_ANNOTATED else 0)
        self._matrix = shown
        self._full = full
        self._shape = (n, m)
        self.pooling = (fr, fc)
        if len(self._texts) == n * m:  # weights lie in 0..1: two decimals, one where two do not fit
            self._write_cells(full, (_two_decimals, _one_decimal))
        return fr, fc

    def _show_mask(self, masked, width, height) -> None:
        if masked is None or not masked.any():
            self.overlay.hide()
            return
        allowed, _ = compute.max_pool2d((~masked).astype(float), self.display_max, self.display_max)
        hidden = np.asarray(allowed) <= 0  # a block is drawn masked when all its cells are
        rgba = np.zeros(hidden.shape + (4,), dtype=np.uint8)
        c = pg.mkColor(themes.current().masked)
        rgba[hidden] = (c.red(), c.green(), c.blue(), 215)
        unchanged.set_image(self.overlay, rgba, autoLevels=False, levels=(0, 255))
        self.overlay.setRect(0, 0, width, height)
        self.overlay.show()

    def set_row(self, row: int | None) -> None:
        """Outline row ``row`` (or nothing)."""
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
