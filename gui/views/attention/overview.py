"""The model source's overview: every layer × head of a real model as a small heatmap (BertViz's model view).

Cheap by construction: one image for the whole grid, each cell a head's
weights pooled to at most :data:`CELL_MAX` × :data:`CELL_MAX` block maxima,
no text in the cells; rows are layers, columns heads.  A click on a cell
emits ``cellClicked(layer, head)`` (0-based); the view opens that head.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QPointF, Signal

import compute
from gui import theme as themes
from gui.model.texts import tr
from gui.qt import pg
from gui.widgets import unchanged
from gui.widgets.plot import Plot
from gui.widgets.ticks import nice_step

#: A cell shows at most this many rows and columns of its head (block maxima beyond).
CELL_MAX = 24
#: At most this many layer or head numbers on the axes.
MOST_TICKS = 12


def mosaic(weights: np.ndarray, allowed: np.ndarray, levels: tuple[float, float], masked_rgb: tuple[int, int, int],
           cmap) -> tuple[np.ndarray, int, int]:
    """The RGBA grid image of ``weights`` (L, H, n, n): (image, cell size, pitch); gaps are transparent."""
    pooled, _ = compute.max_pool2d(np.asarray(weights, dtype=np.float64), CELL_MAX, CELL_MAX)
    open_, _ = compute.max_pool2d(np.asarray(allowed, dtype=np.float64), CELL_MAX, CELL_MAX)
    pooled = np.asarray(pooled)
    layers, heads, s, _ = pooled.shape
    gap = max(1, s // 8)
    pitch = s + gap
    lo, hi = levels
    unit = np.clip((np.nan_to_num(pooled) - lo) / ((hi - lo) or 1.0), 0.0, 1.0)
    cells = np.asarray(cmap.map(unit.ravel(), mode="byte"), dtype=np.uint8).reshape(*unit.shape, -1)[..., :4]
    if cells.shape[-1] == 3:
        cells = np.concatenate([cells, np.full(cells.shape[:-1] + (1,), 255, np.uint8)], axis=-1)
    hidden = np.broadcast_to(np.asarray(open_) <= 0, pooled.shape)
    cells[hidden] = (*masked_rgb, 255)
    grid = np.zeros((layers, pitch, heads, pitch, 4), dtype=np.uint8)
    grid[:, :s, :, :s] = cells.transpose(0, 2, 1, 3, 4)
    image = grid.reshape(layers * pitch, heads * pitch, 4)[: layers * pitch - gap, : heads * pitch - gap]
    return np.ascontiguousarray(image), s, pitch


def _ticks(count: int, size: int, pitch: int) -> list[tuple[float, str]]:
    step = nice_step(count, MOST_TICKS)
    return [(i * pitch + size / 2, str(i + 1)) for i in range(0, count, step)]


class ModelOverview(Plot):
    """Every layer (rows) × head (columns) of a real model's attention; click a cell to open it."""

    cellClicked = Signal(int, int)  # layer, head (0-based)

    def __init__(self):
        self._shape = (0, 0)
        self._cell = (0, 1)  # cell size and pitch in image pixels
        self._last: tuple | None = None
        super().__init__(tr("models.attention.grid.title", layers=0, heads=0),
                         x_label=tr("models.attention.grid.head"), y_label=tr("models.attention.grid.layer"))
        self.setObjectName("attention.model_grid")
        self.scene().sigMouseClicked.connect(self._clicked)
        self.describe = self._describe

    def create_items(self, item) -> None:
        super().create_items(item)
        item.showGrid(x=False, y=False)
        item.setMouseEnabled(x=False, y=False)
        item.invertY(True)
        item.setAspectLocked(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        self.cmap = pg.colormap.get("viridis")

    def theme_changed(self, theme: themes.Theme) -> None:
        if self._last is not None:
            self.show_weights(*self._last)

    def show_weights(self, weights: np.ndarray, allowed: np.ndarray, auto_levels: bool = False) -> None:
        """Draw ``weights`` (L, H, n, n), masked cells (``allowed`` False) in the theme's masked colour."""
        self._last = (weights, allowed, auto_levels)
        layers, heads = weights.shape[:2]
        levels = (0.0, 1.0)
        if auto_levels:
            seen = weights[np.broadcast_to(allowed, weights.shape)]
            if seen.size and float(seen.max()) > float(seen.min()):
                levels = (float(seen.min()), float(seen.max()))
        c = pg.mkColor(themes.current().masked)
        image, size, pitch = mosaic(weights, allowed, levels, (c.red(), c.green(), c.blue()), self.cmap)
        unchanged.set_image(self.image, image, autoLevels=False, levels=(0, 255))
        self.image.setRect(0, 0, image.shape[1], image.shape[0])
        item = self.getPlotItem()
        if (layers, heads, size, pitch) != (*self._shape, *self._cell):
            item.getAxis("left").setTicks([_ticks(layers, size, pitch)])
            item.getAxis("bottom").setTicks([_ticks(heads, size, pitch)])
            item.setXRange(0, image.shape[1], padding=0.02)
            item.setYRange(0, image.shape[0], padding=0.02)
        self._shape, self._cell = (layers, heads), (size, pitch)
        self.set_title(tr("models.attention.grid.title", layers=layers, heads=heads))

    @property
    def shape(self) -> tuple[int, int]:
        """(layers, heads) shown."""
        return self._shape

    def _cell_of(self, x: float, y: float) -> tuple[int, int] | None:
        pitch = self._cell[1]
        layer, head = int(np.floor(y / pitch)), int(np.floor(x / pitch))
        layers, heads = self._shape
        return (layer, head) if 0 <= layer < layers and 0 <= head < heads and x >= 0 and y >= 0 else None

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        vb = self.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        return self._cell_of(p.x(), p.y())

    def cell_center(self, layer: int, head: int) -> QPoint:
        """Where cell (layer, head) is drawn, in the widget's coordinates (for a click)."""
        size, pitch = self._cell
        vb = self.getPlotItem().getViewBox()
        scene = vb.mapViewToScene(QPointF(head * pitch + size / 2, layer * pitch + size / 2))
        return self.mapFromScene(scene)

    def _clicked(self, event) -> None:
        if event.button() != pg.QtCore.Qt.MouseButton.LeftButton:
            return
        cell = self.cell_at(event.scenePos())
        if cell is not None:
            self.cellClicked.emit(*cell)

    def _describe(self, x: float, y: float) -> str:
        cell = self._cell_of(x, y)
        if cell is None:
            return ""
        return tr("models.attention.grid.hover", layer=cell[0] + 1, head=cell[1] + 1)
