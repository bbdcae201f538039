"""Tick lists for pyqtgraph axes: labelled categories, numbered rows, whole numbers, 1-2-5 decades.

Each function returns ``[(position, text), ...]`` for ``AxisItem.setTicks([ticks])``.
Category ``i`` sits at ``i + offset``: 0.5 for heatmap cells (cell ``i``
spans ``i..i+1``), 0 for bars centred on ``i``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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
