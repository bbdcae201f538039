"""Softmax of one row step by step, softmax over many temperatures, and entropy.

Plain NumPy; the float64 operations are those of :func:`compute.softmax`,
so :func:`softmax_steps` and :func:`softmax_over_temperatures` agree with it
bit for bit.  Special values: see compute's special values.  No warnings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import check_temperature
from compute._rows import FloatArray, _as_float_array, _prepare, _shifted, _shifted_curve
from compute._softmax import softmax

__all__ = ["SoftmaxSteps", "entropy", "perplexity", "softmax_over_temperatures", "softmax_steps"]


def _entropy_working(p: ArrayLike, axis: int) -> tuple[FloatArray, np.dtype[Any]]:
    a, ax, out_dtype, _ = _prepare(p, axis)
    with np.errstate(all="ignore"):
        # scipy.special.entr: -p log p for p > 0, 0 for p == 0 (the limit),
        # -inf for p < 0 (not a probability), NaN stays NaN.  In place, one
        # temporary: -(p * log p) is bit for bit (-p) * log p.
        terms = np.log(a)
        terms *= a
        np.negative(terms, out=terms)
        bad = ~(a > 0)  # zeros, negatives and NaN: fixed only where there are any
        if bad.any():
            terms = np.where(a == 0, 0.0, np.where(a < 0, -np.inf, terms)).astype(a.dtype, copy=False)
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

    Attributes
    ----------
    scores
        the input scores ``s`` (as float64).
    temperature
        the validated temperature ``T``.
    scaled
        ``s / T``.  Display only: it may overflow to ``±inf`` for
        huge scores and tiny ``T``; nothing below is computed from it.
    shifted
        ``(s - max(s)) / T`` (equal to ``scaled - max(scaled)`` in
        exact arithmetic).  Its max is exactly 0 for finite rows.
    exps
        ``exp(shifted)``, each in ``[0, 1]`` for finite rows.
    total
        ``sum(exps)`` as a Python float (``>= 1`` for finite rows).
    probs
        ``exps / total``; bit-identical to ``softmax(s, temperature=T)``
        on float64 input.
    log_probs
        ``shifted - log(total)``; bit-identical to
        ``log_softmax(s, temperature=T)`` on float64 input.

    compute's special values, step by step:

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
    maximum and then divides by T, so the rows ``(x - max x) / t``, each
    built by softmax's own shift rules (a ``t`` outside the row dtype's
    range divides in float64; an overflowing ``x - max`` is halved), at
    temperature 1 undergo exactly the same float operations (their maximum
    is already 0, and T = 1 divides nothing).  Rows holding ``inf`` or NaN
    take one call per temperature, so the special-value rules apply as usual.
    """
    a = _as_float_array(x)
    ts = np.asarray(temperatures, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"softmax_over_temperatures takes one 1-D row, got shape {a.shape}")
    if ts.ndim != 1 or not (np.isfinite(ts).all() and (ts > 0).all()):  # else each passes the check below
        for t in ts:
            check_temperature(float(t))  # the first bad one raises, naming it
    if a.size and a.dtype != np.float16 and np.all(np.isfinite(a)):  # float16 works in float32
        with np.errstate(all="ignore"):
            rows = _shifted_curve(a, ts)  # each row what softmax(x, temperature=t) exponentiates
        return softmax(rows)
    return np.array([softmax(a, temperature=float(t)) for t in ts], dtype=a.dtype).reshape(len(ts), a.size)


def softmax_steps(scores: ArrayLike, temperature: float = 1.0) -> SoftmaxSteps:
    """Compute softmax of one 1-d row of scores, keeping every step.

    Always works in float64 (whatever the input dtype) and uses exactly the
    same operations as the float64 path of :func:`softmax` and
    :func:`log_softmax`, so ``probs`` and ``log_probs`` equal them bit for
    bit.  See :class:`SoftmaxSteps` for what each field holds, including for
    ``±inf``/NaN scores.  No warnings are emitted.

    Raises
    ------
    ValueError
        ``scores`` is not 1-d or is empty, or bad temperature.
    TypeError
        complex/object/non-numeric scores, non-real temperature.
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
