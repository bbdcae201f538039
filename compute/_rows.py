"""Row helpers shared by the compute modules: the dtype rules and the max shift.

:func:`_as_float_array` and :func:`_prepare` apply compute's dtype rules.
Rows are reduced as contiguous last-axis rows, so a result never depends on
the axis or the memory layout.  :func:`_shift_into` is the one max shift
behind softmax, log_softmax, softmax_steps, the normalizers and the smooth
maximum, and where compute's special values come from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.typing import ArrayLike, NDArray

__all__: list[str] = []

FloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


def _as_float_array(x: ArrayLike) -> FloatArray:
    """``np.asarray`` under compute's dtype rules."""
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


def _divide_into(d: FloatArray, t: float) -> None:
    """``d /= t`` in place, in ``d``'s precision; ``d <= 0`` (or NaN), ``t`` validated.

    If ``t`` is not a normal number in ``d``'s dtype (e.g. ``t = 1e-50`` or
    ``1e50`` for float32, which would round to 0 or inf and give ``0/0`` or
    ``-inf/inf`` = NaN) the division is done in float64 and rounded back; the
    result is then ``-inf`` / ``-0.0`` exactly where the true quotient is out
    of range, never NaN.  Must be called under ``np.errstate(all="ignore")``.
    """
    if t == 1.0:
        return
    t_w = d.dtype.type(t)
    if np.isfinite(t_w) and t_w >= np.finfo(d.dtype).tiny:
        np.divide(d, t_w, out=d)
    else:
        d[...] = (d.astype(np.float64) / t).astype(d.dtype)


def _shift_into(a: FloatArray, out: FloatArray, t: float) -> None:
    """``out[...] = (a - max(a)) / t`` along the last axis, with the special-row rules.

    This is the one formula behind ``softmax``, ``log_softmax`` and
    ``softmax_steps`` (through :func:`_shifted`), so their results agree bit
    for bit.  ``out`` has ``a``'s shape and dtype and may be ``a`` itself.
    Must be called under ``np.errstate(all="ignore")``.

    * finite rows: ``(a - max) / t``; the max entry gives exactly 0, others
      are ``<= 0`` (``-inf`` if the subtraction or division overflows).
    * rows with ``+inf`` and no NaN: the limit, 0 on ``+inf`` entries and
      ``-inf`` elsewhere (so ``exp`` gives 1s and 0s and normalising gives
      ``1/k``).
    * rows with only ``-inf``: ``-inf`` everywhere (``exp`` gives all zeros,
      and ``0/0`` makes the probabilities NaN).
    * rows with NaN: NaN everywhere (the max, hence the shift, is undefined).

    The special rows are looked for on the ``(..., 1)`` row maxima only: when
    they are all finite (the usual case) the work is one subtraction and one
    division (none for ``t == 1``) over the data.
    """
    m = np.max(a, axis=-1, keepdims=True)  # NaN if the row holds a NaN
    finite = np.isfinite(m)
    if finite.all():
        np.subtract(a, m, out=out)
        _divide_into(out, t)
        return
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
