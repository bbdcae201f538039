"""Legends and titles that keep off the data and inside their plot.

* :func:`outside_legend` puts a legend in a row of its own between a plot's
  title and its data (the cell of the hidden top axis), so it never covers
  a bar; :func:`fit_columns` gives it as many columns as the width allows.
* :func:`float_legend` is pyqtgraph's floating legend, moved before every
  repaint to the corner of the plot that holds the fewest data points
  (:func:`emptiest_corner`, :class:`CornerKeeper`).
* :func:`elide_title` fits the drawn title to the plot's width (a smaller
  size first, then shortened with "…"): a
  pyqtgraph title's minimum width otherwise widens the plot item past its
  widget, and the right part of the plot is cut off.

Both are compact (:class:`CompactLegend`): rows as tall as their text (16 px
at 9 pt, where pyqtgraph's take 22 px inside 9 px of padding), so a legend
above a small plot leaves the data most of its height.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from gui.qt import pg


class StaticSample(pg.ItemSample):
    """A legend swatch that ignores clicks.

    pyqtgraph's own swatch hides its curve when clicked, behind the back of
    the view's state; here what is drawn always follows the state.
    """

    def mouseClickEvent(self, event) -> None:
        event.ignore()


class ToggleSample(pg.ItemSample):
    """A legend swatch whose click asks the item's owner to switch it (``item.legend_clicked()``).

    The owner changes its model; the model's change redraws the plot, so
    what is drawn still follows the state.
    """

    def mouseClickEvent(self, event) -> None:
        callback = getattr(self.item, "legend_clicked", None)
        if event.button() != Qt.MouseButton.LeftButton or callback is None:
            event.ignore()
            return
        event.accept()
        callback()

#: Gap between a floating legend and the plot's edge, in pixels.
MARGIN = 6
#: Title font size (points), as Plot sets it.
TITLE_POINTS = 11.0
#: The sizes (points) a title may shrink to before it is shortened with "…" (Plot draws it in TITLE_POINTS).
TITLE_SIZES = (TITLE_POINTS, 10.0, 9.0)


#: A compact legend's padding (left and right, top and bottom) and its swatches' side, in pixels.
PADDING = (4, 2)
SWATCH = 14.0
#: pyqtgraph draws a legend swatch in a 20 x 20 px box.
PG_SWATCH = 20.0


class CompactLegend(pg.LegendItem):
    """pyqtgraph's legend in tight rows.

    Each label's text loses its document margin (4 px on every side), each
    swatch is drawn at SWATCH px instead of 20, and the legend's padding is
    PADDING instead of 9 px: a row is as tall as its text.
    """

    def __init__(self, **kwargs):
        kwargs.setdefault("verSpacing", 0)
        super().__init__(**kwargs)
        self.layout.setContentsMargins(PADDING[0], PADDING[1], PADDING[0], PADDING[1])

    def addItem(self, item, name) -> None:  # noqa: N802 - pyqtgraph's name
        super().addItem(item, name)
        sample, label = self.items[-1]
        label.item.document().setDocumentMargin(1)
        label.updateMin()
        label.resizeEvent(None)
        sample.setFixedWidth(SWATCH)
        sample.setFixedHeight(SWATCH)
        sample.setScale(SWATCH / PG_SWATCH)  # the swatch paints in pyqtgraph's 20 px box
        self.updateSize()

    def updateSize(self) -> None:  # noqa: N802 - pyqtgraph's name
        """As small as the rows allow (pyqtgraph sums the entries' current sizes, which only grow)."""
        if self.size is not None:
            return
        self.layout.invalidate()
        hint = self.effectiveSizeHint(Qt.SizeHint.MinimumSize)
        self.setGeometry(QRectF(self.pos(), hint))


def entry_widths(legend: pg.LegendItem) -> list[float]:
    """Each entry's width in the legend's layout: swatch, text and the spacing after each."""
    spacing = legend.layout.horizontalSpacing()
    return [sample.size().width() + label.item.boundingRect().width() + 2 * spacing
            for sample, label in legend.items]


def outside_legend(item: pg.PlotItem, *, span: bool = False, **kwargs) -> pg.LegendItem:
    """A legend in the row above the plot's data; named items added later join it.

    With ``span`` the row reaches over the axes' columns too (the plot's
    whole width), so more of its entries fit side by side.
    """
    kwargs.pop("offset", None)
    legend = CompactLegend(**kwargs)
    item.layout.removeItem(item.getAxis("top"))  # the hidden top axis's cell holds the legend instead
    if span:
        item.layout.addItem(legend, 1, 0, 1, 3)
    else:
        item.layout.addItem(legend, 1, 1)
    item.legend = legend  # PlotItem.addItem adds named items to item.legend
    return legend


def row_room(widget) -> float:
    """The width a legend row that spans the whole plot has in ``widget`` (its plot widget), in pixels."""
    return widget.width() - 2 * MARGIN


def _label_font(label) -> QFont:
    font = QFont(label.item.font())
    size = str(label.opts.get("size") or "")
    if size.endswith("pt"):
        font.setPointSizeF(float(size[:-2]))
    return font


def _full_text(label) -> str:
    """A legend label's whole text (:func:`fit_columns` may show it shortened; a rename since counts)."""
    full, shown = getattr(label, "elided", (None, None))
    return full if full is not None and label.text == shown else label.text


def _fit_labels(legend: pg.LegendItem, room: float) -> bool:
    """Shorten with "…" the labels whose entry is wider than ``room``, give the others their whole text;
    whether a label changed."""
    spacing = legend.layout.horizontalSpacing()
    changed = False
    for sample, label in legend.items:
        full = _full_text(label)
        metrics = QFontMetricsF(_label_font(label))
        space = room - sample.size().width() - 2 * spacing - 4  # the text's document margin, both sides
        text = full if metrics.horizontalAdvance(full) <= space else metrics.elidedText(
            full, Qt.TextElideMode.ElideRight, max(space, 24.0))
        if text != label.text:
            label.setText(text)
            changed = True
        label.elided = (full, text) if text != full else (None, None)
    return changed


def fit_columns(legend: pg.LegendItem, most: int, room: float) -> None:
    """Lay ``legend`` out in the most columns (up to ``most``) whose widths fit ``room`` pixels; in one
    column, a label still too wide is shortened with "…" (it would widen the plot past its widget)."""
    if not legend.items:
        return
    widths = entry_widths(legend)
    for k, (_sample, label) in enumerate(legend.items):  # columns are chosen by the whole texts
        full = _full_text(label)
        if full != label.text:
            metrics = QFontMetricsF(_label_font(label))
            widths[k] += metrics.horizontalAdvance(full) - metrics.horizontalAdvance(label.text)
    cols = max(1, min(most, len(widths)))
    while cols > 1 and sum(max(widths[c::cols]) for c in range(cols)) > room:
        cols -= 1
    relabelled = _fit_labels(legend, room if cols == 1 else float("inf"))
    if cols == legend.columnCount and legend.layout.count() == 2 * len(legend.items):
        if relabelled:
            legend.updateSize()
        return
    for i in range(legend.layout.count() - 1, -1, -1):
        legend.layout.removeAt(i)
    for k, (sample, label) in enumerate(legend.items):
        row, col = divmod(k, cols)
        legend.layout.addItem(sample, row, 2 * col, alignment=Qt.AlignmentFlag.AlignVCenter)
        legend.layout.addItem(label, row, 2 * col + 1)
    legend.columnCount, legend.rowCount = cols, -(-len(widths) // cols)
    legend.updateSize()


def elide_title(label, title: str, room: float) -> None:
    """Draw ``title`` in ``label`` in the largest of TITLE_SIZES that fits ``room`` pixels, shortened with "…"
    to ``room`` in the smallest if none does; ``label.text`` keeps it whole."""
    if not title or "<" in title or not label.isVisible():
        return
    font = QFont(label.item.font())
    room = max(room, 40.0)
    for points in TITLE_SIZES:
        font.setPointSizeF(points)
        metrics = QFontMetricsF(font)
        if metrics.horizontalAdvance(title) <= room:
            shown = title
            break
    else:
        shown = metrics.elidedText(title, Qt.TextElideMode.ElideRight, room)
    size = f"{points:g}pt"
    if shown != label.item.toPlainText() or label.opts.get("size") != size:
        label.setText(shown, size=size)
    label.text = title  # exports and tests read the whole title


#: The corners a floating legend may take: (item/parent anchor, sign of the offset), preferred order.
CORNERS = {"top_right": ((1, 0), (-1, 1)), "top_left": ((0, 0), (1, 1)),
           "bottom_right": ((1, 1), (-1, -1)), "bottom_left": ((0, 1), (1, -1))}
#: Curves are sampled every this many pixels when counting what a corner would cover.
SAMPLE_PX = 3.0
#: A floating legend that covers data in every corner moves above the plot only if it then
#: takes at most this share of the plot's height; else it stays in the emptiest corner.
OUTSIDE_SHARE = 0.6


def float_legend(item: pg.PlotItem, *, span_out: bool = False, **kwargs) -> pg.LegendItem:
    """A floating :class:`CompactLegend`, kept in the emptiest corner (see :class:`CornerKeeper`).

    The corner that ``offset`` names (its signs: negative x means the right,
    negative y the bottom) is preferred while it is no fuller than another.
    When every corner covers data it may move above the plot, over the
    plot's whole width with ``span_out`` (see :func:`row_room`).  It is the
    plot's legend: named items added later join it.
    """
    offset = kwargs.pop("offset", (-MARGIN, MARGIN))
    legend = CompactLegend(offset=offset, **kwargs)
    legend.setParentItem(item.getViewBox())
    item.legend = legend
    preferred = ("bottom" if offset[1] < 0 else "top") + ("_right" if offset[0] < 0 else "_left")
    legend.corner_keeper = CornerKeeper(item, legend, preferred, (abs(offset[0]), abs(offset[1])), span_out=span_out)
    return legend


def curve_pixels(item: pg.PlotItem) -> np.ndarray:
    """Where the plot's visible data items draw, as (k, 2) pixel points in the view box (y down).

    Lines are resampled every SAMPLE_PX pixels along their length, so a
    sparse curve that crosses a corner still counts there.
    """
    vb = item.getViewBox()
    (x0, x1), (y0, y1) = vb.viewRange()
    w, h = vb.width(), vb.height()
    if w <= 0 or h <= 0 or x1 == x0 or y1 == y0:
        return np.zeros((0, 2))
    out = []
    for data in item.listDataItems():
        if not data.isVisible() or not hasattr(data, "getData"):
            continue
        x, y = data.getData()
        if x is None or y is None or len(x) == 0:
            continue
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.size == y.size + 1:  # a step curve: edges and the values between them
            x, y = np.repeat(x, 2)[1:-1], np.repeat(y, 2)
        if x.size != y.size:
            continue
        px = (x - x0) / (x1 - x0) * w
        py = (y1 - y) / (y1 - y0) * h
        ok = np.isfinite(px) & np.isfinite(py)
        px, py = px[ok], py[ok]
        if px.size > 1 and getattr(data, "opts", {}).get("pen") is not None:
            along = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(px), np.diff(py)))])
            t = np.arange(0.0, along[-1], SAMPLE_PX)
            if t.size > px.size:
                px, py = np.interp(t, along, px), np.interp(t, along, py)
        out.append(np.column_stack([px, py]))
    return np.vstack(out) if out else np.zeros((0, 2))


def counts_in_corners(points: np.ndarray, size: tuple[float, float], box: tuple[float, float],
                      margin: tuple[float, float]) -> dict[str, int]:
    """How many ``points`` a ``size`` legend rect would cover in each corner of a ``box`` (w, h) pixels."""
    w, h = size
    counts = {}
    for name, (anchor, _signs) in CORNERS.items():
        left = margin[0] if anchor[0] == 0 else box[0] - margin[0] - w
        top = margin[1] if anchor[1] == 0 else box[1] - margin[1] - h
        inside = ((points[:, 0] >= left) & (points[:, 0] <= left + w)
                  & (points[:, 1] >= top) & (points[:, 1] <= top + h))
        counts[name] = int(inside.sum())
    return counts


def emptiest_corner(points: np.ndarray, size: tuple[float, float], box: tuple[float, float],
                    margin: tuple[float, float], preferred: str) -> str:
    """The corner whose legend rect covers the fewest ``points``; ``preferred`` wins ties."""
    return _fewest(counts_in_corners(points, size, box, margin), preferred)


def _fewest(counts: dict[str, int], preferred: str) -> str:
    """The corner of ``counts`` with the fewest points; ``preferred`` wins ties."""
    order = [preferred] + [c for c in CORNERS if c != preferred]
    return min(order, key=lambda c: counts[c])  # min keeps the first of equals


def _array_key(a) -> tuple:
    """Which data ``a`` is, cheaply: its id and shape (the object is kept alive, so its id is not reused).

    A PlotDataItem hands out the same arrays until its data or display changes; an item whose getData
    makes new arrays on every call (a bare ScatterPlotItem's views) is simply sampled every time.
    """
    return id(a), getattr(a, "shape", None)


def _bump_version(data) -> None:
    data._corner_keeper_version += 1


class CornerKeeper(QObject):
    """Keeps a floating legend off the data: in the emptiest corner, or above the plot.

    It listens to the scene's ``sigPrepareForPaint``, which pyqtgraph emits
    before every paint and every ``render``, so new data, a new range or a
    resize are all seen.  The legend moves when another corner holds fewer
    data points than its own; when even the emptiest corner would cover
    data, it moves for good into the row above the plot (as
    :func:`outside_legend` places one) and ``moved_out`` is called with it
    -- unless it would take more than OUTSIDE_SHARE of the plot's height
    there, when the emptiest corner is the lesser evil.
    """

    def __init__(self, item: pg.PlotItem, legend: pg.LegendItem, preferred: str, margin: tuple[float, float], *,
                 span_out: bool = False):
        super().__init__()
        self.item, self.legend, self.margin = item, legend, margin
        self.corner = preferred
        self.preferred = preferred
        self.span_out = span_out
        self.outside = False
        self.moved_out = None  # callback(legend), set by the plot
        self._placed_for: tuple | None = None  # what place() last read (see _inputs)
        self._placed_kept: list = []  # the data items and arrays that key names, kept alive
        self._anchor(preferred)
        scene = item.scene()
        if scene is not None:
            scene.sigPrepareForPaint.connect(self.place)

    def _anchor(self, corner: str) -> None:
        anchor, (sx, sy) = CORNERS[corner]
        self.legend.anchor(itemPos=anchor, parentPos=anchor, offset=(sx * self.margin[0], sy * self.margin[1]))
        self.corner = corner

    def covered(self, corner: str | None = None) -> int:
        """How many data points the legend covers (in ``corner``, or where it is)."""
        rect = self.legend.boundingRect()
        vb = self.item.getViewBox()
        points = curve_pixels(self.item)
        return counts_in_corners(points, (rect.width(), rect.height()), (vb.width(), vb.height()),
                                 self.margin)[corner or self.corner]

    def _inputs(self, rect: QRectF, vb) -> tuple:
        """Everything :meth:`place` reads, cheaply: the view's range and size, the legend's size and
        entries, the plot's width, and each data item with its visibility, pen, data arrays (see
        :func:`_array_key`) and how often it announced new data (``sigPlotChanged``)."""
        (x0, x1), (y0, y1) = vb.viewRange()
        legend = self.legend
        key = [x0, x1, y0, y1, vb.width(), vb.height(), rect.width(), rect.height(), self.item.width(),
               getattr(legend, "rowCount", 1), tuple(label.text for _sample, label in legend.items)]
        kept = []
        for data in self.item.listDataItems():
            if not hasattr(data, "getData"):
                continue
            if not hasattr(data, "_corner_keeper_version"):  # (a missing attribute costs 8 us to look up)
                data._corner_keeper_version = 0
                signal = getattr(data, "sigPlotChanged", None)
                if signal is not None:  # setData with arrays changed in place keeps their ids
                    signal.connect(_bump_version)
            visible = data.isVisible()
            key += [id(data), visible]
            if not visible:
                continue
            x, y = data.getData()
            key += [data._corner_keeper_version, getattr(data, "opts", {}).get("pen") is None,
                    _array_key(x), _array_key(y)]
            kept += [data, x, y]
        return tuple(key), kept

    def place(self) -> None:
        rect = self.legend.boundingRect()
        if self.outside or not self.legend.isVisible() or rect.width() <= 0:
            return
        vb = self.item.getViewBox()
        if vb.width() <= 0 or vb.height() <= 0:
            return
        key, kept = self._inputs(rect, vb)
        if key == self._placed_for:
            return  # nothing it reads changed: the legend already sits where this would put it
        self._placed_for, self._placed_kept = key, kept
        points = curve_pixels(self.item)
        size, box = (rect.width(), rect.height()), (vb.width(), vb.height())
        counts = counts_in_corners(points, size, box, self.margin)
        corner = _fewest(counts, self.preferred)
        if counts[corner] > 0 and self._fits_above(box):
            self._move_out()
        elif corner != self.corner:
            self._anchor(corner)

    def _fits_above(self, box: tuple[float, float]) -> bool:
        """Whether the legend, laid out above the plot, would leave the data at least 1 - OUTSIDE_SHARE of its height."""
        legend = self.legend
        rows_now = max(1, getattr(legend, "rowCount", 1) or 1)
        row_height = legend.boundingRect().height() / rows_now
        widths = entry_widths(legend)
        cols = max(1, len(widths))
        room = self.item.width() - 2 * MARGIN if self.span_out else box[0]
        while cols > 1 and sum(max(widths[c::cols]) for c in range(cols)) > room:
            cols -= 1
        return -(-len(widths) // cols) * row_height <= OUTSIDE_SHARE * box[1]

    def _move_out(self) -> None:
        legend, item = self.legend, self.item
        parent = legend.parentItem()
        if parent is not None:  # undo pyqtgraph's anchoring, then let the plot's layout hold it
            try:
                parent.geometryChanged.disconnect(legend._GraphicsWidgetAnchor__geometryChanged)
            except (RuntimeError, TypeError, AttributeError):
                pass
            legend._GraphicsWidgetAnchor__parent = None
        legend.opts["offset"] = None
        item.layout.removeItem(item.getAxis("top"))
        if self.span_out:  # over the axes' columns too: more entries side by side
            item.layout.addItem(legend, 1, 0, 1, 3)
        else:
            item.layout.addItem(legend, 1, 1)
        self.outside = True
        if self.moved_out is not None:
            self.moved_out(legend)
