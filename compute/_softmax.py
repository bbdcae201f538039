"""Numerically careful softmax, log_softmax and logsumexp, in plain NumPy.

The kernels behind every number Softmax Lab shows or exports.  No Qt, no
SciPy, and CuPy is never imported here: :func:`softmax`, :func:`log_softmax`
and :func:`logsumexp` hand CuPy arrays, and large NumPy arrays while CuPy is
the active backend, to :mod:`compute.backends`; everything below describes
the NumPy path, which every smaller input takes whatever the backend.

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
    (``-1e308 - 1e308 == -inf``): harmless for ``T <= 1`` (the true weight,
    ``exp(-2e308 / T)``, is 0 anyway), but for ``T > 1`` the quotient can be
    finite, so such entries are recomputed from halves (*overflowing shift*
    in compute's special values).

  Hence finite input never produces NaN, whatever its magnitude and whatever
  the temperature.  ``SoftmaxSteps.scaled`` (``x / T``) exists purely for
  display; it is never used to compute probabilities.
* **Log domain.**  ``log_softmax`` is ``shifted - log(sum(exp(shifted)))``,
  never ``log(softmax(x))``: the latter turns a tiny probability into
  ``log(0) == -inf`` (``log_softmax([1000, 0])`` is ``[0, -1000]``, not
  ``[0, -inf]``).  ``logsumexp`` is ``max + log(sum(exp(x - max)))``,
  written ``max + log1p(s)`` (``s`` the sum without one maximum's
  ``exp(0) = 1``; ``log(1 + s)`` once ``s >= 1``) so that a rest below the
  precision survives (as in SciPy).
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
  finite (checked on the maxima only).  Arrays of 1 MiB or more are split
  over every usable core (``compute._pool``; NumPy releases the GIL inside
  its loops), the blocks then handed to whichever thread is free.  The
  operations and their order are those of :func:`softmax_steps`, including
  the division by the sum (a multiplication by its reciprocal would round
  differently), and rows are independent, so neither the blocks nor the
  threads change a bit, only the speed (``bench/cpu_softmax.py``; the
  exponential is most of the time, so on one thread the gain over SciPy
  is what its temporaries cost it, and the rest needs idle cores).
* **No warnings.**  All arithmetic runs under ``np.errstate(all="ignore")``
  and the special values are produced on purpose, so no ``RuntimeWarning``
  is ever emitted.

Special values and dtype rules: see compute's special values and dtype rules
(the :mod:`compute` package docstring).
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.typing import ArrayLike

from compute import backends as _backends
from compute._checks import check_temperature
from compute._pool import max_threads, run_chunks
from compute._rows import (
    FloatArray,
    _as_float_array,
    _as_float_device,
    _exp_rest,
    _flat_argmax,
    _log1p_rest,
    _prepare,
    _refuse_masked,
    _restore,
    _rows_last,
    _shift_into,
)

__all__ = ["log_softmax", "logsumexp", "naive_softmax", "softmax"]

# Rows are processed in blocks of about this many bytes, so that the shift,
# the exp, the sum and the division of a block all find it in the core's L2
# cache: the data goes through main memory once in and once out, instead of
# once per pass.  A row longer than this is one block on its own.
_BLOCK_BYTES = 1 << 19

# Arrays of at least this many bytes are split over the cores (compute's
# _pool module; rows are independent, so the bits do not change).  Below it,
# handing blocks to another thread costs more than it can save.
_SPLIT_BYTES = 1 << 22

# A split array's blocks shrink towards its end ("guided" scheduling: each
# about 1/(this x threads) of what is left, down to _MIN_BLOCK_BYTES), so
# that the threads finish together even when one of them runs slowly.
_BLOCKS_PER_THREAD = 2
_MIN_BLOCK_BYTES = 1 << 17


def _bounds(r: int, row_bytes: int, k: int) -> list[int]:
    """Block boundaries ``[0, ..., r]`` for ``r`` rows of ``row_bytes`` on ``k`` threads."""
    step = max(1, _BLOCK_BYTES // row_bytes)
    if k <= 1:
        return [*range(0, r, step), r]
    least = min(step, -(-_MIN_BLOCK_BYTES // row_bytes))
    out = [0]
    while out[-1] < r:
        left = r - out[-1]
        out.append(out[-1] + min(left, step, max(least, -(-left // (_BLOCKS_PER_THREAD * k)))))
    return out


def _blocks(rows: FloatArray, each: Any, scratch: bool = False) -> None:
    """``each(i, j, s)`` for every block ``rows[i:j]`` of 2-D ``rows``, on threads if large enough.

    ``s`` is a per-thread scratch buffer at least a block's shape (with
    ``scratch``) or None.  Blocks are :data:`_BLOCK_BYTES` (one row if a row
    is longer); arrays of :data:`_SPLIT_BYTES` or more run on
    :func:`run_chunks` over every usable core, their last blocks smaller.
    """
    r, row_bytes = rows.shape[0], max(1, rows.shape[-1] * rows.dtype.itemsize)
    if r * row_bytes <= _BLOCK_BYTES and r * row_bytes < _SPLIT_BYTES:  # one block, this thread: no schedule
        return each(0, r, np.empty_like(rows) if scratch else None)
    k = 1 if r * row_bytes < _SPLIT_BYTES else max_threads()
    bounds = _bounds(r, row_bytes, k)
    n = len(bounds) - 1
    most = max(1, min(r, _BLOCK_BYTES // row_bytes))

    def start() -> Any:
        s = np.empty((most, rows.shape[1]), dtype=rows.dtype) if scratch else None
        return lambda b: each(bounds[b], bounds[b + 1], s)

    run_chunks(start, n, min(k, n))


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
    _refuse_masked(x)
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
    of each contiguous row, divide by the sum), only in place (see
    :func:`_blocks`).  Under errstate.
    """
    def each(i: int, j: int, _: None) -> None:
        w = out[i:j]
        _shift_into(rows[i:j], w, t)
        np.exp(w, out=w)
        np.divide(w, np.add.reduce(w, axis=-1, keepdims=True), out=w)

    _blocks(rows, each)


def _log_softmax_rows(rows: FloatArray, out: FloatArray, t: float) -> None:
    """``out[...] = log_softmax(rows, temperature=t)``, block by block (see above)."""
    def each(i: int, j: int, scratch: FloatArray) -> None:
        w = out[i:j]
        _shift_into(rows[i:j], w, t)
        total = np.add.reduce(np.exp(w, out=scratch[: j - i]), axis=-1, keepdims=True)
        np.subtract(w, np.log(total, out=total), out=w)

    _blocks(rows, each, scratch=True)


def _logsumexp_rows(rows: FloatArray) -> FloatArray:
    """``logsumexp`` of each row of 2-D ``rows``, as ``(R, 1)``, block by block.

    Each block leaves its maxima and rests; one :func:`_lse_finish` over all
    rows turns them into the result (the operations of the unblocked path).
    """
    m = np.empty((rows.shape[0], 1), dtype=rows.dtype)
    rest = np.empty_like(m)

    def each(i: int, j: int, scratch: FloatArray) -> None:
        m[i:j], rest[i:j] = _max_and_rest(rows[i:j], 1, scratch[: j - i])

    _blocks(rows, each, scratch=True)
    return _lse_finish(m, rest)


def _max_and_rest(a: FloatArray, ax: int, scratch: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
    """The maximum ``m`` along ``ax`` (kept; its first index) and the rest ``s``
    of ``sum(exp(a - m))`` without that entry's 1 (see :func:`_exp_rest`)."""
    if a.ndim == 2 and ax == 1 and a.flags.c_contiguous:  # a block of rows
        top = _flat_argmax(a)  # argmax is as fast as max, and finds NaN first
        m = a.reshape(-1)[top][:, None]
    else:
        top = np.argmax(a, axis=ax, keepdims=True)
        m = np.take_along_axis(a, top, axis=ax)
    z = np.subtract(a, np.where(np.isfinite(m), m, 0), out=scratch)
    return m, _exp_rest(z, ax, scratch=z, top=top)


def _lse_finish(m: FloatArray, rest: FloatArray) -> FloatArray:
    """``m + log(1 + rest)`` (:func:`_log1p_rest`); a non-finite ``m`` is the
    answer itself: ``+inf`` rows give ``+inf``, all ``-inf`` rows ``-inf``,
    NaN rows NaN.  Under errstate."""
    return np.where(np.isfinite(m), _log1p_rest(rest) + m, m)


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
    x = _as_float_device(x)
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

    Parameters
    ----------
    x
        scores; array-like of any shape.  Lists/ints/bools become float64.
    axis
        the axis to normalise over (default: last).  Ignored for 0-d.
    temperature
        finite real > 0; small values sharpen, large flatten.

    Returns
    -------
    ndarray
        An array of ``x``'s shape and float dtype.  float16 input is computed
        in float32 and rounded to float16 at the end; float32 and float64 are
        computed in their own precision.  The float64 path performs exactly
        the operations of :func:`softmax_steps`, so the two agree bit for bit.

    Special values: see compute's special values.  Finite input of any
    magnitude never gives NaN and sums to 1 within rounding.

    Raises
    ------
    TypeError
        complex/object/non-numeric input, or non-real temperature.
    ValueError
        bad temperature (see :func:`check_temperature`).
    numpy.exceptions.AxisError
        ``axis`` out of range.
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

    Special values: see compute's special values (the log of softmax's).

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

    Computed as ``m + log1p(s)``: one entry equal to the maximum ``m``
    (its ``exp(0) = 1``) is taken out, the others' ``exp(x - m)`` sum to
    ``s`` (SciPy's way since its gh-18295), so ``logsumexp([0, -40])`` is
    ``4.248e-18`` where ``log(1 + s)`` would round to 0 (for ``s >= 1``,
    ``log(1 + s)``: exactly ``log(k)`` for ``k`` equal scores).

    Returns an ndarray with ``axis`` removed (a 0-d array for 1-d or 0-d
    input), like ``scipy.special.logsumexp(x, axis)``.  The dtype is ``x``'s
    float dtype (float16 is computed in float32; ints/lists give float64).

    Special values: see compute's special values (an empty axis gives
    ``-inf``, the log of an empty sum).
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
        return np.squeeze(_lse_finish(*_max_and_rest(a, ax)), axis=ax).astype(out_dtype, copy=False)


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


