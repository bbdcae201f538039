"""Translucent grid lines blitted from cached images, pixel for pixel what QPainter draws.

Qt's raster engine strokes a translucent cosmetic line pixel by pixel
through its generic blend path, about ten times slower than an opaque one:
the plots' grid (the axes' tick pens at alpha 0.15, across the whole plot)
took 3-4 ms of a 5 ms repaint of a plot, where pyqtgraph's bare widget,
without a grid, spends about 1 ms in all (bench/gui_latency.py).

:class:`GridLayers` draws each such line once into a small image of its
own, in device pixels (an opaque copy of the pen marks which pixels the line
covers, then a ``SourceIn`` fill gives those pixels the pen's colour,
premultiplied exactly as the raster engine premultiplies a solid colour),
and blends the image over the plot at every paint.  Blending a premultiplied
pixel ``s`` over ``d`` computes ``s + d * (255 - alpha(s)) / 255`` with the
same byte arithmetic whether ``s`` comes from a solid pen or from an image,
and the lines of one layer set never overlap one another in one image, so
the picture is the same to the bit (tests/gui/test_paint_speed3_grid.py
compares grabs with and without the layers).

Making an image costs more than drawing its line once (about 0.2 ms for a
700-pixel line, against 0.1-0.15 ms to draw it), so a line is drawn by
QPainter the first time it shows up, and put in an image when the next paint
shows it again at the same place: lines that move at every paint (a range
that follows the data) cost what they did, lines that stay cost a blit.

The images are only used where that holds: a raster paint engine, a
transform that only translates (no scaling: a high-DPI screen, an export at
another resolution, or an SVG export draw the lines themselves), full
opacity and the SourceOver composition mode.  An image is reused while its
line, pen and device offset stay the same, so a repaint that does not move
the grid costs one small blit per line (a run of vertical lines shares one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QPaintEngine, QPainter, QPen, QTransform

#: Turn the layers off (tests compare against the lines drawn by QPainter itself).
ENABLED = True

_TRANSLATE = (QTransform.TransformationType.TxNone, QTransform.TransformationType.TxTranslate)
_Line = tuple[QPen, QPointF, QPointF]


def layerable(pen: QPen) -> bool:
    """Whether a line drawn with ``pen`` may come from a layer: a solid, translucent (not invisible) colour."""
    return (pen.style() == Qt.PenStyle.SolidLine and pen.brush().style() == Qt.BrushStyle.SolidPattern
            and 0 < pen.color().alpha() < 255)


def usable(p: QPainter) -> bool:
    """Whether blitting a layer onto ``p`` gives the same pixels as drawing the line on it."""
    if not ENABLED:
        return False
    engine = p.paintEngine()
    return (engine is not None and engine.type() == QPaintEngine.Type.Raster
            and p.combinedTransform().type() in _TRANSLATE and p.deviceTransform().type() in _TRANSLATE
            and p.opacity() == 1.0 and p.compositionMode() == QPainter.CompositionMode.CompositionMode_SourceOver)


def _device(a: QPointF, b: QPointF, dx: float, dy: float) -> tuple[float, float, float, float] | None:
    """The line's device coordinates as the engine computes them (``c + d``: a translation), or None if negative.

    The image draws the line at these numbers less its whole-pixel origin
    (exact differences: 0 <= origin <= coordinate), with no transform, so it
    rasterises the same numbers as the engine up to whole pixels.  Adding
    the offset to the image's painter instead (``c + (d - o)``) rounded
    differently in the last bit now and then, and a line at device
    y = 402.0 (a grid line on the plot's edge) fell on row 401 instead of 402.
    Negative coordinates are left to QPainter (truncation to fixed point
    turns the other way there).
    """
    v = (a.x() + dx, a.y() + dy, b.x() + dx, b.y() + dy)
    return v if min(v) >= 0 else None


def _layer(pen: QPen, lines: Sequence[tuple[float, float, float, float]]) -> tuple[QPoint, QImage]:
    """The lines between device points (x0, y0, x1, y1) as one premultiplied image, and the pixel it starts at.

    The lines must not share a pixel (one image blends each pixel once).
    """
    pad = max(2, math.ceil(pen.widthF()) + 1)
    xs = [c for v in lines for c in (v[0], v[2])]
    ys = [c for v in lines for c in (v[1], v[3])]
    ox, oy = max(0, math.floor(min(xs)) - pad), max(0, math.floor(min(ys)) - pad)
    image = QImage(math.ceil(max(xs)) + pad + 1 - ox, math.ceil(max(ys)) + pad + 1 - oy,
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    q = QPainter(image)
    q.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    opaque = QPen(pen)
    colour = QColor(pen.color())
    colour.setAlpha(255)
    opaque.setColor(colour)
    q.setPen(opaque)
    for x0, y0, x1, y1 in lines:
        q.drawLine(QPointF(x0 - ox, y0 - oy), QPointF(x1 - ox, y1 - oy))  # the pixels the lines cover, opaque
    q.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
    q.fillRect(image.rect(), pen.color())  # ... take the pen's colour, premultiplied as the engine does it
    q.end()
    return QPoint(ox, oy), image


def _groups(lines: Sequence[_Line]) -> list[list[_Line]]:
    """``lines`` in order, in runs that one image may hold: vertical lines of one pen, each clear of the last.

    An image of a vertical line blends it row by row, each row a call of its
    own, so one image for all the vertical lines of an axis (the bottom
    axis's grid: each row one call for all of them) costs what one line did;
    a horizontal line is one row, so each has its own image (no image as
    large as the plot).  A line closer to any line of the run than the pen's
    width plus two pixels might share pixels with it, which two lines blend
    twice and one image once: it starts a new run.
    """
    out: list[list[_Line]] = []
    for line in lines:
        pen, a, b = line
        run = out[-1] if out else None
        if (run is not None and a.x() == b.x() and run[-1][1].x() == run[-1][2].x() and run[-1][0] == pen
                and all(abs(a.x() - other.x()) > math.ceil(pen.widthF()) + 2 for _p, other, _b in run)):
            run.append(line)
        else:
            out.append([line])
    return out


class GridLayers:
    """Draws non-antialiased translucent lines from cached images (see the module's notes)."""

    def __init__(self) -> None:
        self._cache: dict[tuple, tuple[QPen, QPoint, QImage]] = {}
        self._seen: set[tuple] = set()  # lines drawn by QPainter in the last paint, first seen there
        self.built = 0  # images made so far (for tests)
        self.direct = 0  # lines drawn by QPainter itself so far (for tests)

    def draw(self, p: QPainter, lines: Sequence[_Line]) -> None:
        """Draw ``lines`` on ``p`` (which :func:`usable` accepted), in order, antialiasing off."""
        device, logical = p.deviceTransform(), p.combinedTransform()
        dx, dy = device.dx(), device.dy()
        # the device offset of the painter's logical origin (a widget's place in its window's backing store)
        rx, ry = dx - logical.dx(), dy - logical.dy()
        whole = rx == math.floor(rx) and ry == math.floor(ry)
        cache: dict[tuple, tuple[QPen, QPoint, QImage]] = {}
        seen: set[tuple] = set()
        todo: list[tuple[QPoint, QImage] | _Line] = []
        for group in _groups(lines):
            pen = group[0][0]
            key = (dx, dy, *((a.x(), a.y(), b.x(), b.y()) for _pen, a, b in group))
            hit = cache.get(key) or self._cache.get(key)
            if hit is None or hit[0] != pen:
                if key not in self._seen:
                    # first seen: QPainter draws it (an image costs more to make than the line to draw,
                    # and lines that move at every paint, as a range follows the data, would never reuse it);
                    # the image is made when the line shows up again in the next paint
                    seen.add(key)
                    todo += group
                    continue
                device_lines = [_device(a, b, dx, dy) for _pen, a, b in group] if whole else [None]
                if None in device_lines:
                    self.direct += len(group)
                    todo += group
                    continue
                origin, image = _layer(pen, device_lines)
                hit = (QPen(pen), origin - QPoint(int(rx), int(ry)), image)
                self.built += 1
            cache[key] = hit
            todo.append(hit[1:])
        self._cache = cache
        self._seen = seen
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        for step in todo:
            if len(step) == 3:  # drawn by QPainter itself
                p.setPen(step[0])
                p.drawLine(step[1], step[2])
                continue
            p.save()
            p.setViewTransformEnabled(False)
            p.setWorldTransform(QTransform())
            p.drawImage(*step)
            p.restore()
        p.restore()

    def clear(self) -> None:
        self._cache = {}
        self._seen = set()
