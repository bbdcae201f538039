"""Tick lists for pyqtgraph axes: labelled categories, numbered rows, whole numbers, 1-2-5 decades.

Each function returns ``[(position, text), ...]`` for ``AxisItem.setTicks([ticks])``.
Category ``i`` sits at ``i + offset``: 0.5 for heatmap cells (cell ``i``
spans ``i..i+1``), 0 for bars centred on ``i``.

Fixed ticks are thinned to what fits in pixels by :class:`FittedAxis` (every
:class:`gui.widgets.plot.Plot` uses it for its left and bottom axes): pyqtgraph
draws every fixed tick's text however crowded, and its axes cannot rotate
text, so at n = 24 token labels used to run into each other.  The rule,
:func:`thin_ticks`, keeps every k-th label for the smallest k at which no
two kept labels overlap, measured with the axis's own font; it is
re-applied whenever the axis is redrawn (resize, range change, new ticks).
"""

from __future__ import annotations

import math
import types
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPen, QPicture

from gui.qt import pg
from gui.widgets import grid_lines

#: Pixels left free between two neighbouring tick labels.
LABEL_GAP = 6.0

#: Categories keep their labels up to this many; numbered ticks for each up to :data:`MAX_NUMBERED`.
MAX_LABELLED = 40
MAX_NUMBERED = 40
#: At most this many ticks when the categories are too many to number one by one.
NICE_TICKS = 10

Ticks = list[tuple[float, str]]


def nice_step(count: int, most: int) -> int:
    """The smallest step of the 1, 2, 5, 10, 20, ... series that leaves at most ``most`` ticks over ``count``."""
    k, step = 0, 1
    while -(-count // step) > most:
        k += 1
        step = (1, 2, 5)[k % 3] * 10 ** (k // 3)
    return step


def numbered_ticks(count: int, step: int, offset: float = 0.5) -> Ticks:
    """1-based numbers every ``step`` categories."""
    return [(i + offset, str(i + 1)) for i in range(0, count, max(1, step))]


def label_ticks(count: int, labels: Sequence[str], most: int = MAX_LABELLED, offset: float = 0.5) -> Ticks:
    """Every label when at most ``most``; else every category numbered up to MAX_NUMBERED; else about 8 numbers."""
    if count <= most:
        return [(i + offset, str(lb)) for i, lb in enumerate(labels[:count])]
    if count <= MAX_NUMBERED:
        return numbered_ticks(count, 1, offset)
    return numbered_ticks(count, nice_step(count, NICE_TICKS), offset)


def few_ticks(count: int, most: int = 4, offset: float = 0.5) -> Ticks:
    """At most ``most`` 1-based numbers at a 1-2-5 step (small plots, such as the heads grid's tiles)."""
    return numbered_ticks(count, nice_step(count, most), offset)


def strided_labels(labels: Sequence[str], most: int, offset: float = 0.0) -> Ticks:
    """Every label up to ``most``; beyond, every k-th label so that about ``most`` remain."""
    n = len(labels)
    stride = 1 if n <= most else math.ceil(n / most)
    return [(i + offset, str(labels[i])) for i in range(0, n, stride)]


def integer_ticks(last: int, most: int) -> Ticks:
    """Whole numbers 0..``last`` (every k-th, so about ``most`` of them)."""
    stride = max(1, math.ceil((last + 1) / most))
    return [(i, str(i)) for i in range(0, last + 1, stride)]


def decade_ticks(lo: float, hi: float) -> Ticks:
    """1-2-5 values between ``lo`` and ``hi`` at their log10 positions (for log-x axes)."""
    out = []
    for d in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10.0**d
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append((math.log10(v), f"{v:g}"))
    return out


def stride_that_fits(positions: Sequence[float], extents: Sequence[float], scale: float,
                     gap: float = LABEL_GAP) -> int:
    """The smallest k such that every k-th label (from the first) clears its kept neighbour.

    ``positions`` are the ticks' data positions in increasing order,
    ``extents`` each label's size along the axis in pixels, ``scale`` the
    pixels per data unit.  Two kept labels ``a`` and ``b`` fit when their
    centres are at least ``(extent_a + extent_b) / 2 + gap`` pixels apart.
    """
    n = len(positions)
    for k in range(1, max(n, 1) + 1):
        if all(abs(positions[i + k] - positions[i]) * scale >= (extents[i] + extents[i + k]) / 2 + gap
               for i in range(0, n - k, k)):
            return k
    return max(n, 1)


def thin_ticks(ticks: Ticks, extents: Sequence[float], scale: float, gap: float = LABEL_GAP) -> Ticks:
    """``ticks`` (sorted by position) thinned to every k-th one, k from :func:`stride_that_fits`."""
    k = stride_that_fits([t[0] for t in ticks], extents, scale, gap)
    return list(ticks[::k])


def _update_label_once(axis: pg.AxisItem) -> None:
    """pyqtgraph's ``AxisItem._updateLabel``, giving the label its HTML only when that changed.

    pyqtgraph gives the label its HTML again on every range change (for the SI prefix), and the label
    lays the same document out anew each time (a third of a millisecond per Sampling step); the rest
    of pyqtgraph's update stays as it is."""
    html = axis.labelString()
    if html != getattr(axis, "_label_html", None):
        axis.label.setHtml(html)
        axis._label_html = html
    axis._adjustSize()
    axis.picture = None
    axis.update()


def label_html_once(axis: pg.AxisItem) -> None:
    """Let a pyqtgraph axis made elsewhere (a colour bar's) give its label HTML only when that changed."""
    axis._updateLabel = types.MethodType(_update_label_once, axis)


class FittedAxis(pg.AxisItem):
    """An AxisItem whose fixed ticks are thinned until their labels do not overlap.

    Ticks given with ``setTicks`` are kept whole; each time pyqtgraph lays
    the axis out (a resize or range change redraws it) the first level is
    thinned with :func:`thin_ticks`, measuring each label as pyqtgraph will
    draw it.  Automatic ticks (no ``setTicks``) are pyqtgraph's own, which
    already space themselves.
    """

    def __init__(self, orientation: str, **kwargs):
        self._all_ticks: list | None = None
        self._grid_lines: list = []  # the grid's translucent tick lines, drawn from cached images
        self._whole: QPicture | None = None
        self._grid_layers = grid_lines.GridLayers()
        super().__init__(orientation, **kwargs)

    _updateLabel = _update_label_once  # noqa: N815 - pyqtgraph's name

    def paint(self, p, opt, widget) -> None:
        """pyqtgraph's picture of the axis, its translucent grid lines blitted from images where that is exact.

        The same drawing as ``AxisItem.paint`` (a QPicture of the axis line,
        the ticks and the texts, remade when pyqtgraph drops it); where the
        ticks are grid lines (translucent), the picture is made in two parts,
        the axis line and the texts, and where the painter allows it
        (:func:`gui.widgets.grid_lines.usable`) the grid lines go between them
        from :class:`gui.widgets.grid_lines.GridLayers`; elsewhere (an SVG
        export, a scaled painter) the whole picture, as pyqtgraph makes it, is
        made once it is asked for.
        """
        if self.picture is None:
            self._make_pictures()
        if self._grid_lines and grid_lines.usable(p):
            self._axis_picture.play(p)
            self._grid_layers.draw(p, self._grid_lines)
            self._text_picture.play(p)
        else:
            self._whole_picture().play(p)

    def _make_pictures(self) -> None:
        picture = QPicture()
        painter = QPainter(picture)
        specs = None
        split = False
        try:
            if self.style["tickFont"]:
                painter.setFont(self.style["tickFont"])
            specs = self.generateDrawSpecs(painter)  # measures the texts with this painter, as pyqtgraph does
            if specs is not None:
                axis_spec, tick_specs, text_specs = specs
                split = bool(tick_specs) and all(grid_lines.layerable(pen) for pen, _a, _b in tick_specs)
                if split:  # the texts alone (drawPicture's axis line drawn with no pen)
                    self.drawPicture(painter, (QPen(Qt.PenStyle.NoPen), axis_spec[1], axis_spec[2]), [], text_specs)
                else:
                    self.drawPicture(painter, *specs)
        finally:
            painter.end()
        self.picture = picture  # pyqtgraph drops it (None) when the axis must be drawn anew
        self._specs = specs
        if split:
            self._text_picture = picture
            self._axis_picture = self._picture_of(axis_spec, [], [])
            self._grid_lines = list(tick_specs)
            self._whole = None
        else:
            self._grid_lines = []
            self._whole = picture

    def _whole_picture(self) -> QPicture:
        if self._whole is None:
            self._whole = self._picture_of(*self._specs)
        return self._whole

    def _picture_of(self, axis_spec, tick_specs, text_specs) -> QPicture:
        picture = QPicture()
        painter = QPainter(picture)
        try:
            if self.style["tickFont"]:
                painter.setFont(self.style["tickFont"])
            self.drawPicture(painter, axis_spec, tick_specs, text_specs)
        finally:
            painter.end()
        return picture

    def setTicks(self, ticks=None) -> None:  # noqa: N802 - pyqtgraph's name
        given = None if ticks is None else [list(level) for level in ticks]
        if given == self._all_ticks and hasattr(self, "_ticks_set"):
            return  # the same ticks: the axis keeps its picture (no repaint)
        self._ticks_set = True
        self._all_ticks = given
        super().setTicks(ticks)

    @property
    def all_ticks(self) -> list:
        """The ticks as set, before thinning (empty for automatic ticks)."""
        return [list(level) for level in self._all_ticks or []]

    def generateDrawSpecs(self, p):  # noqa: N802 - pyqtgraph's name
        if self._all_ticks:
            self._tickLevels = self._thinned(p)
        return super().generateDrawSpecs(p)

    def _thinned(self, p) -> list:
        first, *rest = self._all_ticks
        lo, hi = self.range
        bounds = self.mapRectFromParent(self.geometry())
        vertical = self.orientation in ("left", "right")
        length = bounds.height() if vertical else bounds.width()
        if not first or hi == lo or length <= 0:
            return [first, *rest]
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        scale = length / abs(hi - lo)
        kept, extents = [], []
        for pos, text in sorted(first, key=lambda t: t[0]):
            # measured as pyqtgraph's generateDrawSpecs measures it (height shrunk by 0.8 there)
            br = p.boundingRect(pg.QtCore.QRectF(0, 0, 100, 100), pg.QtCore.Qt.AlignmentFlag.AlignCenter, str(text))
            extent = br.height() * 0.8 if vertical else br.width()
            # pyqtgraph drops a label that runs past the axis's ends: leave it out before counting strides
            if min(abs(pos - lo), abs(hi - pos)) * scale + 1.0 >= extent / 2:
                kept.append((pos, text))
                extents.append(extent)
        return [thin_ticks(kept, extents, scale), *rest]
