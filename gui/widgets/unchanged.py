"""Paint only what changed: setters that leave a pyqtgraph item alone when its data is the same.

A view redraws every panel of the tab shown when any of its inputs change,
and pyqtgraph repaints an item (its plot's axes and grid included: about
5 ms a plot offscreen) whenever ``setData``, ``setOpts`` or ``setImage`` is
called, even with the same data.  A slider that changes one plot would then
repaint them all.  These helpers compare the new data with what the item
holds (bit for bit, NaN equal to NaN) and call pyqtgraph only when something
differs, so an unchanged plot gets no paint event at all.  Use them instead
of calling the item directly; ``tests/gui/test_paint_only_changes.py``
checks that a slider of each kind repaints only the plots it changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gui.qt import pg

#: Arrays up to this many entries are kept (copied) to compare the next call's with; larger ones are
#: always drawn again (a copy of a huge matrix would cost more than its repaint).
KEEP_MAX = 1 << 20


def kept(a: Any) -> Any:
    """A copy of ``a`` to compare later calls with (None, never equal, for arrays over KEEP_MAX entries).

    A copy, not the array itself: a caller may fill the same buffer again, and an array compared with
    itself is always "the same"."""
    if a is None:
        return None
    a = np.asarray(a)
    return a.copy() if a.size <= KEEP_MAX else None


#: Arrays of more entries are first compared on an evenly strided sample of about SAMPLE_ABOVE entries.
SAMPLE_ABOVE = 256


def _samples_equal(x: np.ndarray, y: np.ndarray, nan: bool) -> bool:
    """Whether ``x`` and ``y`` (one shape) agree on every ``step``-th entry in C order (NaN equal to
    NaN when ``nan``); only a quick way to say "different": equal samples prove nothing."""
    if not (x.flags.c_contiguous and y.flags.c_contiguous):
        return True  # a sample would be a copy: leave it to the full comparison
    step = max(1, x.size // SAMPLE_ABOVE)
    return bool(np.array_equal(x.reshape(-1)[::step], y.reshape(-1)[::step], equal_nan=nan))


def same(a: Any, b: Any) -> bool:
    """Whether two data values are identical: arrays bit for bit (NaN equal to NaN) and of one shape."""
    if a is None and b is None:
        return True
    if a is None or b is None:
        return False
    if isinstance(a, np.ndarray | list | tuple) or isinstance(b, np.ndarray | list | tuple):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        nan = x.dtype.kind == "f"
        if x.size > SAMPLE_ABOVE and not _samples_equal(x, y, nan):
            return False  # a changed matrix differs in its sample: no full comparison (about 1 ms a 512²)
        return bool(np.array_equal(x, y, equal_nan=nan))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def set_curve(item: pg.PlotDataItem, x: Any, y: Any, **kw: Any) -> bool:
    """``item.setData(x, y, **kw)`` unless it already holds exactly these points (and options); whether
    it changed.  Compares with the item's own data: a caller must not fill the arrays it passed in place."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    held_x = item.xData if item.xData is not None else np.zeros(0)
    held_y = item.yData if item.yData is not None else np.zeros(0)
    if same(held_x, x) and same(held_y, y) and getattr(item, "_unchanged_kw", {}) == kw:
        return False
    item.setData(x, y, **kw)
    item._unchanged_kw = kw
    return True


def set_opts(item: Any, **opts: Any) -> bool:
    """``item.setOpts(**opts)`` (a BarGraphItem, a ScatterPlotItem's options) unless every one is unchanged."""
    current = item.opts
    if all(k in current and same(current[k], v) for k, v in opts.items()):
        return False
    item.setOpts(**opts)
    return True


def set_image(item: pg.ImageItem, image: np.ndarray, *, levels: Any = None, **kw: Any) -> bool:
    """``item.setImage(image, levels=levels, **kw)`` unless the image and its levels are unchanged."""
    image = np.asarray(image)
    key = (levels, kw)
    if same(getattr(item, "_unchanged_image", None), image) and getattr(item, "_unchanged_key", None) == key:
        return False
    if levels is None:
        item.setImage(image, **kw)
    else:
        item.setImage(image, levels=levels, **kw)
    item._unchanged_image, item._unchanged_key = kept(image), key
    return True


def set_visible(item: Any, visible: bool) -> bool:
    if item.isVisible() == bool(visible):
        return False
    item.setVisible(bool(visible))
    return True


def set_label(label: Any, text: str, **opts: Any) -> bool:
    """``label.setText(text, **opts)`` (a pyqtgraph LabelItem: a legend entry, a title) unless it shows
    exactly that already, with the same options (a new theme colour is a change)."""
    if getattr(label, "text", None) == text and getattr(label, "_unchanged_opts", None) == opts:
        return False
    label.setText(text, **opts)
    label._unchanged_opts = opts
    return True
