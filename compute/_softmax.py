"""Numerically careful softmax and friends, in plain NumPy.

This module is the single source of truth for every number Softmax Lab shows
or exports.  It deliberately imports nothing but NumPy (no Qt, no SciPy), so it
can be tested, benchmarked and reused headless.  CuPy is never imported here:
:func:`softmax`, :func:`log_softmax` and :func:`logsumexp` hand CuPy arrays,
and large NumPy arrays while CuPy is the active backend, to
:mod:`compute.backends` (see there); everything below describes the NumPy
path, which every smaller input takes whatever the backend.

Stability tricks
----------------
* **Max shift.**  ``softmax(z) == softmax(z - c)`` for any constant ``c``.  We
  subtract the row maximum, so the largest exponent is ``exp(0) == 1``: nothing
  can overflow, and the denominator is at least 1, so nothing divides by zero.
* **Shift first, then divide by the temperature.**  Every function that takes a
  ``temperature`` computes ``shifted = (x - max(x)) / T``.  This is the same
  number as ``x / T - max(x / T)`` in exact arithmetic, but it is the order
  that is safe for finite input of any magnitude:

  - ``x / T`` on its own overflows for big scores and small ``T``
    (``1e308 / 0.5 == inf``); ``inf - inf`` is then NaN, or two different
    scores both become ``inf`` and wrongly share the mass.
  - ``x - max(x)`` is always ``<= 0`` and is exactly ``0`` for the maximum, so
    the winner always gets ``exp(0) == 1``.  It may still overflow *downwards*
    (``-1e308 - 1e308 == -inf``), which is harmless: the true weight,
    ``exp(-2e308)``, is 0 anyway.

  Hence finite input never produces NaN, whatever its magnitude and whatever
  the temperature.  ``SoftmaxSteps.scaled`` (``x / T``) exists purely for
  display; it is never used to compute probabilities.
* **Log domain.**  ``log_softmax`` is ``shifted - log(sum(exp(shifted)))``,
  never ``log(softmax(x))``: the latter turns a tiny probability into
  ``log(0) == -inf`` (``log_softmax([1000, 0])`` is ``[0, -1000]``, not
  ``[0, -inf]``).  ``logsumexp`` is ``max + log(sum(exp(x - max)))``.
* **Working precision.**  float16 input is computed in float32 and the result
  is cast back to float16 (what deep-learning frameworks do: float16 has only
  ~3 significant digits and overflows above 65504).  float32 stays float32,
  float64 stays float64.  ``naive_softmax`` is the exception on purpose: it
  computes in the input's own dtype, so the app can show the real overflow.
* **Temperatures outside float32's range.**  For float32 (and float16)
  input, a ``T`` that is not a normal float32 (e.g. ``1e-50`` or ``1e50``)
  would round to 0 or inf and produce ``0/0`` or ``-inf/inf``; such a
  division is done in float64 and rounded back instead.
* **Same bits everywhere.**  softmax and log_softmax always reduce
  contiguous last-axis rows (logsumexp reduces along ``axis`` in place, as
  ``np.sum`` would), and :func:`softmax_steps` runs the very same float64 operations, so
  ``softmax_steps(row, T).probs`` equals the matching slice of
  ``softmax(X, axis=k, temperature=T)`` bit for bit, whatever ``k``.
* **Speed without other bits.**  softmax and log_softmax (and logsumexp,
  for large C-contiguous input along the last axis) process rows in blocks
  of about 512 KiB, each shifted, exponentiated, summed and divided in place in one
  work buffer (the output itself) while it sits in the core's L2 cache, so a
  large array crosses main memory once in and once out instead of once per
  step; the special-row handling is skipped when every row maximum is
  finite (checked on the maxima only).  The operations and their order are
  those of :func:`softmax_steps`, including the division by the sum (a
  multiplication by its reciprocal would round differently), so the blocks
  change the speed (about twice SciPy's throughput on 4096 x 8192 float32,
  ``bench/cpu_softmax.py``), not the results.
* **No warnings.**  All arithmetic runs under ``np.errstate(all="ignore")``
  and the special values are produced on purpose (see below), so no
  ``RuntimeWarning`` is ever emitted.

Special values (per row along ``axis``)
---------------------------------------
* ``-inf`` entries: softmax gives exactly ``0.0``, log_softmax ``-inf``.
* ``k >= 1`` entries of ``+inf`` and no NaN: softmax gives ``1/k`` to each
  ``+inf`` entry and exactly 0 elsewhere; log_softmax gives ``-log(k)`` and
  ``-inf``.
* only ``-inf`` entries, or any NaN: the whole row is NaN (both functions).

The ``+inf`` rule is the limit of softmax as those scores grow without bound
together.  Rows are independent: one bad row never spoils the others.

dtype rules
-----------
Lists, integer and bool input become float64.  float16/float32/float64 (and
longdouble) keep their dtype on output.  Complex, object, string and other
non-real dtypes raise ``TypeError``.  A 0-d input is treated as a one-element
vector (``axis`` is ignored) and the result has the input's shape.
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.typing import ArrayLike, NDArray

from compute import backends as _backends

__all__ = [
    "SoftmaxSteps",
    "check_temperature",
    "entropy",
    "log_softmax",
    "logsumexp",
    "naive_softmax",
    "perplexity",
    "softmax",
    "softmax_over_temperatures",
    "softmax_steps",
]

FloatArray = NDArray[np.floating[Any]]


# --------------------------------------------------------------------------
# validation and dtype helpers
# --------------------------------------------------------------------------
def check_temperature(t: float) -> float:
    """Validate a softmax temperature and return it as a Python ``float``.

    The temperature must be a finite real number strictly greater than 0.

    Raises:
        TypeError: ``t`` is not a real number (e.g. a string, ``None``, a
            complex number, a bool, or an array with more than one element).
        ValueError: ``t`` is NaN, infinite, zero or negative.  The message is
            ``"temperature must be finite and > 0, got <t>"``; the GUI shows
            it verbatim.
    """
    value: Any = t
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()  # -> Python bool / int / float / complex
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"temperature must be a real number, got {value!r} "
            f"({type(t).__name__})"
        )
    try:
        result = float(value)
    except OverflowError:  # e.g. an int like 10**400
        result = math.inf
    if not (math.isfinite(result) and result > 0.0):
        raise ValueError(f"temperature must be finite and > 0, got {value!r}")
    return result


def _as_float_array(x: ArrayLike) -> FloatArray:
    """``np.asarray`` plus the module's dtype policy (see module docstring)."""
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


# Rows are processed in blocks of about this many bytes, so that the shift,
# the exp, the sum and the division of a block all find it in the core's L2
# cache: the data goes through main memory once in and once out, instead of
# once per pass.  A row longer than this is one block on its own.
_BLOCK_BYTES = 1 << 19


def _block_rows(rows: FloatArray) -> int:
    """How many rows of ``rows`` (2-D, rows last) make one block."""
    return max(1, _BLOCK_BYTES // max(1, rows.shape[-1] * rows.dtype.itemsize))


def _prepare_rows(
    x: ArrayLike, axis: int
) -> tuple[FloatArray, bool, int, np.dtype[Any], tuple[int, ...]]:
    """:func:`_prepare` plus :func:`_rows_last`, as 2-D rows.

    Returns ``(rows, owned, axis, out_dtype, shape)``: ``rows`` is
    ``(-1, n)``, C-contiguous, in the working precision, and ``owned`` says
    whether it is a copy made here (float16 widened, ints converted, another
    axis moved last, a non-contiguous input gathered), which may then be
    overwritten with the result; otherwise it shares the caller's memory.
    """
    src = np.asarray(x)
    a, ax, out_dtype, shape = _prepare(src, axis)
    if ax == a.ndim - 1 and a.flags.c_contiguous:  # the common case, without moveaxis
        rows = a.reshape(-1 if a.size else math.prod(a.shape[:-1]), a.shape[-1])
    else:
        rows = _rows_last(a, ax)
        rows = rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1])
    return rows, not np.may_share_memory(rows, src), ax, out_dtype, shape


def _restore_rows(
    out: FloatArray, ax: int, out_dtype: np.dtype[Any], shape: tuple[int, ...]
) -> FloatArray:
    """:func:`_restore` for the 2-D rows of :func:`_prepare_rows`."""
    if ax == len(shape) - 1 or not shape:  # rows already lie along the last axis
        return out.reshape(shape).astype(out_dtype, copy=False)
    return _restore(out.reshape(_rows_shape(shape, ax)), ax, out_dtype, shape)


def _softmax_rows(rows: FloatArray, out: FloatArray, t: float) -> None:
    """``out[...] = softmax(rows, temperature=t)`` over the last axis, block by block.

    ``out`` may be ``rows``.  The same operations, in the same order, as
    :func:`softmax_steps` (shift, divide by ``t``, ``exp``, a pairwise sum
    of each contiguous row, divide by the sum), only in place.  Under errstate.
    """
    step = _block_rows(rows)
    for i in range(0, rows.shape[0], step):
        w = out[i : i + step]
        _shift_into(rows[i : i + step], w, t)
        np.exp(w, out=w)
        np.divide(w, w.sum(axis=-1, keepdims=True), out=w)


def _log_softmax_rows(rows: FloatArray, out: FloatArray, t: float) -> None:
    """``out[...] = log_softmax(rows, temperature=t)``, block by block (see above)."""
    step = _block_rows(rows)
    scratch = np.empty((min(step, rows.shape[0]), rows.shape[1]), dtype=rows.dtype)
    for i in range(0, rows.shape[0], step):
        w = out[i : i + step]
        _shift_into(rows[i : i + step], w, t)
        e = np.exp(w, out=scratch[: w.shape[0]])
        total = e.sum(axis=-1, keepdims=True)
        np.subtract(w, np.log(total, out=total), out=w)


def _logsumexp_rows(rows: FloatArray) -> FloatArray:
    """``logsumexp`` of each row of 2-D ``rows``, as ``(R, 1)``, block by block."""
    step = _block_rows(rows)
    scratch = np.empty((min(step, rows.shape[0]), rows.shape[1]), dtype=rows.dtype)
    out = np.empty((rows.shape[0], 1), dtype=rows.dtype)
    for i in range(0, rows.shape[0], step):
        block = rows[i : i + step]
        m = np.max(block, axis=-1, keepdims=True)
        # For a non-finite max shift by 0 instead: +inf rows then give
        # log(inf) = inf, all -inf rows log(0) = -inf, NaN rows NaN.
        m = np.where(np.isfinite(m), m, 0)
        e = np.subtract(block, m, out=scratch[: block.shape[0]])
        np.exp(e, out=e)
        np.add(np.log(e.sum(axis=-1, keepdims=True)), m, out=out[i : i + step])
    return out


# --------------------------------------------------------------------------
# dispatch to the CuPy backend (see compute.backends)
# --------------------------------------------------------------------------
def _rows_shape(shape: tuple[int, ...], ax: int) -> tuple[int, ...]:
    """``shape`` (a 0-d one as ``(1,)``) with axis ``ax`` moved last."""
    s = shape or (1,)
    return s[:ax] + s[ax + 1 :] + (s[ax],)


def _host_fn(op: str) -> Any:
    return {"softmax": _softmax_host, "log_softmax": _log_softmax_host, "logsumexp": _logsumexp_host}[op]


def _offload(op: str, x: ArrayLike, ax: int, *t: float) -> FloatArray:
    """Run ``op`` on the device for NumPy input (CuPy active, input large)."""
    arr = _as_float_array(x)  # its own float dtype: the kernels widen float16 themselves
    kwargs: dict[str, Any] = {"axis": ax} | ({"temperature": t[0]} if t else {})
    return _backends.run(op, [arr], kwargs, _host_fn(op))


def _on_device(op: str, x: Any, axis: int, *t: float) -> Any:
    """Run ``op`` on a CuPy array with NumPy's dtype, shape and axis rules.

    Bools and ints become float64 (on the device), non-real dtypes raise
    ``TypeError``, a 0-d array is a one-element vector, a bad ``axis``
    raises ``AxisError`` and an empty axis gives an empty (``-inf`` for
    logsumexp) result, all before any kernel runs.  The kernels (or, if
    they fail, NumPy) get a float array, a non-negative axis and the
    validated temperature; the result is a CuPy array.
    """
    kind = x.dtype.kind
    if kind in "biu":
        x = x.astype(np.float64)
    elif kind != "f":
        _as_float_array(np.empty(0, dtype=x.dtype))  # raises the NumPy path's TypeError
    if x.ndim == 0:
        out = _on_device(op, x.reshape(1), 0, *t)
        return out if op == "logsumexp" else out.reshape(())
    ax = normalize_axis_index(axis, x.ndim)
    if x.shape[ax] == 0:
        cp = importlib.import_module("cupy")
        if op == "logsumexp":
            return cp.full(x.shape[:ax] + x.shape[ax + 1 :], -np.inf, dtype=x.dtype)
        return cp.empty(x.shape, dtype=x.dtype)
    kwargs: dict[str, Any] = {"axis": ax} | ({"temperature": t[0]} if t else {})
    return _backends.run(op, [x], kwargs, _host_fn(op))


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def softmax(x: ArrayLike, axis: int = -1, temperature: float = 1.0) -> FloatArray:
    """Stable, max-shifted softmax of ``x`` along ``axis``.

    ``p_i = exp(z_i) / sum_j exp(z_j)`` with ``z = (x - max(x)) / temperature``
    (mathematically the same as ``x / temperature`` shifted by its max, but it
    cannot overflow; see the module docstring).

    Args:
        x: scores; array-like of any shape.  Lists/ints/bools become float64.
        axis: the axis to normalise over (default: last).  Ignored for 0-d.
        temperature: finite real > 0; small values sharpen, large flatten.

    Returns:
        An array of ``x``'s shape and float dtype.  float16 input is computed
        in float32 and rounded to float16 at the end; float32 and float64 are
        computed in their own precision.  The float64 path performs exactly
        the operations of :func:`softmax_steps`, so the two agree bit for bit.

    Special values (no warnings are emitted): ``-inf`` scores get exactly 0;
    if a row has ``k`` ``+inf`` scores they get ``1/k`` each and the rest 0;
    a row that is entirely ``-inf`` or contains NaN becomes all NaN.  Finite
    input of any magnitude never gives NaN and sums to 1 within rounding.

    Raises:
        TypeError: complex/object/non-numeric input, or non-real temperature.
        ValueError: bad temperature (see :func:`check_temperature`).
        numpy.exceptions.AxisError: ``axis`` out of range.
    """
    t = check_temperature(temperature)
    if _backends.is_device_array(x):
        return _on_device("softmax", x, axis, t)
    return _softmax_host(x, axis, t, offload=True)


def _rowwise_host(op: str, rows_fn: Any, x: ArrayLike, axis: int, temperature: float,
                  offload: bool) -> FloatArray:
    """``op`` (softmax or log_softmax) in NumPy, ``rows_fn`` writing each block of rows.

    ``temperature`` is already validated.  With ``offload``, a large enough
    input goes to the device when CuPy is the active backend (see
    :mod:`compute.backends`).
    """
    rows, owned, ax, out_dtype, shape = _prepare_rows(x, axis)
    if rows.shape[-1] == 0:
        return np.empty(shape, dtype=out_dtype)
    if offload and _backends.offload_wanted(rows.size):
        return _offload(op, x, ax, temperature)
    out = rows if owned else np.empty_like(rows)
    with np.errstate(all="ignore"):
        rows_fn(rows, out, temperature)
        return _restore_rows(out, ax, out_dtype, shape)


def _softmax_host(x: ArrayLike, axis: int, temperature: float, offload: bool = False) -> FloatArray:
    """:func:`softmax` in NumPy (see :func:`_rowwise_host`)."""
    return _rowwise_host("softmax", _softmax_rows, x, axis, temperature, offload)


def log_softmax(
    x: ArrayLike, axis: int = -1, temperature: float = 1.0
) -> FloatArray:
    """Stable log-softmax: ``z - log(sum(exp(z)))`` with ``z = (x - max)/T``.

    Computed entirely in the log domain, never as ``log(softmax(x))``, so very
    small probabilities keep their exact log (``log_softmax([1000, 0])`` is
    ``[0, -1000]``).  Same arguments, dtype rules and temperature validation
    as :func:`softmax`; the float64 path matches
    :attr:`SoftmaxSteps.log_probs` bit for bit.

    Special values (no warnings): ``-inf`` scores give ``-inf``; in a row with
    ``k`` ``+inf`` scores those give ``-log(k)`` and the rest ``-inf``; an
    all-``-inf`` row or a row containing NaN becomes all NaN.

    Note that float16 output saturates: a log-probability below -65504
    rounds to ``-inf`` when cast back to float16.
    """
    t = check_temperature(temperature)
    if _backends.is_device_array(x):
        return _on_device("log_softmax", x, axis, t)
    return _log_softmax_host(x, axis, t, offload=True)


def _log_softmax_host(x: ArrayLike, axis: int, temperature: float, offload: bool = False) -> FloatArray:
    """:func:`log_softmax` in NumPy (see :func:`_rowwise_host`)."""
    return _rowwise_host("log_softmax", _log_softmax_rows, x, axis, temperature, offload)


def logsumexp(x: ArrayLike, axis: int = -1) -> FloatArray:
    """Stable ``log(sum(exp(x)))`` along ``axis``: ``m + log(sum(exp(x - m)))``.

    Returns an ndarray with ``axis`` removed (a 0-d array for 1-d or 0-d
    input), like ``scipy.special.logsumexp(x, axis)``.  The dtype is ``x``'s
    float dtype (float16 is computed in float32; ints/lists give float64).

    Special values (no warnings): a row with ``+inf`` gives ``+inf``; an
    all-``-inf`` row gives ``-inf``; a row with NaN gives NaN; an empty axis
    gives ``-inf`` (the log of an empty sum).
    """
    if _backends.is_device_array(x):
        return _on_device("logsumexp", x, axis)
    return _logsumexp_host(x, axis, offload=True)


def _logsumexp_host(x: ArrayLike, axis: int, offload: bool = False) -> FloatArray:
    """:func:`logsumexp` in NumPy; see :func:`_softmax_host`."""
    a, ax, out_dtype, shape = _prepare(x, axis)
    if a.shape[ax] == 0:
        return np.full(a.shape[:ax] + a.shape[ax + 1 :], -np.inf, dtype=out_dtype)
    if offload and _backends.offload_wanted(a.size):
        return _offload("logsumexp", x, ax)
    with np.errstate(all="ignore"):
        if ax == a.ndim - 1 and a.flags.c_contiguous and a.nbytes > _BLOCK_BYTES:
            # large contiguous rows: block by block, the same bits as below
            out = _logsumexp_rows(a.reshape(math.prod(a.shape[:-1]), a.shape[-1]))
            return out.reshape(a.shape[:-1]).astype(out_dtype, copy=False)
        m = np.max(a, axis=ax, keepdims=True)
        # For a non-finite max shift by 0 instead: +inf rows then give
        # log(inf) = inf, all -inf rows log(0) = -inf, NaN rows NaN.
        m = np.where(np.isfinite(m), m, 0)
        out = np.log(np.exp(a - m).sum(axis=ax, keepdims=True)) + m
        return np.squeeze(out, axis=ax).astype(out_dtype, copy=False)


def naive_softmax(x: ArrayLike, axis: int = -1) -> FloatArray:
    """The textbook ``exp(x) / sum(exp(x))``, with no max shift.

    For teaching only.  It is computed in ``x``'s own dtype (float16 really
    in float16) so that overflow shows exactly as it would in naive code:
    ``naive_softmax(np.float32([100, 0]))`` is ``[nan, 0]`` because
    ``exp(100)`` overflows float32 and ``inf / inf`` is NaN; for float16 the
    same happens from ``exp(12)`` (> 65504) on.  The resulting inf/NaN *is*
    the answer, so floating-point warnings are suppressed, not raised.
    Lists/ints/bools become float64; a 0-d input is a one-element vector.
    """
    arr = _as_float_array(x)
    shape = arr.shape
    a = arr.reshape(1) if arr.ndim == 0 else arr
    ax = 0 if arr.ndim == 0 else normalize_axis_index(axis, a.ndim)
    with np.errstate(all="ignore"):
        e = np.exp(a)
        return (e / e.sum(axis=ax, keepdims=True)).reshape(shape)


def _entropy_working(p: ArrayLike, axis: int) -> tuple[FloatArray, np.dtype[Any]]:
    a, ax, out_dtype, _ = _prepare(p, axis)
    with np.errstate(all="ignore"):
        # scipy.special.entr: -p log p for p > 0, 0 for p == 0 (the limit),
        # -inf for p < 0 (not a probability), NaN stays NaN.
        terms = np.where(a > 0, -a * np.log(a), np.where(a == 0, 0.0, -np.inf))
        terms = np.where(np.isnan(a), np.nan, terms).astype(a.dtype, copy=False)
        return terms.sum(axis=ax), out_dtype


def entropy(p: ArrayLike, axis: int = -1) -> FloatArray:
    """Shannon entropy in nats, ``-sum(p * log(p))`` along ``axis``.

    ``0 * log(0)`` is taken as 0 (its limit) without any warning.  ``p`` is
    used as given (not renormalised); negative entries make the result
    ``-inf``, NaN makes it NaN.  Returns an ndarray with ``axis`` removed in
    ``p``'s float dtype (float16 computed in float32).  For a probability
    vector of length ``n`` the result lies in ``[0, log(n)]``.
    """
    h, out_dtype = _entropy_working(p, axis)
    return np.asarray(h).astype(out_dtype, copy=False)


def perplexity(p: ArrayLike, axis: int = -1) -> FloatArray:
    """Perplexity ``exp(entropy(p))``: the "effective number of choices".

    1 for a one-hot distribution, ``n`` for the uniform one over ``n``.  Same
    conventions and dtype rules as :func:`entropy`.
    """
    h, out_dtype = _entropy_working(p, axis)
    with np.errstate(all="ignore"):
        return np.asarray(np.exp(h)).astype(out_dtype, copy=False)


@dataclass(frozen=True, eq=False)
class SoftmaxSteps:
    """Every intermediate of softmax for one row, for display and export.

    All arrays are read-only float64 arrays of the row's length.

    Attributes:
        scores: the input scores ``s`` (as float64).
        temperature: the validated temperature ``T``.
        scaled: ``s / T``.  Display only: it may overflow to ``±inf`` for
            huge scores and tiny ``T``; nothing below is computed from it.
        shifted: ``(s - max(s)) / T`` (equal to ``scaled - max(scaled)`` in
            exact arithmetic).  Its max is exactly 0 for finite rows.
        exps: ``exp(shifted)``, each in ``[0, 1]`` for finite rows.
        total: ``sum(exps)`` as a Python float (``>= 1`` for finite rows).
        probs: ``exps / total``; bit-identical to ``softmax(s, temperature=T)``
            on float64 input.
        log_probs: ``shifted - log(total)``; bit-identical to
            ``log_softmax(s, temperature=T)`` on float64 input.

    Special values follow :func:`softmax`, and the steps show why:

    * ``-inf`` scores: ``shifted = -inf``, ``exps = 0``, ``probs = 0``,
      ``log_probs = -inf``.
    * ``k`` scores of ``+inf`` (no NaN): ``shifted`` is the limit, 0 on the
      ``+inf`` entries and ``-inf`` elsewhere; ``exps`` is 1/0, ``total`` is
      ``k``, ``probs`` is ``1/k`` / 0, ``log_probs`` is ``-log(k)`` / ``-inf``.
    * all ``-inf``: ``shifted = -inf``, ``exps = 0``, ``total = 0.0``, and
      ``probs``/``log_probs`` are NaN (``0/0``: nothing to normalise).
    * any NaN: the max is undefined, so ``shifted``, ``exps``, ``total``,
      ``probs`` and ``log_probs`` are all NaN.
    """

    scores: NDArray[np.float64]
    temperature: float
    scaled: NDArray[np.float64]
    shifted: NDArray[np.float64]
    exps: NDArray[np.float64]
    total: float
    probs: NDArray[np.float64]
    log_probs: NDArray[np.float64]


def softmax_over_temperatures(x: ArrayLike, temperatures: ArrayLike) -> FloatArray:
    """``softmax(x, temperature=t)`` for every ``t``, as rows of one array.

    ``x`` is one 1-D row; the result has shape ``(len(temperatures), len(x))``
    and is bit for bit the same as one :func:`softmax` call per temperature.
    For finite ``x`` it is one 2-D pass: :func:`softmax` shifts by the row
    maximum and then divides by T, so the rows ``(x - max x) / t`` at
    temperature 1 undergo exactly the same float operations (their maximum
    is already 0, and T = 1 divides nothing).  Rows holding ``inf`` or NaN
    take one call per temperature, so the special-value rules apply as usual.
    """
    a = _as_float_array(x)
    ts = np.asarray(temperatures, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"softmax_over_temperatures takes one 1-D row, got shape {a.shape}")
    for t in ts:
        check_temperature(float(t))
    if a.size and a.dtype != np.float16 and np.all(np.isfinite(a)):  # float16 works in float32
        with np.errstate(all="ignore"):
            rows = (a - a.max())[None, :] / ts[:, None].astype(a.dtype)
        return softmax(rows)
    return np.array([softmax(a, temperature=float(t)) for t in ts], dtype=a.dtype).reshape(len(ts), a.size)


def softmax_steps(scores: ArrayLike, temperature: float = 1.0) -> SoftmaxSteps:
    """Compute softmax of one 1-d row of scores, keeping every step.

    Always works in float64 (whatever the input dtype) and uses exactly the
    same operations as the float64 path of :func:`softmax` and
    :func:`log_softmax`, so ``probs`` and ``log_probs`` equal them bit for
    bit.  See :class:`SoftmaxSteps` for what each field holds, including for
    ``±inf``/NaN scores.  No warnings are emitted.

    Raises:
        ValueError: ``scores`` is not 1-d or is empty, or bad temperature.
        TypeError: complex/object/non-numeric scores, non-real temperature.
    """
    t = check_temperature(temperature)
    s = _as_float_array(scores).astype(np.float64)  # always a fresh copy
    if s.ndim != 1:
        raise ValueError(f"scores must be a 1-d row, got shape {s.shape}")
    if s.size == 0:
        raise ValueError("scores must not be empty")
    with np.errstate(all="ignore"):
        scaled = s / t
        shifted = _shifted(s, 0, t)
        exps = np.exp(shifted)
        sums = exps.sum(axis=0, keepdims=True)  # same reduction as softmax()
        probs = exps / sums
        log_probs = shifted - np.log(sums)
    arrays = (s, scaled, shifted, exps, probs, log_probs)
    for arr in arrays:
        arr.flags.writeable = False
    return SoftmaxSteps(
        scores=s,
        temperature=t,
        scaled=scaled,
        shifted=shifted,
        exps=exps,
        total=float(sums[0]),
        probs=probs,
        log_probs=log_probs,
    )
