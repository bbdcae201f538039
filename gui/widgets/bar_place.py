"""Where each bar value label goes, in pixels: the placement rule of :mod:`gui.widgets.bar_labels`.

Plain NumPy (no Qt): :func:`place` takes the labels' sizes, the bars' ends
and the plot's height and returns each label's place (above or below its
bar, inside its end, or left out) and whether it stands upright.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Pixels kept free around a label (and between a label and its bar).
PAD = 1.0
#: A label may reach this many pixels over a neighbouring bar's side (its padding, then the
#: bar's 1 px outline in the background colour), never over another label.
SPILL = PAD + 1.0
#: Pixels kept between the ink of two labels side by side (two PADs and a little more: a row of
#: upright labels 3 px apart reads as one block).
LABEL_GAP = 3.5

OUTSIDE, INSIDE, HIDDEN = 0, 1, 2


@dataclass(frozen=True)
class Placement:
    """For each label: where it went (OUTSIDE, INSIDE or HIDDEN), and whether it reads upright."""

    where: np.ndarray
    upright: np.ndarray  # of bool
    rects: np.ndarray  # (k, 4) pixel rects x0, y0, x1, y1 (y down) of the labels, HIDDEN ones included


def _overlaps(rect: np.ndarray, others: np.ndarray) -> np.ndarray:
    if not len(others):
        return np.zeros(0, dtype=bool)
    return ((others[:, 0] < rect[2]) & (rect[0] < others[:, 2])
            & (others[:, 1] < rect[3]) & (rect[1] < others[:, 3]))


def upright(width: np.ndarray, slot: float) -> bool:
    """Whether labels of these text widths must stand upright to fit ``slot`` pixels across."""
    return bool(np.max(width, initial=0.0) + 2 * PAD > slot)


def place(x: np.ndarray, end: np.ndarray, base: np.ndarray, width: np.ndarray, height: np.ndarray,
          *, slot: float, bar_width: float, plot_height: float, priority: np.ndarray, bars: np.ndarray,
          own_bar: np.ndarray, force_inside: np.ndarray | None = None, tier: np.ndarray | None = None,
          thickness: np.ndarray | None = None) -> Placement:
    """Choose each label's place, all in pixels (y grows downwards, the plot spans 0..plot_height).

    ``x`` is the label's bar centre, ``end`` the pixel y of the bar's far end
    (its top when positive), ``base`` that of its base (the zero line);
    ``width``/``height`` the label's text size read horizontally.  ``slot``
    is the room a bar has across, ``bar_width`` its own width (a label
    goes inside only when it fits that).  ``bars`` holds every bar's rect
    (x0, y0, x1, y1) and ``own_bar[k]`` the row of label k's bar there (-1
    for none).  Labels of a higher ``tier`` are placed first, and within a
    tier those of higher ``priority``.  ``force_inside`` marks labels that
    belong inside their bar (undefined-value tags).  ``thickness`` is the
    ink's extent across the text line (at most ``height``): an upright
    label takes that much room across its bar.
    """
    k = len(x)
    where = np.full(k, HIDDEN, dtype=np.int8)
    rects = np.zeros((k, 4))
    if k == 0:
        return Placement(where, np.zeros(0, dtype=bool), rects)
    x, end, base = (np.asarray(a, dtype=float) for a in (x, end, base))
    inside_only = np.zeros(k, dtype=bool) if force_inside is None else np.asarray(force_inside, dtype=bool)
    # values share one orientation; a placeholder's tag turns only if its own bar is too narrow
    turned = np.where(inside_only, width + 2 * PAD > bar_width, upright(width[~inside_only], slot))
    ink = height if thickness is None else np.minimum(thickness, height)
    across = np.where(turned, ink, width)  # the label's size across the bar
    along = np.where(turned, width, height)  # and along it
    down = end > base  # negative bars grow downwards on screen
    sign = np.where(down, 1.0, -1.0)
    half = across / 2 + PAD
    length = along + 2 * PAD
    spill = np.minimum(SPILL, half)
    bars = np.asarray(bars, dtype=float).reshape(-1, 4)
    own_bar = np.asarray(own_bar, dtype=int)
    # Each label's two candidate rects, and whether each fits the plot and clears every other bar: all
    # at once (neither depends on the other labels); only the overlaps between labels need the order.
    candidates, fits = [], []
    for option in (OUTSIDE, INSIDE):
        tip = end + sign * length if option == OUTSIDE else end - sign * length
        y0, y1 = np.minimum(end, tip), np.maximum(end, tip)
        rect = np.stack([x - half, y0, x + half, y1], axis=1)
        ok = ~((y0 < 0) | (y1 > plot_height))
        if option == OUTSIDE:
            ok &= ~inside_only
        else:  # the bar must be long and wide enough to hold its label
            ok &= ~((np.abs(end - base) < length) | (2 * half > bar_width))
        ok &= ~_hits_other_bars(rect, spill, bars, own_bar, ok)
        candidates.append(rect)
        fits.append(ok)
    apart = max(0.0, LABEL_GAP - 2 * PAD)  # placed rects carry their own PAD
    placed = np.zeros((k, 4))
    count = 0
    tiers = np.zeros(k) if tier is None else np.asarray(tier, dtype=float)
    for i in np.lexsort((-np.asarray(priority, dtype=float), -tiers)).tolist():  # the last key sorts first
        for option in (OUTSIDE, INSIDE):
            if not fits[option][i]:
                continue
            r0, r1, r2, r3 = candidates[option][i]
            if count:
                p = placed[:count]
                if ((p[:, 0] < r2 + apart) & (r0 - apart < p[:, 2]) & (p[:, 1] < r3) & (r1 < p[:, 3])).any():
                    continue
            where[i] = option
            rects[i] = placed[count] = candidates[option][i]
            count += 1
            break
    return Placement(where, turned, rects)


def _hits_other_bars(rects: np.ndarray, spill: np.ndarray, bars: np.ndarray, own_bar: np.ndarray,
                     which: np.ndarray) -> np.ndarray:
    """Whether each of ``rects`` (narrowed by ``spill`` at both sides) overlaps a bar other than its
    own (row ``own_bar``); only the rows in ``which`` are tested (the others read False)."""
    hits = np.zeros(len(rects), dtype=bool)
    rows = np.flatnonzero(which)
    if not len(bars) or not rows.size:
        return hits
    step = max(1, (1 << 20) // len(bars))  # bounded temporaries however many labels and bars
    for lo in range(0, rows.size, step):
        k = rows[lo:lo + step]
        r = rects[k]
        x0 = (r[:, 0] + spill[k])[:, None]
        x1 = (r[:, 2] - spill[k])[:, None]
        over = ((bars[None, :, 0] < x1) & (x0 < bars[None, :, 2])
                & (bars[None, :, 1] < r[:, 3:4]) & (r[:, 1:2] < bars[None, :, 3]))
        own = own_bar[k]
        mine = own >= 0
        over[np.flatnonzero(mine), own[mine]] = False
        hits[k] = over.any(axis=1)
    return hits
