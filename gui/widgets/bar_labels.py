"""Where a bar chart's value labels go: above or below each bar, or inside it, or nowhere.

The rule works in pixels, so it is re-run whenever the plot is resized or
its range moves (:class:`gui.widgets.bar_chart.BarChart` does that):

* One orientation for the values of the whole chart: they read
  horizontally when the widest one fits the room a bar has (its own width
  in a grouped chart, the category pitch for a single series), else they
  are turned upright.  A placeholder's tag ("NaN", "÷0", "∞") sits inside
  its hatched bar, upright only if the bar is too narrow for it.
* Each label sits just past the end of its bar: above a positive bar,
  below a negative one.  When that would leave the plot, it goes inside
  the bar's end instead, if the bar is long enough in pixels.
* Labels are placed greedily: undefined-value tags first, then every
  label of the *lead* series (the one the user is most likely reading:
  :attr:`ValueLabels.lead` when it is shown -- the Normalizers view names
  softmax -- else the first shown series), then the rest by the size of
  the value.  A label that would overlap one already placed, or another
  bar, is left out.  So with many or narrow bars the labels thin out
  rather than overlap, the lead series keeps its labels longest, and
  among the others the tallest bars keep theirs.
* An upright label is as wide across its bar as its ink (digits have no
  descenders), not its line box, and may reach SPILL pixels over a
  neighbouring bar's outline: it fits a bar about as wide as its digits
  are tall.

:func:`place` (in :mod:`gui.widgets.bar_place`) is plain NumPy; :class:`ValueLabels` measures the texts,
calls it and moves the chart's text items.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

from gui import theme as themes
from gui.qt import pg
from gui.widgets.bar_place import (  # noqa: F401  (re-exported: the rule is part of this API)
    HIDDEN,
    INSIDE,
    LABEL_GAP,
    OUTSIDE,
    PAD,
    SPILL,
    Placement,
    _hits_other_bars,
    _overlaps,
    place,
    upright,
)
from gui.widgets.value_text import Turns, ValueText

#: Labels are made for at most this many bars; beyond, none would fit anyway.
MAX_LABELLED_BARS = 240

#: When the labels outgrow the pool of text items, spares (hidden) are made once the app is idle this
#: long after, up to SPARE_GROWTH times the count, so a slider sweeping the count up makes text items in
#: O(log n) batches, and mostly not while a redraw waits on them.
SPARE_DELAY_MS = 60
SPARE_GROWTH = 1.5


def decimals_for(values: np.ndarray) -> int:
    """Decimals that give the largest finite value three significant digits (0 to 8)."""
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return 0
    return int(np.clip(2 - math.floor(math.log10(float(v.max()))), 0, 8))


def value_text(v: float, percent: bool, decimals: int = 3) -> str:
    """A bar's label: one-decimal percent for weights, else ``decimals`` fixed decimals.

    Exact zeros read "0%" / "0" (sparsemax's zeros are exact); NaN and
    ±inf read "NaN", "∞", "−∞".
    """
    if not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("∞" if v > 0 else "−∞")
    if v == 0:
        return "0%" if percent else "0"
    return f"{100 * v:.1f}%" if percent else f"{v:.{decimals}f}"


def label_texts(heights: list[np.ndarray], shown: list[bool], *, percent: bool, values: bool,
                tag) -> tuple[list[tuple[int, int]], list[str]]:
    """The (series, category) keys and texts of a chart's labels: each shown bar's value (if
    ``values``) in :func:`value_text`, and each undefined value's ``tag(series, value)``."""
    keys, texts = [], []
    decimals = decimals_for(np.concatenate([h for s, h in enumerate(heights) if shown[s]] or [np.zeros(0)]))
    for s, h in enumerate(heights):
        if not shown[s]:
            continue
        for i, v in enumerate(h.tolist()):  # Python floats: the same texts, less overhead than NumPy scalars
            if math.isfinite(v):
                if values:
                    keys.append((s, i))
                    texts.append(value_text(v, percent, decimals))
            else:
                keys.append((s, i))
                texts.append(tag(s, v))
    return keys, texts


#: Bar values are written at least this large (points).
VALUE_POINT_SIZE = 9.0


def value_font() -> QFont:
    """The font of bar values: the application's, at least VALUE_POINT_SIZE points."""
    font = QFont(QApplication.font())
    font.setPointSizeF(max(font.pointSizeF(), VALUE_POINT_SIZE))
    return font


@dataclass(frozen=True)
class Bars:
    """What a bar chart draws now: heights per series (NaN/±inf kept), which are shown, where."""

    heights: list[np.ndarray]
    shown: list[bool]
    offsets: dict[int, float]  # shown series -> offset of its bars from the category centre
    width: float
    y_range: tuple[float, float]

    def end(self, v: float) -> float:
        """Where a bar of value ``v`` ends: ``v``, or the edge of the range for a placeholder."""
        if np.isfinite(v):
            return float(v)
        return self.y_range[0] if np.isneginf(v) else self.y_range[1]

    def ends(self, v: np.ndarray) -> np.ndarray:
        """:meth:`end` of every value in ``v`` at once."""
        v = np.asarray(v, dtype=float)
        return np.where(np.isfinite(v), v, np.where(np.isneginf(v), self.y_range[0], self.y_range[1]))


def lead_series(shown: list[bool], lead: int | None) -> int | None:
    """The series whose labels go first: ``lead`` while it is shown, else the first shown one."""
    if lead is not None and 0 <= lead < len(shown) and shown[lead]:
        return lead
    return next((s for s, on in enumerate(shown) if on), None)


def ink_thickness(metrics: QFontMetricsF, text: str) -> float:
    """How far the ink of ``text`` reaches across its line, as a width centred on the line box."""
    ink = metrics.tightBoundingRect(text)
    centre = metrics.height() / 2
    top, bottom = metrics.ascent() + ink.top(), metrics.ascent() + ink.bottom()
    return min(metrics.height(), 2 * max(centre - top, bottom - centre))


class ValueLabels:
    """The text items of a bar chart's labels, one per (series, category), laid out by :func:`place`.

    ``lead`` names the series whose labels are placed before the others'
    (see :func:`lead_series`); None: the first shown series.

    A label's text item gets its text only when it is shown: :meth:`layout`
    writes the texts of the labels it shows (most labels of a crowded chart
    stay hidden, and setting a text costs a relayout of its document), and
    :meth:`items` all of them.  Between :meth:`set_texts` and the layout after
    it (no painting can come in between; :meth:`write_shown` where no layout
    follows) a shown label may hold its old text, never after.

    Text items are kept (hidden) when the labels get fewer.  When they
    outgrow the pool, the redraw makes what it needs, and the app, once
    idle (SPARE_DELAY_MS), hidden spares up to SPARE_GROWTH times that
    count: a slider sweeping the count up makes text items in O(log n)
    batches, mostly outside redraws.  A spare stays out of the plot until a
    label needs it (a view box repaints whenever an item joins it): it is
    never painted or exported, and no label.
    """

    def __init__(self, item):
        self._item = item
        self._texts: list = []  # the text items in the plot (the first len(self._keys) hold the labels)
        self._spares: list[ValueText] = []  # made while idle, in no plot until a label needs them
        self._keys: list[tuple[int, int]] = []
        self._strings: list[str] = []  # each label's text now
        self._written: list[str] = []  # the text each text item holds (its label's, or an old one while hidden)
        self._unwritten = False  # whether labels on screen may hold old texts (set_texts before a layout)
        self._generation = 0  # set_texts calls so far
        self._series = self._categories = np.zeros(0, dtype=int)
        self._widths = self._inks = np.zeros(0)
        self._font = value_font()
        self._metrics = QFontMetricsF(self._font)
        self._sizes: dict[str, tuple[float, float]] = {}  # text -> (advance, ink thickness), measured once
        self._turns = Turns()  # the labels' shared transforms (one parent)
        self.lead: int | None = None
        self._spare_timer: QTimer | None = None
        self._spares_wanted = 0  # the pool's size the idle spares make (a count the labels reached, grown)

    def _size(self, text: str) -> tuple[float, float]:
        size = self._sizes.get(text)
        if size is None:
            if len(self._sizes) > 4096:
                self._sizes.clear()
            size = self._sizes[text] = (self._metrics.horizontalAdvance(text), ink_thickness(self._metrics, text))
        return size

    def set_texts(self, keys: list[tuple[int, int]], texts: list[str]) -> None:
        """Label (series, category) ``keys[k]`` with ``texts[k]``; at most MAX_LABELLED_BARS values."""
        if len(keys) > MAX_LABELLED_BARS:  # keep only the placeholders' tags
            kept = [k for k, t in enumerate(texts) if not _is_number(t)]
            keys, texts = [keys[k] for k in kept], [texts[k] for k in kept]
        outgrown = len(self._texts) + len(self._spares) < len(keys)  # the whole pool, spares too
        while len(self._texts) < len(keys):
            self._new_text(visible=True)
        if outgrown:
            self._spares_wanted = min(MAX_LABELLED_BARS, math.ceil(SPARE_GROWTH * len(keys)))
            if self._spares_wanted > len(self._texts) + len(self._spares):
                if self._spare_timer is None:
                    self._spare_timer = QTimer(self._item)  # dies with the plot
                    self._spare_timer.setSingleShot(True)
                    self._spare_timer.timeout.connect(self._make_spares)
                self._spare_timer.start(SPARE_DELAY_MS)
        self._keys = list(keys)
        self._strings = list(texts)
        sizes = np.array([self._size(t) for t in texts], dtype=float).reshape(-1, 2)
        self._widths, self._inks = sizes[:, 0].copy(), sizes[:, 1].copy()
        where = np.array(keys, dtype=int).reshape(-1, 2)
        self._series, self._categories = where[:, 0].copy(), where[:, 1].copy()
        for text in self._texts[len(keys):]:
            text.setVisible(False)
        # The texts are written by the layout that follows (only those it shows): until then, and
        # only then, a label on screen may hold its old text; a layout that cannot run writes them.
        self._unwritten = True
        self._generation += 1

    def _new_text(self, *, visible: bool) -> None:
        """One more text item at the end of the pool: a spare if there is one, else a new one."""
        text = self._spares.pop() if self._spares else self._made_text()
        if visible:
            text.setVisible(True)
        self._item.addItem(text, ignoreBounds=True)
        self._texts.append(text)
        self._written.append(text.toPlainText())

    def _made_text(self) -> ValueText:
        """A new text item, hidden, in no plot yet."""
        text = ValueText(self._turns)
        # no Python itemChange per move or turn (two calls each, ~17 µs, ~100 a Sampling step): pyqtgraph only
        # tells the view its bounds changed, and a label added with ignoreBounds has none
        text.setFlag(text.GraphicsItemFlag.ItemSendsGeometryChanges, False)
        text.textItem.document().setDocumentMargin(0)
        text.setFont(self._font)
        text.setZValue(20)
        text.setVisible(False)
        return text

    def _make_spares(self) -> None:
        """Make spares (idle, after the labels outgrew the pool) up to the count wanted.

        They stay out of the plot until a label needs them: a view box repaints itself whenever an item
        joins it, hidden or not, and making an item costs several times what adding it does."""
        while len(self._texts) + len(self._spares) < self._spares_wanted:
            self._spares.append(self._made_text())

    def write_shown(self) -> None:
        """Give every label on screen its text now (when no layout follows a :meth:`set_texts`)."""
        if self._unwritten:
            for k, text in enumerate(self._texts[:len(self._keys)]):
                if text.isVisible():
                    self._write(k)
            self._unwritten = False

    def _write(self, k: int) -> None:
        """Give label ``k``'s text item the label's text (if it holds another)."""
        if self._written[k] != self._strings[k]:
            self._texts[k].setText(self._strings[k])
            self._written[k] = self._strings[k]

    def items(self) -> list[tuple[int, int, object]]:
        """(series, category, text item) of every current label, each holding its text (hidden ones too)."""
        for k in range(len(self._keys)):
            self._write(k)
        return [(s, i, t) for (s, i), t in zip(self._keys, self._texts)]

    def _slot(self, bars: Bars, sx: float) -> float:
        return sx * (1.0 if sum(bars.shown) <= 1 else bars.width)

    def _values(self, bars: Bars) -> np.ndarray:
        """Each label's bar value (NaN and ±inf kept)."""
        v = np.zeros(len(self._keys))
        for s in np.unique(self._series).tolist():
            mine = self._series == s
            v[mine] = np.asarray(bars.heights[s], dtype=float)[self._categories[mine]]
        return v

    def headroom(self, bars: Bars, sx: float) -> tuple[float, float]:
        """Pixels the value labels need past the highest and below the lowest bar."""
        v = self._values(bars)
        finite = np.isfinite(v)
        if not finite.any():
            return 0.0, 0.0
        v, widths = v[finite], self._widths[finite]
        turned = upright(widths, self._slot(bars, sx))
        along = widths if turned else np.full(len(v), self._metrics.height())
        up, down = along[v >= 0], along[v < 0]
        slack = 2 * PAD + 2.0  # and a little more, so rounding never leaves the tallest label a pixel short
        return (float(up.max()) + slack if up.size else 0.0), (float(down.max()) + slack if down.size else 0.0)

    def _bar_rects(self, bars: Bars, x0: float, y1: float, sx: float, sy: float) -> tuple[np.ndarray, np.ndarray]:
        """The pixel rects of the shown bars at least a pixel long, all series at once, and each
        label's row there (-1 for a shorter bar)."""
        shown = [s for s, on in enumerate(bars.shown) if on]
        sizes = np.array([len(bars.heights[s]) for s in shown], dtype=int)
        starts = np.zeros(len(bars.heights), dtype=int)  # where each shown series' bars begin
        starts[shown] = np.cumsum(sizes) - sizes
        h = np.concatenate([np.asarray(bars.heights[s], dtype=float) for s in shown] or [np.zeros(0)])
        cat = np.arange(h.size) - np.repeat(starts[shown], sizes)
        xc = cat + np.repeat(np.array([bars.offsets[s] for s in shown], dtype=float), sizes)
        half = bars.width / 2
        a, b = (y1 - bars.ends(h)) * sy, y1 * sy
        ya, yb = np.minimum(a, b), np.maximum(a, b)
        long = yb - ya >= 1
        row = np.full(h.size, -1, dtype=int)
        row[long] = np.arange(int(long.sum()))
        rects = np.stack([(xc - half - x0) * sx, ya, (xc + half - x0) * sx, yb], axis=1)[long]
        own = np.full(len(self._keys), -1, dtype=int)
        if h.size:
            mine = np.isin(self._series, shown)
            own[mine] = row[starts[self._series[mine]] + self._categories[mine]]
        return rects, own

    def layout(self, bars: Bars, fills: list[str], foreground: str) -> None:
        """Place, turn, colour and show or hide every label for the plot's current pixels."""
        n = len(self._keys)
        generation = self._generation
        vb = self._item.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        w_px, h_px = vb.width(), vb.height()
        if n == 0 or w_px <= 0 or h_px <= 0 or x1 == x0 or y1 == y0:
            self.write_shown()  # no room to lay out: the labels stay where they are, with their new texts
            return
        sx, sy = w_px / (x1 - x0), h_px / (y1 - y0)
        rects, own = self._bar_rects(bars, x0, y1, sx, sy)
        series, cats = self._series, self._categories
        v = self._values(bars)
        finite = np.isfinite(v)
        offsets = np.array([bars.offsets[s] for s in series.tolist()], dtype=float)
        lead = lead_series(bars.shown, self.lead)
        tier = np.where(~finite, 2, np.where(series == (-1 if lead is None else lead), 1, 0))
        tops = bars.ends(v)
        result = place((cats + offsets - x0) * sx, (y1 - tops) * sy, np.full(n, y1 * sy), self._widths,
                       np.full(n, self._metrics.height()), slot=self._slot(bars, sx), bar_width=bars.width * sx,
                       plot_height=h_px, priority=np.where(finite, np.abs(v), np.inf), bars=rects, own_bar=own,
                       force_inside=~finite, tier=tier,
                       thickness=self._inks)
        where, turned = result.where.tolist(), result.upright.tolist()
        colours: dict[str, QColor] = {}
        for k, text in enumerate(self._texts[:n]):
            shown = where[k] != HIDDEN
            if shown:
                self._write(k)  # before it shows: a label on screen never carries an old text
            if text.isVisible() != shown:  # each setter only on a change: same look, less work
                text.setVisible(shown)
            if not shown:
                continue
            s, i = self._keys[k]
            top = float(tops[k])
            up = (where[k] == OUTSIDE) == (top >= 0)  # the text runs upwards from the bar's end
            angle = 90 if turned[k] else 0
            if text.angle != angle:
                text.setAngle(angle)
            if turned[k]:
                anchor = (0.0, 0.5) if up else (1.0, 0.5)
            else:
                anchor = (0.5, 1.0) if up else (0.5, 0.0)
            if (text.anchor.x(), text.anchor.y()) != anchor:
                text.setAnchor(anchor)
            text.setPos(i + bars.offsets[s], top + (PAD / sy if up else -PAD / sy))
            # black or white inside a bar, whichever reads better on it
            name = themes.text_on(fills[s]) if where[k] == INSIDE and finite[k] else foreground
            colour = colours.get(name)
            if colour is None:
                colour = colours[name] = pg.mkColor(name)
            if text.color != colour:
                text.setColor(colour)
        if self._generation == generation:
            self._unwritten = False  # every label on screen now has its text
        else:  # set_texts ran while this layout did (from a signal): new texts go on screen at once
            self.write_shown()


def _is_number(text: str) -> bool:
    return text[:1].isdigit() or (text[:1] == "-" and text[1:2].isdigit())


def fit_range(lo: float, hi: float, top: float, bottom: float, pixels: float,
              room_top: float, room_bottom: float) -> tuple[float, float]:
    """A y range holding ``lo..hi`` that leaves ``room_top`` pixels above ``top`` and ``room_bottom`` below ``bottom``.

    ``top``/``bottom`` are the highest and lowest bar ends; the rooms are
    capped so the bars keep at least half of the ``pixels``.
    """
    scale = min(1.0, 0.5 * pixels / max(room_top + room_bottom, 1e-9))
    room_top, room_bottom = room_top * scale, room_bottom * scale
    new_lo, new_hi = lo, hi
    for _ in range(8):  # a fixed point: the rooms are in pixels, the range in data units
        per_pixel = (new_hi - new_lo) / pixels
        new_hi = max(hi, top + room_top * per_pixel)
        new_lo = min(lo, bottom - room_bottom * per_pixel)
    return new_lo, new_hi
