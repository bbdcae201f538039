"""Labels of horizontal reference lines placed where they cross nothing.

A limit or threshold line carries its label along it, just above or just
below it.  :func:`place_labels` tries, for each line in turn, the two ends
above, the two ends below, then places along the line in between, and
keeps the first where the label's box (measured in pixels, turned into
view units) stays inside the view, touches no curve, has no other line
through it and overlaps no label placed before it; when no place is free,
the one with the fewest of those faults, unless that one covers a label
placed before: that label is then left out (labels thin out rather than
overlap; the values are in the readouts).  :class:`LineLabels` does it again
whenever the plot's range or size changes, since a label's size in view
units changes with them.  The labels are set a little smaller than the
axis text (:data:`FONT_SCALE`), with a thin margin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gui.qt import pg

#: Room kept around a label, in pixels.
PAD = 2.0
#: Places tried between the two ends of a line, on each side.
STEPS = 24
#: A label may sit this many label heights off its line, stacked over the label of a line that
#: nearly coincides with it (bfloat16's 88.5 and float32's 88.72), when no place on the line is free.
LEVELS = 2
#: Lines closer than this many pixels nearly coincide.
NEAR = 4
#: The labels' font size relative to the plot's.
FONT_SCALE = 0.9
#: CurveHits remembers at most this many boxes.
MEMO_MAX = 4096

Box = tuple[float, float, float, float]  # left, right, bottom, top in view units


def label_size(line: pg.InfiniteLine, pixel) -> tuple[float, float]:
    """The label's width and height with its padding, in view units."""
    rect = line.label.boundingRect()
    return (rect.width() + 2 * PAD) * pixel[0], (rect.height() + 2 * PAD) * pixel[1]


def places(view_range, size) -> list[tuple[float, bool]]:
    """Candidate (left edge, above) pairs in the order tried: the ends, then the places between."""
    (x0, x1), _ = view_range
    w = size[0]
    lo, hi = x0, x1 - w
    if hi < lo:
        return [(lo, True), (lo, False)]
    between = [lo + (hi - lo) * i / STEPS for i in range(1, STEPS)]
    return ([(lo, True), (hi, True), (lo, False), (hi, False)]
            + [(x, True) for x in between] + [(x, False) for x in reversed(between)])


def box_at(line: pg.InfiniteLine, left: float, above: bool, size, level: int = 0) -> Box:
    """The label's box at ``left``, on its line's side ``above`` or below; ``level`` labels away from it."""
    w, h = size
    y = line.value()
    bottom = y + level * h if above else y - (level + 1) * h
    return left, left + w, bottom, bottom + h


def hits_curve(box: Box, x: np.ndarray, y: np.ndarray) -> bool:
    """Whether the polyline (x, y) (x increasing) passes through ``box``."""
    left, right, bottom, top = box
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size == 0 or right < x[0] or left > x[-1]:
        return False
    inside = (x >= left) & (x <= right)
    xs = np.concatenate([np.linspace(max(left, x[0]), min(right, x[-1]), 64), x[inside]])
    ys = np.interp(xs, x, y)
    return bool(np.any((ys >= bottom) & (ys <= top)))


def faults(box: Box, view_range, curves, others: Sequence[float], placed: Sequence[Box], pixel,
           curve_hits: Callable[[Box], int] | None = None) -> int:
    """What ``box`` runs into, weighted: the view's edge (4), each curve, other line and label placed
    before (2 each; boxes that share an edge, within a pixel, do not overlap).  ``curve_hits(box)``,
    if given, counts the curves through ``box`` in place of ``curves`` (a memo of them)."""
    left, right, bottom, top = box
    (x0, x1), (y0, y1) = view_range
    ex, ey = pixel
    count = 4 * (left < x0 - ex or right > x1 + ex or bottom < y0 - ey or top > y1 + ey)
    count += 2 * (curve_hits(box) if curve_hits is not None else sum(hits_curve(box, x, y) for x, y in curves))
    count += 2 * sum(bottom < v < top for v in others)
    count += 2 * sum(overlaps(box, b, pixel) for b in placed)
    return count


def overlaps(a: Box, b: Box, pixel) -> bool:
    """Whether two label boxes overlap (boxes that share an edge, within a pixel, do not)."""
    ex, ey = pixel
    return a[0] < b[1] - ex and b[0] < a[1] - ex and a[2] < b[3] - ey and b[2] < a[3] - ey


class CurveHits:
    """How many of some curves pass through a box, remembered per box while the curves stay the same
    (a drag that moves only a marker tries the same boxes against the same curve again and again)."""

    def __init__(self):
        self._data: list[tuple[np.ndarray, np.ndarray]] = []
        self._hits: dict[Box, int] = {}

    def counter(self, data: list[tuple[np.ndarray, np.ndarray]]) -> Callable[[Box], int]:
        same = len(data) == len(self._data) and all(
            np.array_equal(x, kx, equal_nan=True) and np.array_equal(y, ky, equal_nan=True)
            for (x, y), (kx, ky) in zip(data, self._data))
        if not same:
            self._data = [(x.copy(), y.copy()) for x, y in data]
            self._hits = {}

        def count(box: Box) -> int:
            hits = self._hits.get(box)
            if hits is None:
                if len(self._hits) >= MEMO_MAX:  # boxes of many ranges: start again
                    self._hits.clear()
                hits = self._hits[box] = sum(hits_curve(box, x, y) for x, y in self._data)
            return hits
        return count


def place_labels(item: pg.PlotItem, lines: Sequence[pg.InfiniteLine], curves: Sequence,
                 verticals: Sequence[pg.InfiniteLine] = (), memo: CurveHits | None = None) -> list[Box]:
    """Place each line's label (see the module docstring); the boxes they cover, in view units.

    ``verticals`` (a current-value marker) should not run through a label either; where no place
    is free of everything, a marker through it is the fault chosen first.  ``memo`` keeps which
    boxes the curves cross between calls (the same places, for the same curves).
    """
    vb = item.getViewBox()
    view_range = vb.viewRange()
    (x0, x1), _ = view_range
    pixel = vb.viewPixelSize()
    data = [c.getData() for c in curves]
    data = [(np.asarray(x, float), np.asarray(y, float)) for x, y in data if x is not None and len(x)]
    curve_hits = memo.counter(data) if memo is not None else None
    placed: list[Box] = []
    for line in lines:
        if not line.isVisible():
            continue
        others = [o.value() for o in lines if o is not line and o.isVisible()]
        size = label_size(line, pixel)
        y = line.value()
        best = None
        for level in range(LEVELS):
            # a label off its line (stacked over another label) only past lines that nearly coincide with it
            near = [v for v in others if abs(v - y) <= NEAR * pixel[1]]
            for left, above in places(view_range, size):
                box = box_at(line, left, above, size, level)
                count = faults(box, view_range, data, others, placed, pixel, curve_hits)
                gap = (y, box[2]) if above else (box[3], y)
                count += 2 * sum(gap[0] < v < gap[1] for v in others if v not in near)
                # a moving marker crossing a label is the smallest fault: it moves on
                count += sum(box[0] < v.value() < box[1] for v in verticals if v.isVisible())
                if best is None or count < best[0]:
                    best = (count, level, left, above, box)
                if count == 0:
                    break
            if best[0] == 0:
                break
        _count, level, left, above, box = best
        # no label is drawn over another: where none is free of them (a plot too small), it is left out
        clash = any(overlaps(box, b, pixel) for b in placed)
        label = line.label
        if label.isVisible() == clash:  # (its line is shown) showing it again re-lays its text out
            label.setVisible(not clash)
        if clash:
            continue
        # the text's anchor (a fraction of its own height) puts it ``level`` boxes off the line
        shift = level * size[1] / max(label.boundingRect().height() * pixel[1], 1e-300)
        anchor = (0, 1 + shift) if above else (0, -shift)
        position = (left + PAD * pixel[0] - x0) / (x1 - x0) if x1 > x0 else 0.0
        # where it already is, it stays (the label follows range changes of its own)
        if label.anchors != [anchor, anchor] or label.orthoPos != position:
            label.anchors = [anchor, anchor]
            label.setPosition(position)
        placed.append(box)
    return placed


def compact(line: pg.InfiniteLine) -> None:
    """Set the label in :data:`FONT_SCALE` of the plot's font, with a thin margin around the text."""
    font = line.label.textItem.font()
    font.setPointSizeF(font.pointSizeF() * FONT_SCALE)
    line.label.setFont(font)
    line.label.textItem.document().setDocumentMargin(1)


class LineLabels:
    """Keeps the labels of ``lines`` placed clear of ``curves()`` and ``verticals`` as the plot's
    range and size change (and when :meth:`place` is called, after the data moved)."""

    def __init__(self, item: pg.PlotItem, lines: Sequence[pg.InfiniteLine], curves: Callable[[], Sequence],
                 verticals: Sequence[pg.InfiniteLine] = ()):
        self.item, self.lines, self.curves, self.verticals = item, list(lines), curves, list(verticals)
        self._hits = CurveHits()
        for line in self.lines:
            compact(line)
        vb = item.getViewBox()
        vb.sigRangeChanged.connect(self.place)
        vb.sigResized.connect(self.place)

    def place(self, *_args) -> list[Box]:
        return place_labels(self.item, self.lines, self.curves(), self.verticals, self._hits)
