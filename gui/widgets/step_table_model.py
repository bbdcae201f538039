"""The step table's texts for many numbers at once (no Qt).

:func:`format_many` and :func:`longest_texts` are :func:`gui.format.fmt`
for many values at once: the same texts, the same lengths, without a Python
call per cell (``longest_texts`` formats a few values per column).
"""

from __future__ import annotations

import numpy as np

from gui.format import fmt

#: ``fmt(v)`` (3 digits) is fixed-point for LOW <= |v| < HIGH, else scientific (or NaN, inf, 0).
DIGITS = 3
LOW, HIGH = 10.0 ** (-DIGITS), 1e6
_FIXED, _SCI = f"%.{DIGITS}f", f"%.{DIGITS}e"


def format_many(values) -> list[str]:
    """``[fmt(v) for v in values]``, one format per kind of value rather than a call per value."""
    v = np.asarray(values, dtype=float).ravel()
    out: list[str] = [""] * v.size
    if not v.size:
        return out
    a = np.abs(v)
    with np.errstate(invalid="ignore"):
        fixed = (a >= LOW) & (a < HIGH)
        sci = np.isfinite(v) & (v != 0) & ~fixed
    rest = ~(fixed | sci)
    for mask, form in ((fixed, _FIXED), (sci, _SCI)):
        idx = np.flatnonzero(mask)
        for i, x in zip(idx.tolist(), v[idx].tolist()):
            out[i] = form % x
    for i in np.flatnonzero(rest).tolist():
        out[i] = fmt(v[i], DIGITS)
    return out


def longest_texts(table) -> tuple[int, ...]:
    """Per column of ``table``, the most characters of ``fmt(v)`` over its values (0 for no rows).

    Within one kind of text the length only grows with |v| (fixed-point and
    large scientific) or with 1/|v| (small scientific: a longer exponent), and
    a minus sign adds one; so it is enough to format each column's extreme
    value of each kind and sign, plus one of each of NaN, inf, -inf and 0.
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2:
        raise ValueError("a 2-d table")
    rows, cols = t.shape
    longest = np.zeros(cols, dtype=int)
    if not rows:
        return tuple(longest.tolist())
    a = np.abs(t)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(t)
        zero = t == 0
        neg = t < 0
        fixed = (a >= LOW) & (a < HIGH)
        small = finite & ~zero & (a < LOW)
        large = finite & (a >= HIGH)
    for mask, length in ((np.isnan(t), 3), (np.isposinf(t), 3), (np.isneginf(t), 4), (zero, len(fmt(0.0)))):
        np.maximum(longest, np.where(mask.any(axis=0), length, 0), out=longest)
    for kind, smallest in ((small, True), (fixed, False), (large, False)):
        for sign, side in ((1.0, ~neg), (-1.0, neg)):
            m = kind & side
            has = m.any(axis=0)
            if not has.any():
                continue
            pick = np.where(m, a, np.inf).min(axis=0) if smallest else np.where(m, a, -np.inf).max(axis=0)
            for c in np.flatnonzero(has).tolist():
                longest[c] = max(longest[c], len(fmt(sign * float(pick[c]), DIGITS)))
    return tuple(longest.tolist())
