"""Softmax in a chosen floating-point format, and where each format breaks.

Plain NumPy.  Everything here computes *in* the
format it is asked about, never in float64 and then rounded, so the results
are the ones real code in that format gets: inf, NaN and exact zeros
included.

Formats
-------
``"float16"``, ``"float32"`` and ``"float64"`` are NumPy's own dtypes (the
``np.float16`` etc. types and dtypes are accepted too).  ``"bfloat16"`` has
no NumPy dtype, so it is **emulated**: values are stored as float32 numbers
that bfloat16 can represent exactly (the low 16 bits are zero), and every
elementary operation is done in float32 and its result rounded to the
nearest bfloat16 with :func:`to_bfloat16`.  float32 has 24 significant bits,
more than twice bfloat16's 8 plus 2, so for ``+ - * /`` this double rounding
gives exactly the correctly rounded bfloat16 result; ``exp`` and ``log`` are
float32's, rounded once.  NumPy's float16 works the same way (each operation
in float32, rounded back), so the two 16-bit formats behave alike.

Sums
----
A row sum is one reduction, not ``n - 1`` separately rounded additions:
NumPy sums a contiguous float16 row pairwise with float32 partial sums and
rounds once at the end (a *strided* float16 sum instead adds in float16 one
by one, and stalls at 2048 when adding ones).  The emulated bfloat16 does the
same: a float32 pairwise sum, rounded once, which is also what deep-learning
frameworks do for both 16-bit formats.  Rows are always reduced as
contiguous last-axis rows, so a result never depends on the memory layout
or on the axis, and each row of a 2-D call equals the 1-D call on that row
bit for bit.

The three formulas (:data:`SOFTMAX_METHODS`)
--------------------------------------------
* ``"naive"``: ``exp(x) / sum(exp(x))``.  Overflows as soon as one score
  passes :func:`overflow_threshold` (``inf / inf`` is NaN), and a row whose
  every score is below :func:`underflow_threshold` becomes ``0 / 0 = NaN``.
* ``"max_shifted"``: ``exp(x - max) / sum(exp(x - max))``.  The largest
  exponent is ``exp(0) = 1``, so nothing overflows and the sum is at least 1.
* ``"log_sum_exp"``: ``exp(x - max - log(sum(exp(x - max))))``, i.e. the
  log-softmax followed by ``exp``.

These are the formulas as written, without compute's special values: a row that is entirely ``-inf`` (a fully masked
row) gives ``-inf - (-inf) = NaN`` in the shifted formulas, as it does in
real code, and a score that does not fit the format (``-1e9`` in float16)
is cast to ``-inf`` first, because the input is rounded to the format before
anything else.

No warnings: all arithmetic runs under ``np.errstate(all="ignore")``; the
inf and NaN results are the point.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.typing import ArrayLike, NDArray

from compute._rows import _as_float_array, _refuse_masked, _rows_last

__all__ = [
    "PRECISION_DTYPES",
    "SOFTMAX_METHODS",
    "PrecisionInfo",
    "exp_in",
    "lowest_finite",
    "nextafter_in",
    "overflow_threshold",
    "precision_info",
    "renormalize_in",
    "softmax_in",
    "to_bfloat16",
    "underflow_threshold",
]

#: The formats this module computes in, narrowest first.
PRECISION_DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32", "float64")
#: The softmax formulas :func:`softmax_in` knows.
SOFTMAX_METHODS: tuple[str, ...] = ("naive", "max_shifted", "log_sum_exp")

# bfloat16 is the top half of a float32: 1 sign, 8 exponent and 7 stored mantissa bits.
_BF16_MAX = float(np.array(0x7F7F0000, dtype=np.uint32).view(np.float32))  # 3.3895e38
_BF16_SMALLEST_NORMAL = 2.0**-126
_BF16_SMALLEST_SUBNORMAL = 2.0**-133
_BF16_EPS = 2.0**-7


# --------------------------------------------------------------------------
# bfloat16
# --------------------------------------------------------------------------
def _float64_to_float32_round_to_odd(a: NDArray[np.float64]) -> NDArray[np.float32]:
    """float64 -> float32 rounded *to odd*: exact values stay, others get an odd last bit.

    Rounding to odd keeps the information "inexact, and on which side", so a
    second rounding to a format at least two bits narrower (bfloat16 has 16
    fewer) is the same as rounding the float64 directly: no double-rounding
    error.  Values beyond float32's range become its largest finite value
    with the right sign, which still rounds to inf in bfloat16.
    """
    with np.errstate(all="ignore"):
        f = a.astype(np.float32)
        back = f.astype(np.float64)
    bits = np.ascontiguousarray(f).view(np.uint32)
    inexact = (back != a) & np.isfinite(a)
    toward_zero = inexact & (np.abs(back) > np.abs(a))  # rounded away from zero: step back
    bits = np.where(toward_zero, bits - np.uint32(1), bits)
    bits = np.where(inexact, bits | np.uint32(1), bits)
    return bits.view(np.float32)


def to_bfloat16(x: ArrayLike) -> NDArray[np.float32]:
    """Round to the nearest bfloat16, ties to even; returned as float32 values.

    The result is a float32 array of ``x``'s shape whose values bfloat16 can
    represent exactly (the low 16 bits are 0).  Rounding is done on the bits:
    add ``0x7FFF`` plus the lowest kept bit, then clear the low 16 bits, the
    standard round-to-nearest-even.  A finite value at or beyond the halfway
    point above bfloat16's largest (3.3895e38) becomes ``inf``, as rounding
    should; ``±inf`` stay, NaN stays NaN (quiet, with its sign), ``-0.0``
    stays ``-0.0``, and float32 subnormals round to bfloat16 subnormals.

    float32 and narrower input is rounded directly.  float64 (and integer)
    input is rounded once too, not float64 -> float32 -> bfloat16: it goes
    through float32 rounded *to odd*, which makes the second rounding exact.
    """
    _refuse_masked(x)
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"expected real numbers, got dtype {a.dtype}")
    shape = a.shape
    a = np.atleast_1d(a)
    if a.dtype.kind == "f" and a.dtype.itemsize <= 4:
        a32 = np.ascontiguousarray(a, dtype=np.float32)
    else:
        a32 = _float64_to_float32_round_to_odd(a.astype(np.float64))
    bits = a32.view(np.uint32)
    sign = bits & np.uint32(0x80000000)
    # NaN first, so that no payload can carry into the exponent (or wrap)
    bits = np.where(np.isnan(a32), sign | np.uint32(0x7FC00000), bits)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32).reshape(shape)


# --------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Format:
    """How to compute in one format: its storage dtype and its rounding."""

    name: str
    storage: np.dtype[Any]  # float32 for the emulated bfloat16
    round: Callable[[np.ndarray], np.ndarray]  # identity for NumPy's own dtypes

    @property
    def emulated(self) -> bool:
        return self.name == "bfloat16"

    def cast(self, x: ArrayLike) -> np.ndarray:
        """``x`` rounded (once) to the format, as an array of the storage dtype."""
        a = _as_float_array(x)
        if self.emulated:
            return to_bfloat16(a)
        with np.errstate(all="ignore"):  # float64 -> float16 may overflow to inf: that is the point
            return a.astype(self.storage, copy=False)


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _format(dtype: Any) -> _Format:
    """Resolve ``"bfloat16"`` or anything ``np.dtype`` takes (float16/32/64 only)."""
    try:
        return _format_cached(dtype)  # np.dtype() on a name costs tens of microseconds
    except TypeError:  # unhashable, so not a dtype name or type either
        raise ValueError(f"dtype must be one of {', '.join(PRECISION_DTYPES)}, got {dtype!r}") from None


@functools.cache
def _format_cached(dtype: Any) -> _Format:
    if isinstance(dtype, str) and dtype == "bfloat16":
        return _Format("bfloat16", np.dtype(np.float32), to_bfloat16)
    try:
        d = None if dtype is None else np.dtype(dtype)  # np.dtype(None) would be float64
    except TypeError:
        d = None
    if d is None or d.name not in PRECISION_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(PRECISION_DTYPES)}, got {dtype!r}")
    return _Format(d.name, d, _same)


def exp_in(x: ArrayLike, dtype: Any) -> np.ndarray:
    """``exp(x)`` computed in ``dtype`` (``x`` is rounded to it first), no warnings."""
    f = _format(dtype)
    with np.errstate(all="ignore"):
        return f.round(np.exp(f.cast(x)))


def nextafter_in(x: ArrayLike, toward: ArrayLike, dtype: Any) -> np.ndarray:
    """``np.nextafter`` in ``dtype``, bfloat16 included: the neighbour of ``x`` toward ``toward``.

    ``x`` and ``toward`` are rounded to the format first.  As for
    ``np.nextafter``: ``x == toward`` gives ``toward``, NaN gives NaN, and
    the step from ``±0`` is the smallest subnormal.
    """
    f = _format(dtype)
    a, t = np.broadcast_arrays(f.cast(x), f.cast(toward))
    if not f.emulated:
        return np.nextafter(a, t)[()]
    # bfloat16 as a 16-bit pattern, mapped to an integer that orders like the values
    h = (np.ascontiguousarray(np.atleast_1d(a)).view(np.uint32) >> np.uint32(16)).astype(np.int64)
    key = np.where(h & 0x8000, -(h & 0x7FFF), h).reshape(a.shape)
    key = key + np.where(t > a, 1, -1)
    h = np.atleast_1d(np.where(key >= 0, key, 0x8000 | -key).astype(np.uint32) << np.uint32(16))
    out = h.view(np.float32).reshape(a.shape)
    return np.where(np.isnan(a) | np.isnan(t), np.float32(np.nan), np.where(a == t, t, out))[()]


@dataclass(frozen=True)
class PrecisionInfo:
    """The numbers that say where a format breaks (like ``np.finfo``, plus exp's limits).

    Attributes
    ----------
    name
        "float16", "bfloat16", "float32" or "float64".
    emulated
        True for bfloat16 (float32 storage, rounded after every op).
    eps
        the distance from 1.0 to the next larger number.
    max
        the largest finite value; ``lowest`` is ``-max``.
    smallest_normal, smallest_subnormal
        the smallest positive values.
    overflow
        :func:`overflow_threshold`.
    underflow
        :func:`underflow_threshold`.
    """

    name: str
    emulated: bool
    eps: float
    max: float
    lowest: float
    smallest_normal: float
    smallest_subnormal: float
    overflow: float
    underflow: float


def _step(f: _Format, x: np.ndarray, up: bool) -> np.ndarray:
    return nextafter_in(x, np.inf if up else -np.inf, f.name)


def _search(f: _Format, start: float, ok: Callable[[np.ndarray], bool]) -> float:
    """The largest value ``x`` of the format with ``ok(x)``, where ``ok`` holds below a boundary.

    Starts from ``start`` (the float64 estimate of the boundary, rounded to the
    format) and walks adjacent values of the format: down while ``ok`` fails,
    then up while it holds for the next value.
    """
    x = f.cast(start)[()]
    for _ in range(1 << 12):
        if ok(x):
            break
        x = _step(f, x, up=False)
    else:  # pragma: no cover - exp would have to be badly wrong
        raise RuntimeError(f"no threshold found for {f.name} near {start!r}")
    for _ in range(1 << 12):
        nxt = _step(f, x, up=True)
        if not ok(nxt):
            return float(x)
        x = nxt
    raise RuntimeError(f"no threshold found for {f.name} near {start!r}")  # pragma: no cover


@functools.cache
def _info(name: str) -> PrecisionInfo:
    f = _format(name)
    if f.emulated:
        eps, big, normal, sub = _BF16_EPS, _BF16_MAX, _BF16_SMALLEST_NORMAL, _BF16_SMALLEST_SUBNORMAL
    else:
        fi = np.finfo(f.storage)
        eps, big = float(fi.eps), float(fi.max)
        normal, sub = float(fi.smallest_normal), float(fi.smallest_subnormal)
    overflow = _search(f, math.log(big), lambda x: bool(np.isfinite(exp_in(x, name))))
    # exp(x) rounds to 0 once it is below half the smallest subnormal, i.e. for x below
    # about ln(smallest_subnormal) - ln 2; "exp(x) == 0" holds below that boundary
    underflow = _search(f, math.log(sub) - math.log(2.0), lambda x: bool(exp_in(x, name) == 0))
    return PrecisionInfo(name, f.emulated, eps, big, -big, normal, sub, overflow, underflow)


def precision_info(dtype: Any) -> PrecisionInfo:
    """:class:`PrecisionInfo` for ``dtype`` (a name of :data:`PRECISION_DTYPES` or a NumPy dtype)."""
    return _info(_format(dtype).name)


def overflow_threshold(dtype: Any) -> float:
    """The largest ``x`` of ``dtype`` whose ``exp(x)``, computed in ``dtype``, is finite.

    About ``ln(max)``: 11.0859375 for float16, 88.5 for bfloat16, 88.7228
    for float32, 709.7827 for float64.  It is exact in the format's own
    arithmetic: ``exp_in(t, dtype)`` is finite and
    ``exp_in(nextafter_in(t, inf, dtype), dtype)`` is ``inf``.  It is found
    by walking adjacent values of the format around the float64 estimate
    ``ln(max)``, so it is a value of the format (bfloat16 has only 8
    significant bits: its neighbours around 88 are 0.5 apart, hence 88.5, not
    88.72).  The naive softmax of a row overflows exactly when its largest
    score, rounded to the format, is above this.  Returned as a Python float.
    """
    return precision_info(dtype).overflow


def underflow_threshold(dtype: Any) -> float:
    """The largest ``x`` of ``dtype`` for which ``exp(x)``, computed in ``dtype``, is exactly 0.

    Subnormals count as nonzero: ``exp(x)`` is 0 only once it falls below
    half the smallest subnormal (and rounds to zero), so this is just below
    ``ln(smallest_subnormal / 2)``: -17.34375 for float16, -93.0 for
    bfloat16 (its values near 93 are 0.5 apart), -103.972 for float32,
    -745.133 for float64.  Every ``x`` of the
    format up to and including it gives ``exp(x) == 0``; the next value up
    gives at least the smallest subnormal.  After the max shift, a score this
    far (or further) below the row's maximum gets a weight of exactly 0.
    Returned as a Python float.
    """
    return precision_info(dtype).underflow


def lowest_finite(dtype: Any) -> float:
    """The most negative finite value of ``dtype``: ``np.finfo(d).min``; bfloat16 -3.3895e38.

    A common mask value: unlike ``-inf`` it cannot make ``-inf - (-inf)``,
    but it is a different number in every format (-65504 in float16).
    """
    return precision_info(dtype).lowest


# --------------------------------------------------------------------------
# softmax in a format
# --------------------------------------------------------------------------
def _vector_axis(a: np.ndarray, axis: int) -> tuple[np.ndarray, int]:
    """``a`` (a 0-d one as a one-element vector) and ``axis`` normalised."""
    if a.ndim == 0:
        return a.reshape(1), 0
    return a, normalize_axis_index(axis, a.ndim)


# --------------------------------------------------------------------------
def softmax_in(x: ArrayLike, dtype: Any, method: str = "max_shifted", axis: int = -1) -> np.ndarray:
    """Softmax of ``x`` along ``axis`` computed in ``dtype`` with one of three formulas.

    ``x`` is first rounded to the format (so ``-1e9`` becomes ``-inf`` in
    float16 and ``1e5`` becomes ``inf``), then every operation of ``method``
    (see the module docstring and :data:`SOFTMAX_METHODS`) runs in the
    format, with each result rounded to it.  No warnings are emitted.

    Returns
    -------
    ndarray
        An array of ``x``'s shape in the format's storage dtype: float16,
        float32 or float64, and float32 holding bfloat16 values for
        ``"bfloat16"``.  Converting it to float64 is exact.  For float64
        and ``"max_shifted"`` the result equals :func:`compute.softmax` on
        finite rows (the same operations in the same order).

    Raises
    ------
    ValueError
        unknown ``dtype`` or ``method``.
    TypeError
        complex, object or other non-real input.
    numpy.exceptions.AxisError
        ``axis`` out of range.
    """
    f = _format(dtype)
    if method not in SOFTMAX_METHODS:
        raise ValueError(f"method must be one of {', '.join(SOFTMAX_METHODS)}, got {method!r}")
    a = f.cast(x)
    shape = a.shape
    a, ax = _vector_axis(a, axis)
    if a.shape[ax] == 0:
        return np.empty(shape, dtype=f.storage)
    r = f.round
    # Intermediates this function created are overwritten in place (out=): the same
    # operations and bits, fewer large allocations (the view's 2000 x 4096 sum test).
    with np.errstate(all="ignore"):
        rows = _rows_last(a, ax)
        if method == "naive":
            e = r(np.exp(rows))
            p = r(np.divide(e, r(e.sum(axis=-1, keepdims=True)), out=e))
        else:
            z = r(rows - rows.max(axis=-1, keepdims=True))
            if method == "max_shifted":
                e = r(np.exp(z, out=z))
                p = r(np.divide(e, r(e.sum(axis=-1, keepdims=True)), out=e))
            else:
                total = r(r(np.exp(z)).sum(axis=-1, keepdims=True))
                log_p = r(np.subtract(z, r(np.log(total)), out=z))
                p = r(np.exp(log_p, out=log_p))
    return np.ascontiguousarray(np.moveaxis(p, -1, ax)).reshape(shape)


def renormalize_in(p: ArrayLike, dtype: Any, axis: int = -1) -> np.ndarray:
    """``p / sum(p)`` along ``axis``, computed in ``dtype`` like :func:`softmax_in`.

    The "divide by the sum once more" fix for weights that do not add up to
    1.  In a finite format it cannot make the sum exactly 1 in general: the
    quotients are rounded again, and the new sum is off by about as much as
    the old one.
    """
    f = _format(dtype)
    a = f.cast(p)
    shape = a.shape
    a, ax = _vector_axis(a, axis)
    with np.errstate(all="ignore"):
        rows = _rows_last(a, ax)
        q = f.round(rows / f.round(rows.sum(axis=-1, keepdims=True)))
    return np.ascontiguousarray(np.moveaxis(q, -1, ax)).reshape(shape)
