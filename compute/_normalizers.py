"""Other ways to turn scores into weights: linear, hardmax, sparsemax, entmax.

Plain NumPy; compute's dtype rules; no warnings.  Every function works row
by row along ``axis`` on contiguous last-axis rows; an empty ``axis`` gives
an empty result.

The functions
-------------
* :func:`linear_normalize`: ``x / sum(x)``.  Not a probability map: negative
  weights stay negative.  A row whose sum is 0 is NaN (``[1, -1]``), and so
  is a row holding ``±inf`` or NaN (no meaningful ratio).
* :func:`shifted_linear_normalize`: ``(x - min) / sum(x - min)``.  A row of
  equal scores has sum 0; we return the uniform ``1/n`` there (the limit is
  ambiguous, and uniform is the natural answer for a tie, as softmax gives).
  A row holding ``±inf`` or NaN is NaN.
* :func:`hardmax`: one-hot at the maximum; ``k`` tied maxima get ``1/k``
  each (``+inf`` entries are maxima).
* :func:`sparsemax` (Martins & Astudillo 2016): the Euclidean projection of
  ``x`` onto the probability simplex, by the exact sort algorithm.
* :func:`entmax` (Peters, Niculae & Martins 2019): ``alpha``-entmax,
  ``argmax_p p.z + H^T_alpha(p)`` with the Tsallis entropy
  ``H^T_alpha(p) = sum(p_j - p_j**alpha) / (alpha (alpha - 1))``.  Its
  solution is ``p_i = [(alpha - 1) z_i - tau]_+ ** (1 / (alpha - 1))`` with
  ``tau`` chosen so that ``sum(p) == 1``.  The factor ``(alpha - 1)`` on
  ``z`` is what makes ``alpha -> 1`` approach softmax and ``alpha == 2``
  equal sparsemax (``p = [z - tau]_+``).  ``alpha == 1`` calls
  :func:`compute.softmax`, ``alpha == 2`` calls :func:`sparsemax`,
  ``alpha == 1.5`` uses the exact sort algorithm of the paper (``entmax15``;
  its output is divided by its sum, which only removes rounding, so that
  ``k`` ties get exactly ``1/k``) and every other ``alpha`` bisects on
  ``tau`` (Blondel et al. 2019, ``entmax_bisect``).
* :func:`sigmoid`: the elementwise logistic ``1 / (1 + exp(-x))``.

Numerical choices
-----------------
* **Max shift and clipping (sparsemax, entmax).**  Both are invariant to
  adding a constant, so rows are first shifted by their max exactly like
  softmax (``compute._rows._shifted``, which also gives the ``+inf``
  rule below).  The threshold then satisfies ``tau >= -1`` (the winner gets
  at most 1), so an entry with ``(alpha - 1) (z_i - max) <= -1`` can never be
  in the support; such entries are clipped to ``-2``.  This changes no
  output, but keeps every intermediate in ``[-2, 0]``: no overflow for huge
  scores (``±1e308``), no ``inf - inf``, no cancellation in entmax15's
  running variance.
* **Power-of-two scaling (linear, shifted linear).**  Both are invariant to
  scaling, so each row is scaled with ``ldexp`` to have its largest
  magnitude in ``[0.5, 1)`` before summing.  Scaling by a power of two is
  exact, so the result has the bits of the plain formula whenever that does
  not overflow, and finite rows like ``[1e308, 1e308]`` still give
  ``[0.5, 0.5]`` instead of ``0`` (from ``x / inf``).
* **entmax bisection** runs in float64 whatever the input dtype (float32 has
  too few digits for a ``1e-6`` tolerance on long rows) and the result is
  cast back.  For ``1 < alpha <= 2`` it bisects on ``u = tau + 1`` and
  evaluates ``p_i = exp(log1p((alpha-1)(z_i - max) - u) / (alpha - 1))``,
  which stays accurate as ``alpha -> 1`` (where ``1 / (alpha - 1)`` is
  huge); for ``alpha > 2`` it bisects on ``tau`` itself, which has full
  relative precision as ``tau -> 0``.  It stops only when the bracket cannot
  usefully shrink any more (typically 50 to 80 halvings, a few milliseconds
  for a row of 1000), keeps the bracket end whose sum is closer to 1 (then
  ``|sum(p) - 1|`` is far below ``1e-6``) and renormalises exactly.  Entries
  outside the support are exactly 0.  For extreme ``alpha`` float64 cannot
  represent the answer (``p_i ** (alpha - 1)`` underflows once
  ``(alpha - 1) log(1 / p_i) > 700``, e.g. ``alpha = 1000``) and the result
  is only approximate.  For ``alpha > 2`` a small ``p_i`` is intrinsically
  ill-conditioned (``p_i ** (alpha - 1)`` is what the scores fix to ~1e-16),
  so expect ~1e-11 rather than 1e-16 agreement with other implementations.
* **sigmoid** uses ``e = exp(-|x|) <= 1``: ``1 / (1 + e)`` for ``x >= 0`` and
  ``e / (1 + e)`` for ``x < 0``, so nothing overflows
  (``sigmoid(-1000) == 0.0``, ``sigmoid(1000) == 1.0``).

sparsemax, entmax and hardmax follow compute's special values.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _real
from compute._rows import FloatArray, _prepare, _restore, _rows_last, _shifted
from compute._softmax import softmax

__all__ = [
    "entmax",
    "hardmax",
    "linear_normalize",
    "shifted_linear_normalize",
    "sigmoid",
    "sparsemax",
]

# Entries this far below the max (after multiplying by alpha - 1) are
# clipped: tau >= -1, so anything <= -1 is outside the support anyway.
_CLIP = -2.0
# Safety cap for the bisection; float64 brackets exhaust long before
# (about 55 halvings for tau near -1, at most ~1130 for tau near 0).
_BISECT_MAX_ITER = 1200


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _rowwise(fn: Callable[[FloatArray], FloatArray], x: ArrayLike, axis: int) -> FloatArray:
    """Apply ``fn`` to the contiguous last-axis rows of ``x`` (working dtype).

    ``fn`` gets an array of shape ``(..., n)`` with ``n >= 1`` and returns one
    of the same shape; it runs under ``np.errstate(all="ignore")``.  The
    result is put back along ``axis`` in ``x``'s float dtype and shape.
    """
    a, ax, out_dtype, shape = _prepare(x, axis)
    if a.shape[ax] == 0:
        return np.empty(shape, dtype=out_dtype)
    with np.errstate(all="ignore"):
        return _restore(fn(_rows_last(a, ax)), ax, out_dtype, shape)


def _bad_rows(r: FloatArray) -> np.ndarray:
    """Rows (keepdims) that are NaN for the max-based maps: NaN or all ``-inf``."""
    m = np.max(r, axis=-1, keepdims=True)
    return np.isnan(m) | (m == -np.inf)


def _scale_rows(r: FloatArray) -> FloatArray:
    """``r`` scaled per row by a power of two so that ``max|r|`` is in [0.5, 1).

    Exact unless an entry drops into the subnormal range (then it is tiny
    next to the row's largest entry anyway).  Rows of zeros and rows with a
    non-finite entry are left as they are.
    """
    m = np.max(np.abs(r), axis=-1, keepdims=True)
    _, e = np.frexp(np.where(np.isfinite(m), m, 0))
    return np.ldexp(r, -e)  # ldexp cannot overflow in an intermediate 2**-e


def _check_alpha(alpha: float) -> float:
    """Validate entmax's ``alpha`` (real, finite, ``>= 1``); return a float."""
    result, plain = _real(alpha, "alpha")
    if not (math.isfinite(result) and result >= 1.0):
        raise ValueError(f"alpha must be finite and >= 1, got {plain!r}")
    return result


def _argmax_last_true(mask: np.ndarray) -> np.ndarray:
    """Per row (keepdims), the largest 1-based ``k`` with ``mask[..., k-1]`` (0 if none)."""
    k = np.arange(1, mask.shape[-1] + 1)
    return np.max(np.where(mask, k, 0), axis=-1, keepdims=True)


# --------------------------------------------------------------------------
# row kernels (shape (..., n), n >= 1, under errstate)
# --------------------------------------------------------------------------
def _linear_rows(r: FloatArray) -> FloatArray:
    s = _scale_rows(r)
    total = s.sum(axis=-1, keepdims=True)
    bad = ~np.isfinite(r).all(axis=-1, keepdims=True) | (total == 0)
    return np.where(bad, np.nan, s / total).astype(r.dtype, copy=False)


def _shifted_linear_rows(r: FloatArray) -> FloatArray:
    s = _scale_rows(r)
    d = s - s.min(axis=-1, keepdims=True)  # in [0, 2): cannot overflow
    total = d.sum(axis=-1, keepdims=True)  # 0 only if all entries are equal
    p = np.where(total > 0, d / total, 1.0 / r.shape[-1])
    bad = ~np.isfinite(r).all(axis=-1, keepdims=True)
    return np.where(bad, np.nan, p).astype(r.dtype, copy=False)


def _hardmax_rows(r: FloatArray) -> FloatArray:
    hit = (r == np.max(r, axis=-1, keepdims=True)).astype(r.dtype)
    p = hit / hit.sum(axis=-1, keepdims=True)
    return np.where(_bad_rows(r), np.nan, p).astype(r.dtype, copy=False)


def _sparsemax_rows(r: FloatArray) -> FloatArray:
    z = np.maximum(_shifted(r, -1, 1.0), _CLIP)  # max is 0; NaN rows stay NaN
    zs = np.flip(np.sort(z, axis=-1), axis=-1)  # descending
    cs = np.cumsum(zs, axis=-1)
    k = np.arange(1, r.shape[-1] + 1, dtype=r.dtype)
    kz = _argmax_last_true(1 + k * zs > cs)  # k(z) >= 1 on good rows (z_(1) = 0)
    kz_safe = np.maximum(kz, 1)
    tau = (np.take_along_axis(cs, kz_safe - 1, axis=-1) - 1) / kz_safe.astype(r.dtype)
    p = np.maximum(z - tau, 0)
    return np.where(_bad_rows(r), np.nan, p).astype(r.dtype, copy=False)


def _entmax15_rows(r: FloatArray) -> FloatArray:
    # Peters et al. 2019, Algorithm 2, on X = (alpha - 1) (z - max) = (z - max) / 2.
    x = np.maximum(_shifted(r, -1, 1.0) / 2, _CLIP)
    xs = np.flip(np.sort(x, axis=-1), axis=-1)
    rho = np.arange(1, r.shape[-1] + 1, dtype=r.dtype)
    mean = np.cumsum(xs, axis=-1) / rho
    mean_sq = np.cumsum(xs * xs, axis=-1) / rho
    ss = rho * (mean_sq - mean * mean)
    delta = (1 - ss) / rho
    tau = mean - np.sqrt(np.maximum(delta, 0))
    k = np.maximum(_argmax_last_true(tau <= xs), 1)  # k = 1 always qualifies
    tau_star = np.take_along_axis(tau, k - 1, axis=-1)
    p = np.maximum(x - tau_star, 0) ** 2
    p = p / p.sum(axis=-1, keepdims=True)  # removes rounding only: ties give exactly 1/k
    return np.where(_bad_rows(r), np.nan, p).astype(r.dtype, copy=False)


def _entmax_bisect_rows(r: FloatArray, alpha: float) -> FloatArray:
    calc = np.promote_types(r.dtype, np.float64)
    am1 = alpha - 1.0
    inv = 1.0 / am1
    n = r.shape[-1]
    x = np.maximum(am1 * _shifted(r.astype(calc), -1, 1.0), _CLIP)  # in [-2, 0]
    bad = _bad_rows(r)
    x = np.where(bad, 0.0, x)  # keep NaN out of the loop; those rows are NaN at the end

    if alpha <= 2.0:
        # variable u = tau + 1 in [0, 1 - n**-(alpha-1)]; accurate as alpha -> 1
        lo0, hi0 = 0.0, -math.expm1(-am1 * math.log(n))
        # |dp/du| <= 1/(alpha-1) here, so a bracket narrower than eps (alpha-1)
        # pins every p_i to about eps (without this, a root at u = 0, i.e. a
        # one-hot answer, would be halved down to the subnormals).
        width_tol = float(np.finfo(calc).eps) * am1 / 4

        def probs(v: np.ndarray) -> np.ndarray:
            return np.exp(inv * np.log1p(np.maximum(x - v, -1.0)))

    else:
        # variable tau in [-1, -n**-(alpha-1)]; full relative precision near 0
        lo0, hi0 = -1.0, -math.exp(-am1 * math.log(n))
        width_tol = 0.0  # p_max = (-tau)**(1/(alpha-1)) needs tau's relative precision

        def probs(v: np.ndarray) -> np.ndarray:
            return np.maximum(x - v, 0.0) ** inv

    # sum(probs(v)) decreases in v: f(lo) >= 0 >= f(hi).
    lo = np.full(x.shape[:-1] + (1,), lo0, dtype=calc)
    hi = np.full_like(lo, hi0)
    p_lo, p_hi = probs(lo), probs(hi)
    f_lo = p_lo.sum(axis=-1, keepdims=True) - 1
    f_hi = p_hi.sum(axis=-1, keepdims=True) - 1
    for _ in range(_BISECT_MAX_ITER):
        mid = lo + (hi - lo) / 2
        active = (mid > lo) & (mid < hi) & (hi - lo > width_tol)  # may still shrink
        if not active.any():
            break
        p = probs(mid)
        f = p.sum(axis=-1, keepdims=True) - 1
        up = active & (f >= 0)  # the root is at or above mid
        down = active & ~(f >= 0)
        lo, p_lo, f_lo = np.where(up, mid, lo), np.where(up, p, p_lo), np.where(up, f, f_lo)
        hi, p_hi, f_hi = np.where(down, mid, hi), np.where(down, p, p_hi), np.where(down, f, f_hi)
    # The end nearer the root, but never one where every p is 0 (f = -1): for a
    # huge alpha the root can lie closer to 0 than any float (alpha = 1e4 and
    # three tied scores: tau = -3**-9999), and p_lo at the smallest u or -tau
    # then already holds the answer's pattern (1/k on the k tied maxima).
    p = np.where((np.abs(f_lo) <= np.abs(f_hi)) | (f_hi == -1), p_lo, p_hi)
    p = p / p.sum(axis=-1, keepdims=True)
    return np.where(bad, np.nan, p).astype(r.dtype, copy=False)


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def linear_normalize(x: ArrayLike, axis: int = -1) -> FloatArray:
    """Divide by the sum: ``x / sum(x)`` along ``axis``.

    Weights are used as they are, so negative entries give negative weights
    (``[3, -1, 2] -> [0.75, -0.25, 0.5]``) and the result is a probability
    vector only for non-negative rows.  A row whose sum is 0 (``[1, -1]``,
    ``[0, 0]``) or that holds ``±inf``/NaN becomes all NaN, with no warning.
    Rows are scaled by a power of two first (exact), so finite rows never
    overflow; otherwise the result has the bits of plain ``x / x.sum()``.
    Same dtype rules as :func:`compute.softmax`.
    """
    return _rowwise(_linear_rows, x, axis)


def shifted_linear_normalize(x: ArrayLike, axis: int = -1) -> FloatArray:
    """Min-shifted linear normalisation: ``(x - min) / sum(x - min)``.

    Entries lie in ``[0, 1]`` and sum to 1; the minimum gets exactly 0.  A
    row of equal scores (sum 0, including a one-element row) gets the
    uniform ``1/n``: the formula is ``0/0`` there and its limit depends on
    the direction of approach, so we return the natural answer for a tie.
    A row holding ``±inf`` or NaN becomes all NaN.  No warnings; same dtype
    rules as :func:`compute.softmax`.
    """
    return _rowwise(_shifted_linear_rows, x, axis)


def hardmax(x: ArrayLike, axis: int = -1) -> FloatArray:
    """One-hot at the maximum along ``axis``; ``k`` tied maxima get ``1/k`` each.

    ``hardmax([1, 3, 3]) == [0, 0.5, 0.5]``.  It is the limit of
    ``softmax(x, temperature=T)`` as ``T -> 0``.  ``-inf`` entries are fine
    (they get 0), ``+inf`` entries are maxima; a row with NaN or only
    ``-inf`` becomes all NaN.
    """
    return _rowwise(_hardmax_rows, x, axis)


def sparsemax(x: ArrayLike, axis: int = -1) -> FloatArray:
    """Sparsemax (Martins & Astudillo 2016) along ``axis``.

    The Euclidean projection of the row ``z`` onto the probability simplex,
    ``argmin_p ||p - z||^2``, computed exactly by sorting: with ``z`` sorted
    in decreasing order, ``k(z) = max{k : 1 + k z_(k) > sum_{j<=k} z_(j)}``,
    ``tau = (sum_{j<=k(z)} z_(j) - 1) / k(z)`` and ``p = max(z - tau, 0)``.
    Entries may be exactly 0 (``sparsemax([10, 0, -10]) == [1, 0, 0]``).
    Invariant to adding a constant (the row is max-shifted first, so huge
    scores are fine).  Special values: see compute's special values.
    """
    return _rowwise(_sparsemax_rows, x, axis)


def entmax(x: ArrayLike, alpha: float, axis: int = -1) -> FloatArray:
    """``alpha``-entmax (Peters, Niculae & Martins 2019) along ``axis``.

    ``entmax(z, alpha) = argmax_p p.z + H^T_alpha(p)`` over the simplex, i.e.
    ``p_i = [(alpha - 1) z_i - tau]_+ ** (1 / (alpha - 1))`` with ``tau``
    such that ``sum(p) == 1``.  ``alpha == 1`` is exactly
    :func:`compute.softmax`, ``alpha == 2`` exactly :func:`sparsemax`,
    ``alpha == 1.5`` uses the exact sort algorithm (``entmax15``) and any
    other ``alpha`` bisection on ``tau`` (sums to 1 within ``1e-6`` before
    the final exact renormalisation; in practice within rounding).  For
    ``alpha > 1`` entries may be exactly 0.  Continuous in ``alpha``.

    Raises
    ------
    ValueError
        ``alpha`` is below 1, NaN or infinite (the message names
        the value).
    TypeError
        ``alpha`` is not a real number, or non-real ``x``.
    """
    a = _check_alpha(alpha)
    if a == 1.0:
        return softmax(x, axis=axis)
    if a == 2.0:
        return sparsemax(x, axis=axis)
    if a == 1.5:
        return _rowwise(_entmax15_rows, x, axis)
    return _rowwise(lambda r: _entmax_bisect_rows(r, a), x, axis)


def _entmax_bisect(x: ArrayLike, alpha: float, axis: int = -1) -> FloatArray:
    """entmax by bisection for any ``alpha > 1`` (also 1.5 and 2; for tests)."""
    a = _check_alpha(alpha)
    if a == 1.0:
        raise ValueError("the bisection needs alpha > 1, got 1.0")
    return _rowwise(lambda r: _entmax_bisect_rows(r, a), x, axis)


def sigmoid(x: ArrayLike) -> FloatArray:
    """The logistic function ``1 / (1 + exp(-x))``, elementwise.

    Stable for any magnitude, with no overflow warning: ``sigmoid(-1000) ==
    0.0``, ``sigmoid(1000) == 1.0``, ``sigmoid(0) == 0.5``; ``±inf`` give 1
    and 0, NaN stays NaN.  Returns an array of ``x``'s shape (0-d for a
    scalar) and float dtype (float16 computed in float32).
    """
    a, _, out_dtype, shape = _prepare(x, -1)
    with np.errstate(all="ignore"):
        e = np.exp(-np.abs(a))  # in [0, 1]: no overflow
        out = np.where(a >= 0, 1 / (1 + e), e / (1 + e))
        return out.astype(out_dtype, copy=False).reshape(shape)
