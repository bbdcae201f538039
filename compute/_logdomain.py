"""LogSumExp as a smooth maximum: the temperature-scaled LSE, the soft-min,
and the check that its gradient is softmax.

Plain NumPy; compute's dtype rules; no warnings.

The smooth maximum
------------------
``smooth_max(x, T) = T * LSE(x / T) = T * log(sum_i exp(x_i / T))`` obeys

    ``max(x) <= T * LSE(x / T) <= max(x) + T * log(K)``  (``K = len(x)``),

so it tends to ``max(x)`` as ``T -> 0`` and is ``LSE(x)`` at ``T = 1``.  It
is computed as ``m + T * log(sum(exp((x - m) / T)))`` with ``m = max(x)``:
the shift and division are exactly those of :func:`compute.softmax`, so
huge scores and tiny temperatures never overflow, and the lower bound holds
exactly in floating point (the max entry contributes ``exp(0) == 1``, so
the log is ``>= 0``).  ``smooth_min(x, T) = -smooth_max(-x, T)`` is the
soft-min, with ``min(x) - T log K <= smooth_min <= min(x)``.  (Not to be
confused with ``torch.nn.Softmin``, which is the distribution
``softmax(-x)``.)

Its gradient with respect to ``x`` is ``softmax(x / T)`` (the ``1/T`` of the
inner division cancels the outer ``T``); :func:`lse_gradient_check` puts the
two side by side, the gradient taken by central finite differences.

Special values: see compute's special values (those of logsumexp).  The product ``T * log(...)`` and the final sum are formed in at least
float64 and rounded once, so a temperature outside float32's range cannot
turn ``0 * inf`` into NaN.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _check_positive, check_temperature
from compute._rows import (
    FloatArray,
    _as_float_array,
    _exp_rest,
    _log1p_rest,
    _prepare,
    _rows_last,
    _shifted,
    _shifted_curve,
)
from compute._softmax import softmax

__all__ = [
    "lse_gradient_check",
    "smooth_max",
    "smooth_max_curve",
    "smooth_min",
    "smooth_min_curve",
]

#: The finite-difference step of :func:`lse_gradient_check`, relative to
#: ``max(T, |x_i - max(x)|)``: it balances the truncation error (step
#: squared) against rounding (eps / step); both are about 1e-10 then.
GRADIENT_STEP = 1e-5


def _smooth_max_rows(rows: FloatArray, shifted: FloatArray, t) -> FloatArray:
    """``max(rows) + t * log(sum(exp(shifted)))`` per last-axis row.

    ``shifted`` is ``_shifted(rows, -1, t)`` (or the same numbers built in
    one 2-D pass); ``t`` is a float or an array broadcasting against the
    row axis removed.  Returns at least float64; under ``errstate``.
    """
    calc = np.promote_types(rows.dtype, np.float64)
    m = np.max(rows, axis=-1).astype(calc)
    lse = _log1p_rest(_exp_rest(shifted))[..., 0].astype(calc)  # log1p of the rest, as logsumexp
    # all -inf rows: m = -inf and lse = -inf; -inf + t * -inf is -inf already,
    # but say so: it must never become NaN.
    return np.where(m == -np.inf, -np.inf, m + t * lse)


def smooth_max(x: ArrayLike, temperature: float = 1.0, axis: int = -1) -> FloatArray:
    """``T * LSE(x / T)``, the smooth maximum, along ``axis``.

    Between ``max(x)`` (its limit as ``T -> 0``) and ``max(x) + T * log(K)``
    (all scores equal).  At ``T = 1`` it is ``logsumexp(x)``.  Returns an
    ndarray with ``axis`` removed (0-d for a 1-d row) in ``x``'s float dtype.

    Raises
    ------
    TypeError, ValueError
        bad input or temperature, as :func:`compute.softmax`.
    """
    t = check_temperature(temperature)
    a, ax, out_dtype, _shape = _prepare(x, axis)
    if a.shape[ax] == 0:
        return np.full(a.shape[:ax] + a.shape[ax + 1 :], -np.inf, dtype=out_dtype)
    with np.errstate(all="ignore"):
        rows = _rows_last(a, ax)
        out = _smooth_max_rows(rows, _shifted(rows, -1, t), t)
        return np.asarray(out.astype(out_dtype, copy=False))


def smooth_min(x: ArrayLike, temperature: float = 1.0, axis: int = -1) -> FloatArray:
    """The soft-min ``-T * LSE(-x / T) = -smooth_max(-x, T)`` along ``axis``.

    Between ``min(x) - T * log(K)`` and ``min(x)`` (its limit as ``T -> 0``).
    Special values mirror :func:`smooth_max`'s (see compute's special
    values): a ``-inf`` entry gives ``-inf``, ``+inf`` entries drop out.
    """
    a = _as_float_array(x)  # negation is exact in every dtype: float16 stays float16
    return np.negative(smooth_max(np.negative(a), temperature, axis))


def smooth_max_curve(x: ArrayLike, temperatures: Iterable[float]) -> FloatArray:
    """``smooth_max(x, T)`` for every ``T`` in ``temperatures``, for one row ``x``.

    Returns a 1-d array, one value per temperature, with the same bits as
    ``[smooth_max(x, T) for T in temperatures]``.  A finite float64 row is
    done in one 2-D pass: the rows ``(x - max) / T`` are exactly the numbers
    :func:`smooth_max` exponentiates for each ``T``.  Other rows (non-finite
    entries, other dtypes) fall back to one call per temperature.

    Raises
    ------
    ValueError
        ``x`` is not 1-d, or a temperature is not finite and > 0.
    """
    ts = np.array([check_temperature(t) for t in temperatures], dtype=np.float64)
    a, _, out_dtype, _ = _prepare(x, -1)
    if a.ndim != 1:
        raise ValueError(f"smooth_max_curve takes one row (1-d), got shape {a.shape}")
    if a.dtype == np.float64 and a.size and np.all(np.isfinite(a)) and ts.size:
        with np.errstate(all="ignore"):
            shifted = _shifted_curve(a, ts)  # the rows _shifted gives for each T, bit for bit
            return _smooth_max_rows(np.broadcast_to(a, shifted.shape), shifted, ts)
    # one call per temperature on the row as given: a float16 row must stay float16 (smooth_max's
    # overflow rules follow the input's dtype, not the float32 it is computed in)
    row = _as_float_array(x)
    with np.errstate(all="ignore"):  # float16 rounds past 65504 to inf, as smooth_max's own cast does
        return np.array([smooth_max(row, t) for t in ts], dtype=out_dtype).reshape(len(ts))


def smooth_min_curve(x: ArrayLike, temperatures: Iterable[float]) -> FloatArray:
    """``smooth_min(x, T)`` for every ``T`` in ``temperatures`` (see :func:`smooth_max_curve`)."""
    a = _as_float_array(x)
    return np.negative(smooth_max_curve(np.negative(a), temperatures))


def lse_gradient_check(
    x: ArrayLike, temperature: float = 1.0, step: float = GRADIENT_STEP
) -> tuple[FloatArray, FloatArray]:
    """``softmax(x / T)`` beside the finite-difference gradient of ``T * LSE(x / T)``.

    Returns ``(probs, fd)``, two float64 arrays of ``x``'s length: ``probs``
    is :func:`compute.softmax` and ``fd[i]`` the central difference
    ``(f(x + h e_i) - f(x - h e_i)) / (2h)`` of ``f = smooth_max(., T)``.
    They agree to about 1e-10 for finite rows.

    How the differences are taken (in float64, whatever ``x``'s dtype):

    * ``f`` is evaluated on ``x - max(x)``, which has the same gradient but
      values in ``[0, T log K]``, so big scores do not swamp the difference.
    * the step for entry ``i`` is ``h_i = step * max(T, |x_i - max(x)|)``;
      the divisor is the step really taken, ``(x_i + h_i) - (x_i - h_i)``.
    * all ``2 K`` perturbed rows go through one :func:`smooth_max` call.

    ``fd`` is NaN where no difference can be taken: a non-finite ``x_i`` (it
    cannot be perturbed), or a row holding ``+inf`` or NaN (``f`` is not
    finite).  ``probs`` follows softmax's special-value rules.

    Raises
    ------
    ValueError
        ``x`` is not 1-d, ``step`` is not finite and > 0, or a
        bad temperature.
    """
    t = check_temperature(temperature)
    step = _check_positive(step, "step")
    a, _, _, _ = _prepare(x, -1)
    if a.ndim != 1:
        raise ValueError(f"lse_gradient_check takes one row (1-d), got shape {a.shape}")
    a = a.astype(np.float64)
    probs = softmax(a, temperature=t)
    n = a.size
    if n == 0:
        return probs, np.empty(0)
    with np.errstate(all="ignore"):
        m = np.max(a)
        base = a - (m if np.isfinite(m) else 0.0)
        h = step * np.maximum(t, np.abs(base))
        up, down = base + h, base - h
        eye = np.eye(n, dtype=bool)
        rows = np.concatenate([np.where(eye, up, base), np.where(eye, down, base)])
        f = smooth_max(rows, temperature=t)
        fd = (f[:n] - f[n:]) / (up - down)
        fd = np.where(np.isfinite(a) & np.isfinite(fd), fd, np.nan)
    return probs, fd
