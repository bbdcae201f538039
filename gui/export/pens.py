"""Widen the plot's 1-pixel (cosmetic) pens for the time of a high-resolution PNG.

Qt scales text, shapes and symbols by an image's device pixel ratio but
draws a cosmetic pen (pyqtgraph's default: width in device pixels, so a
curve stays 2 px however a view is zoomed) at its width in *device*
pixels: at 300 dpi a curve would be a hairline beside 3x larger text.
For the PNG, every cosmetic pen of the plot is widened by the same factor
and put back afterwards.  The SVG needs none of this: its strokes are in
its user units and scale with the figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtGui import QPen
from PySide6.QtWidgets import QAbstractGraphicsShapeItem

from gui.qt import pg


def _wider(pen, factor: float) -> QPen | None:
    """``pen`` widened, or None when it is not a cosmetic pen with a line."""
    if pen is None:
        return None
    pen = pg.mkPen(pen)
    if not pen.isCosmetic() or pen.style() == pg.QtCore.Qt.PenStyle.NoPen:
        return None
    out = QPen(pen)
    out.setWidthF(max(pen.widthF(), 1.0) * factor)
    return out


def _set_axis_pen(axis: pg.AxisItem, pen: QPen) -> None:
    """``axis.setPen`` without its side effect: pyqtgraph recolours the axis label in the pen's colour."""
    colour = axis.labelStyle.get("color")
    axis.setPen(pen)
    if colour is not None and axis.labelStyle.get("color") != colour:
        axis.labelStyle["color"] = colour
        axis._updateLabel()


def _widen_item(el, factor: float) -> Callable[[], None] | None:
    if isinstance(el, pg.PlotDataItem):  # its curve and its legend swatch read opts['pen']
        old, old_sym = el.opts.get("pen"), el.opts.get("symbolPen")
        pen, sym = _wider(old, factor), _wider(old_sym, factor)
        if pen is None and sym is None:
            return None
        if pen is not None:
            el.setPen(pen)
        if sym is not None:
            el.setSymbolPen(sym)

        def undo(el=el, old=old, old_sym=old_sym, pen=pen, sym=sym):
            if pen is not None:
                el.setPen(old)
            if sym is not None:
                el.setSymbolPen(old_sym)

        return undo
    if isinstance(el, pg.PlotCurveItem):
        if isinstance(el.parentItem(), pg.PlotDataItem):
            return None  # widened through its PlotDataItem
        old = el.opts.get("pen")
        pen = _wider(old, factor)
        if pen is None:
            return None
        el.setPen(pen)
        return lambda el=el, old=old: el.setPen(old)
    if isinstance(el, pg.BarGraphItem):
        old, olds = el.opts.get("pen"), el.opts.get("pens")
        changes = {}
        if _wider(old, factor) is not None:
            changes["pen"] = _wider(old, factor)
        if olds is not None:
            changes["pens"] = [_wider(p, factor) or p for p in olds]
        if not changes:
            return None
        el.setOpts(**changes)
        restore = {k: (old if k == "pen" else olds) for k in changes}
        return lambda el=el, restore=restore: el.setOpts(**restore)
    if isinstance(el, pg.InfiniteLine):
        old = el.pen
        pen = _wider(old, factor)
        if pen is None:
            return None
        el.setPen(pen)
        return lambda el=el, old=old: el.setPen(old)
    if isinstance(el, pg.AxisItem):
        old = el.pen()
        pen = _wider(old, factor)
        if pen is None:
            return None
        _set_axis_pen(el, pen)
        return lambda el=el, old=old: _set_axis_pen(el, old)
    if isinstance(el, QAbstractGraphicsShapeItem):  # rectangles: highlights, frames
        old = el.pen()
        pen = _wider(old, factor)
        if pen is None:
            return None
        el.setPen(pen)
        return lambda el=el, old=QPen(old): el.setPen(old)
    return None


@contextmanager
def wider_pens(scene, factor: float) -> Iterator[None]:
    """Every cosmetic pen in ``scene`` ``factor`` times wider, until the block ends."""
    undo: list[Callable[[], None]] = []
    try:
        if factor != 1.0:
            for el in scene.items():
                put_back = _widen_item(el, factor)
                if put_back is not None:
                    undo.append(put_back)
        yield
    finally:
        for put_back in reversed(undo):
            put_back()
