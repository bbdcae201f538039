"""Row helpers shared by the compute modules: the dtype rules and the max shift.

:func:`_as_float_array` and :func:`_prepare` apply compute's dtype rules.
Rows are reduced as contiguous last-axis rows, so a result never depends on
the axis or the memory layout.  :func:`_shift_into` is the one max shift
behind softmax, log_softmax, softmax_steps, the normalizers and the smooth
maximum, and where compute's special values come from.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.typing import ArrayLike, NDArray

__all__: list[str] = []

FloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


def _refuse_masked(x: Any, name: str = "input") -> None:
    """Raise ``TypeError`` for a NumPy masked array, whose mask ``np.asarray`` would drop.

    ``numpy.ma`` is not imported for this (it costs 15-25 ms at start-up): while nobody has
    imported it, no masked array can exist."""
    ma = sys.modules.get("numpy.ma")
    if ma is not None and isinstance(x, ma.MaskedArray):
        raise TypeError(
            f"{name} is a masked array (numpy.ma), and its mask would be silently ignored; "
            "pass x.filled(value) (e.g. -inf for scores that must get no weight) or x.compressed()"
        )


def _as_float_array(x: ArrayLike) -> FloatArray:
    """``np.asarray`` under compute's dtype rules (masked arrays refused)."""
    _refuse_masked(x)
    a = np.asarray(x)
    kind = a.dtype.kind
    if kind == "f":
        return a
    if kind in "biu":
        return a.astype(np.float64)
    if kind == "c":
        raise TypeError(
            f"complex input is not supported (got dtype {a.dtype}); "
            "softmax needs real-valued scores"
        )
    raise TypeError(
        f"expected real numbers (float, int or bool), got dtype {a.dtype}"
        + (" (object array: mixed or non-numeric items?)" if kind == "O" else "")
    )


def _as_float_device(x: Any) -> Any:
    """A CuPy array under compute's dtype rules (ints and bools become float64).

    Non-real dtypes raise the same ``TypeError`` as :func:`_as_float_array`.
    """
    kind = x.dtype.kind
    if kind in "biu":
        return x.astype(np.float64)
    if kind != "f":
        _as_float_array(np.empty(0, dtype=x.dtype))  # raises the NumPy path's TypeError
    return x


def _working_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """float16 is computed in float32; every other float dtype in itself."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _prepare(
    x: ArrayLike, axis: int
) -> tuple[FloatArray, int, np.dtype[Any], tuple[int, ...]]:
    """Convert ``x`` for the stable functions.

    Returns ``(a, axis, out_dtype, shape)``: ``a`` in the working precision
    and at least 1-d (a 0-d input becomes shape ``(1,)`` and ``axis`` 0),
    ``axis`` normalised to a non-negative index, the dtype of the result and
    the original shape.
    """
    arr = _as_float_array(x)
    shape = arr.shape
    out_dtype = arr.dtype
    a = arr.astype(_working_dtype(out_dtype), copy=False)
    if a.ndim == 0:
        return a.reshape(1), 0, out_dtype, shape
    return a, normalize_axis_index(axis, a.ndim), out_dtype, shape


def _rows_last(a: FloatArray, axis: int) -> FloatArray:
    """``a`` with ``axis`` moved last, C-contiguous.

    NumPy sums a contiguous last axis pairwise but other axes sequentially,
    which can differ in the last bit.  Always reducing contiguous rows makes
    ``softmax(X, axis=k)`` agree bit for bit with :func:`softmax_steps` on
    each 1-d slice, whatever ``k`` and whatever the input's memory layout.
    """
    return np.ascontiguousarray(np.moveaxis(a, axis, -1))


def _restore(
    r: FloatArray, axis: int, out_dtype: np.dtype[Any], shape: tuple[int, ...]
) -> FloatArray:
    """Undo :func:`_rows_last`, cast to ``out_dtype``, give back ``shape``."""
    out = np.moveaxis(r, -1, axis).astype(out_dtype, copy=False)
    return np.ascontiguousarray(out).reshape(shape)


_TINY: dict[np.dtype[Any], Any] = {}


def _tiny(dtype: np.dtype[Any]) -> Any:
    """``np.finfo(dtype).tiny``, looked up once per dtype."""
    tiny = _TINY.get(dtype)
    if tiny is None:
        tiny = _TINY[dtype] = np.finfo(dtype).tiny
    return tiny


def _divide_into(d: FloatArray, t: Any, halved: bool = False) -> None:
    """``d /= t`` in place, in ``d``'s precision; ``d <= 0`` (or NaN), ``t`` validated.

    ``t`` is a float, or a float64 array of temperatures broadcasting against
    ``d`` (one per row).  If ``t`` is not a normal number in ``d``'s dtype
    (e.g. ``t = 1e-50`` or ``1e50`` for float32, which would round to 0 or
    inf and give ``0/0`` or ``-inf/inf`` = NaN) the division is done in
    float64 and rounded back; the result is then ``-inf`` / ``-0.0`` exactly
    where the true quotient is out of range, never NaN.  With ``halved``,
    ``d`` holds halves and ``t > 1``: it is divided by ``t / 2``, the
    precision chosen as for ``t``, which gives ``2 d / t``'s bits.  Must be
    called under ``np.errstate(all="ignore")``.
    """
    if not isinstance(t, np.ndarray):
        if t == 1.0:
            return
        t_w = d.dtype.type(t)
        if math.isfinite(t_w) and t_w >= _tiny(d.dtype):
            np.divide(d, t_w * 0.5 if halved else t_w, out=d)
        else:
            d[...] = (d.astype(np.float64) / (t * 0.5 if halved else t)).astype(d.dtype)
        return
    t = np.asarray(t, dtype=np.float64)
    t_w = t.astype(d.dtype)
    normal = np.isfinite(t_w) & (t_w >= np.finfo(d.dtype).tiny)
    wide = None if normal.all() else (d.astype(np.float64) / (t * 0.5 if halved else t)).astype(d.dtype)
    np.divide(d, t_w * d.dtype.type(0.5) if halved else t_w, out=d)
    if wide is not None:
        np.copyto(d, wide, where=~np.broadcast_to(normal, d.shape))


_FLOORS: dict[np.dtype[Any], float] = {}


def _overflow_floor(dtype: np.dtype[Any]) -> float:
    """Below this row maximum, ``x - max`` cannot overflow for any finite ``x`` of ``dtype``.

    ``x - m`` rounds to ``-inf`` only if ``|x| + m >= max + ulp(max) / 2``;
    with ``|x| <= max`` that needs ``m >= ulp(max) / 2 = 2**(maxexp - nmant - 2)``
    (about 1e31 for float32, 1e292 for float64).  Half that, for margin.
    """
    floor = _FLOORS.get(dtype)
    if floor is None:
        fi = np.finfo(dtype)
        floor = _FLOORS[dtype] = math.ldexp(1.0, fi.maxexp - fi.nmant - 3)
    return floor


def _halves(x: FloatArray, m: Any, t: Any) -> FloatArray:
    """``(x - m) / t`` as ``(x/2 - m/2) / (t/2)``: it cannot overflow in the subtraction.

    Halving is exact here (``m`` is huge, so a tiny ``x`` that loses a bit
    is far below the difference's last place), so where ``x - m`` does not
    overflow this gives the same bits as ``(x - m) / t``.  ``t > 1``.
    """
    h = np.subtract(x * 0.5, np.asarray(m, dtype=x.dtype) * x.dtype.type(0.5))
    _divide_into(h, t, halved=True)
    return h


def _shift_into(a: FloatArray, out: FloatArray, t: float) -> None:
    """``out[...] = (a - max(a)) / t`` along the last axis, with the special-row rules.

    This is the one formula behind ``softmax``, ``log_softmax`` and
    ``softmax_steps`` (through :func:`_shifted`), so their results agree bit
    for bit.  ``out`` has ``a``'s shape and dtype and may be ``a`` itself.
    Must be called under ``np.errstate(all="ignore")``.

    * finite rows: ``(a - max) / t``; the max entry gives exactly 0, others
      are ``<= 0`` (``-inf`` only where the true quotient is below the
      dtype's range: see *overflowing shift* in compute's special values).
    * rows with ``+inf`` and no NaN: the limit, 0 on ``+inf`` entries and
      ``-inf`` elsewhere (so ``exp`` gives 1s and 0s and normalising gives
      ``1/k``).
    * rows with only ``-inf``: ``-inf`` everywhere (``exp`` gives all zeros,
      and ``0/0`` makes the probabilities NaN).
    * rows with NaN: NaN everywhere (the max, hence the shift, is undefined).

    The special rows are looked for on the ``(..., 1)`` row maxima only: when
    they are all finite (the usual case) the work is one subtraction and one
    division (none for ``t == 1``) over the data.  Only for ``t > 1`` and a
    row maximum above :func:`_overflow_floor` are that row's overflowed
    entries recomputed by :func:`_halves`.
    """
    m = np.maximum.reduce(a, axis=-1, keepdims=True)  # np.max's reduction, without its wrapper; NaN if the row holds a NaN
    mend = None
    # one comparison on the block's largest maximum in the usual case (NaN looks closer)
    if t > 1.0 and m.size and not m.max() < _overflow_floor(a.dtype):
        risky = ((m >= _overflow_floor(a.dtype)) & (m < np.inf))[..., 0]
        if risky.any():
            src = a[risky]  # a copy, taken before ``out`` (possibly ``a``) is overwritten
            mend = risky, src, _halves(src, m[risky], t)
    # (one row: a Python test on its maximum; several: one ufunc and one reduction, no wrapper)
    if math.isfinite(m.item()) if m.size == 1 else np.logical_and.reduce(np.isfinite(m), axis=None):
        np.subtract(a, m, out=out)
        _divide_into(out, t)
    else:
        finite = np.isfinite(m)
        pos_rows = (m == np.inf)[..., 0]
        nan_rows = np.isnan(m)[..., 0]
        # from ``a`` before ``out`` (possibly ``a`` itself) is overwritten
        limit = np.where(a[pos_rows] == np.inf, 0.0, -np.inf) if pos_rows.any() else None
        np.subtract(a, np.where(finite, m, 0), out=out)
        _divide_into(out, t)
        if limit is not None:
            out[pos_rows] = limit
        if nan_rows.any():
            out[nan_rows] = np.nan
    if mend is not None:
        risky, src, halves = mend
        got = out[risky]
        out[risky] = np.where(np.isneginf(got) & np.isfinite(src), halves, got)


def _shifted_curve(a: FloatArray, ts: NDArray[np.float64]) -> FloatArray:
    """``_shifted(a, -1, t)`` for every ``t`` of ``ts``, as rows ``(len(ts), n)``, the same bits.

    ``a`` is one finite, non-empty 1-D row in its working dtype; ``ts`` the
    validated temperatures.  Under errstate.
    """
    m = a.max()
    d = a - m
    out = np.broadcast_to(d, (ts.size, d.size)).copy()
    _divide_into(out, ts[:, None])
    big = ts > 1.0
    if m >= _overflow_floor(a.dtype) and big.any():
        bad = np.isneginf(d)
        if bad.any():
            h = np.broadcast_to(a[bad], (int(big.sum()), int(bad.sum())))
            out[np.ix_(big, bad)] = _halves(h, m, ts[big, None])
    return out


def _diff_over_t(x: ArrayLike, m: ArrayLike, t: float) -> FloatArray:
    """``(x - m) / t`` elementwise in ``x``'s precision (``m`` broadcasts; ``x <= m`` or NaN).

    The shift of :func:`_shift_into` for the online partials: the
    temperature rule of :func:`_divide_into`, and :func:`_halves` where
    ``x - m`` overflowed but need not have.  Returns an array (0-d for
    scalars).  Under errstate.
    """
    x = np.asarray(x)
    m = np.asarray(m, dtype=x.dtype)
    d = np.subtract(x, m)  # a fresh array, or a NumPy scalar for 0-d operands
    scalar = d.ndim == 0
    if scalar:
        d = d.reshape(1)
    _divide_into(d, t)
    # as in _shift_into: only a maximum m above the floor (or NaN) can overflow x - m
    if t > 1.0 and m.size and d.dtype.kind == "f" and not m.max() < _overflow_floor(d.dtype):
        xb, mb = (np.broadcast_to(np.atleast_1d(v), d.shape) for v in (x, m))
        bad = np.isneginf(d) & np.isfinite(xb) & np.isfinite(mb)
        if bad.any():
            d[bad] = _halves(xb[bad], mb[bad], t)
    return d.reshape(()) if scalar else d


def _times(raw: FloatArray, scale: float) -> FloatArray:
    """``raw * scale`` in ``raw``'s precision (``raw`` is a fresh array, changed in place).

    A scale that is not a normal number in that precision (``1e-50`` or
    ``1e50`` for float32) is applied in float64 and rounded back, so it
    cannot turn into 0 or inf.  ``scale == 1`` returns ``raw``.  Under errstate.
    """
    if scale == 1.0:
        return raw
    s = raw.dtype.type(scale)
    if np.isfinite(s) and s >= np.finfo(raw.dtype).tiny:
        raw *= s
        return raw
    return (raw.astype(np.float64) * scale).astype(raw.dtype)


def _exp_rest(z: FloatArray, axis: int = -1, scratch: FloatArray | None = None, top: Any = None) -> FloatArray:
    """``sum(exp(z))`` along ``axis`` (kept) without one maximum's ``exp(0) == 1``.

    For rows ``z`` whose maximum is 0: the rest ``s`` that
    :func:`_log1p_rest` turns into ``log(1 + s)`` without rounding ``1 + s``
    first (SciPy's logsumexp does the same since its gh-18295).  ``top`` is
    the index of a maximum per row (``keepdims``, or flat indices from
    :func:`_flat_argmax` for a C-contiguous 2-D ``z`` and ``scratch``;
    ``argmax`` of ``z`` if not given).  ``scratch`` (``z``'s shape and
    dtype, may be ``z``) takes the exponentials.  Rows without a 0 (all
    ``-inf``, NaN, a non-finite max) give garbage: callers replace them.
    Under errstate.
    """
    if top is None:
        top = np.argmax(z, axis=axis, keepdims=True)
    e = np.exp(z, out=scratch)
    if top.ndim == 1:
        e.reshape(-1)[top] = 0
    else:
        np.put_along_axis(e, top, 0, axis=axis)
    return e.sum(axis=axis, keepdims=True)


def _log1p_rest(rest: FloatArray) -> FloatArray:
    """``log(1 + rest)``: ``log1p`` below 1, where a rest under the precision
    survives (``logsumexp([0, -40])`` is ``4.2e-18``, not 0); ``log(1 + rest)``
    from 1 on, as accurate there and exactly ``log(k)`` for ``k`` tied maxima.
    Under errstate.
    """
    return np.where(rest < 1, np.log1p(rest), np.log(1 + rest))


def _flat_argmax(a: FloatArray) -> NDArray[np.intp]:
    """Flat indices of each row's first maximum in a C-contiguous 2-D ``a``.

    Cheaper than ``take_along_axis`` / ``put_along_axis`` on a block of rows:
    ``a.reshape(-1)[i]`` reads the maxima; :func:`_exp_rest` writes through them.
    """
    i = np.argmax(a, axis=1)
    i += np.arange(0, a.size, a.shape[1], dtype=i.dtype)
    return i


def _shifted(a: FloatArray, axis: int, t: float) -> FloatArray:
    """``(a - max(a)) / t`` along ``axis`` as a new array; see :func:`_shift_into`.

    Must be called under ``np.errstate(all="ignore")``.
    """
    out = np.empty_like(a)
    _shift_into(np.moveaxis(a, axis, -1), np.moveaxis(out, axis, -1), t)
    return out


def _logit_rows(logits: ArrayLike, name: str = "logits") -> tuple[NDArray[np.float64], np.dtype[Any]]:
    """``logits`` as float64 rows ``(R, V)`` and the output dtype.

    The output dtype follows compute's dtype rules.  Raises for 0-d or empty rows and for
    rows with NaN or with no logit above ``-inf``.
    """
    a = _as_float_array(logits)
    if a.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (a row of V scores), got a scalar")
    if a.shape[-1] == 0:
        raise ValueError(f"{name} must not be empty (got shape {a.shape})")
    rows = np.ascontiguousarray(a.reshape(-1, a.shape[-1]), dtype=np.float64)
    bad_nan = np.isnan(rows).any(axis=-1)
    if bad_nan.any():
        i = int(np.flatnonzero(bad_nan)[0])
        where = f" (row {i})" if a.ndim > 1 else ""
        raise ValueError(f"{name} contain NaN{where}: a NaN score has no probability")
    bad_empty = (rows == -np.inf).all(axis=-1)
    if bad_empty.any():
        i = int(np.flatnonzero(bad_empty)[0])
        where = f" (row {i})" if a.ndim > 1 else ""
        raise ValueError(f"every logit is -inf{where}: nothing can be sampled")
    return rows, a.dtype


def _one_row(logits: ArrayLike, func: str) -> None:
    if np.ndim(logits) != 1:
        raise ValueError(f"{func} takes one 1-D row of logits, got shape {np.shape(logits)}")


# Rows longer than this go through the per-row partial top-p path; shorter
# rows (and any batch of them) are sorted in full, vectorised.
_SMALL_ROW = 2048


def _top_p_cut(p: NDArray[np.float64], top_p: float) -> float:
    """Smallest probability kept by top-p on one row ``p`` (>= 0, sums to ~1).

    transformers' rule: in ascending order, a token is removed iff its
    cumulative probability (itself plus everything less probable) is
    ``<= 1 - top_p``; the most probable token is always kept.  Every token
    with ``p >= result`` is kept (ties included).

    Short rows are sorted.  Long rows are first bucketed by the top 16 bits
    of their float64 pattern (exponent and 4 mantissa bits: 16 buckets per
    power of two, ordered like the values), which gives the mass of every
    bucket in two linear passes.  Whole buckets then fall on one side of the
    cut, and only the tokens of the one bucket the cut falls in are sorted:
    typically a few hundred of 200,000.
    """
    limit = 1.0 - top_p
    if p.size <= _SMALL_ROW:
        head = np.sort(p)
        below = 0.0
    else:
        bucket = p.view(np.int64) >> 48  # p >= 0, so this is monotone in p
        mass = np.bincount(bucket, weights=p, minlength=1 << 15)
        cum = np.cumsum(mass)  # mass of every bucket <= b
        b = int(np.searchsorted(cum, limit, side="right"))  # first bucket whose end passes the limit
        if b >= cum.size:  # rounding: nothing exceeds the limit; keep the top token only
            return float(p.max())
        below = float(cum[b - 1]) if b else 0.0
        head = np.sort(p[bucket == b])
    tails = below + np.cumsum(head)  # ascending cumulative probability
    first = int(np.searchsorted(tails, limit, side="right"))  # first tail > limit
    return float(head[min(first, head.size - 1)])


def _top_p_thresholds(p: NDArray[np.float64], kept: BoolArray, top_k_on: bool, top_p: float) -> NDArray[np.float64]:
    """Each row's smallest probability top-p keeps, as ``(R, 1)``: rows ``p`` ``(R, V)`` renormalised over
    ``kept``.  A row of at most :data:`_SMALL_ROW` entries (any batch of them) is sorted whole, vectorised;
    a longer one goes through :func:`_top_p_cut`, on its top-k survivors alone when top-k is on."""
    n_rows, v = p.shape
    if top_p >= 1.0:
        return np.full((n_rows, 1), np.nextafter(0.0, 1.0))  # keep p > 0
    if v <= _SMALL_ROW:
        asc = np.sort(p, axis=-1)
        tails = np.cumsum(asc, axis=-1)
        first = np.minimum(np.count_nonzero(tails <= 1.0 - top_p, axis=-1), v - 1)
        return np.take_along_axis(asc, first[:, None], axis=-1)
    thresholds = np.empty((n_rows, 1))
    for r in range(n_rows):
        thresholds[r, 0] = _top_p_cut(p[r][kept[r]] if top_k_on else p[r], top_p)
    return thresholds
