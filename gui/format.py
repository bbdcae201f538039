"""Number formatting shared by tables, readouts and the status bar."""

from __future__ import annotations

import math


def fmt(value: float, digits: int = 3) -> str:
    """Fixed-point with ``digits`` decimals where that reads well, else scientific.

    0.6094 -> "0.609", 181.27 -> "181.272", 3.2e-7 -> "3.200e-07",
    inf -> "inf", nan -> "NaN".
    """
    v = float(value)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0" if digits == 0 else f"{0:.{digits}f}"
    a = abs(v)
    if 10.0 ** (-digits) <= a < 1e6:
        return f"{v:.{digits}f}"
    return f"{v:.{digits}e}"
