"""Online softmax (Milakov & Gimelshein 2018): the running max and sum.

The primitives here are the one definition of the algorithm that the CUDA
kernels run; the kernels' NumPy emulation (:mod:`compute.backends.emulate`)
and the Online-softmax view are built from them.

A *partial* of a block of scores ``x`` is the pair ``(m, d)``: ``m`` the
block's max in raw score units and ``d = sum_i w(x_i, m)`` with

    w(x, m) = exp((x - m) / T)   if x != m
              1                  if x == m and m != -inf
              0                  if x == m == -inf

so the temperature is folded in exactly as :func:`compute.softmax` does it
(shift first, then divide).  The ``x == m`` cases make the special values
come out as in :func:`compute.softmax`: ``k`` scores of ``+inf`` get ``1/k``
(each contributes 1, everything else ``exp(-inf) = 0``); an all ``-inf`` row
has ``d = 0`` and ``0 / 0`` gives NaN; a NaN anywhere makes ``m`` and ``d``
NaN.  Two partials merge by keeping the larger max and rescaling the other
sum by :func:`rescale`; merging is associative and commutative (up to
rounding), which is what lets a row be split over threads, warps and blocks.

Everything works elementwise on NumPy arrays (one partial per row) as well as
on scalars.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["block_partial", "finish_log_softmax", "finish_logsumexp", "finish_softmax", "merge", "rescale", "weights"]

FloatArray = NDArray[np.floating[Any]]


def weights(x: ArrayLike, m: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """``w(x, m)`` elementwise (see the module docstring); ``m`` broadcasts."""
    x = np.asarray(x)
    m = np.asarray(m, dtype=x.dtype)
    with np.errstate(all="ignore"):
        e = np.exp((x - m) / x.dtype.type(temperature))
        return np.where(x == m, np.where(m == -np.inf, 0.0, 1.0).astype(x.dtype), e)


def rescale(m_old: ArrayLike, m_new: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """The factor a sum taken against ``m_old`` is multiplied by to refer to ``m_new``.

    ``exp((m_old - m_new) / T)``, and exactly 1 when the two are equal (so
    ``+inf == +inf`` gives 1, not ``exp(NaN)``; ``-inf == -inf`` gives 1 on
    a sum that is 0 anyway).  NaN stays NaN.
    """
    m_old = np.asarray(m_old)
    m_new = np.asarray(m_new, dtype=m_old.dtype)
    with np.errstate(all="ignore"):
        e = np.exp((m_old - m_new) / m_old.dtype.type(temperature))
        return np.where(m_old == m_new, m_old.dtype.type(1), e)


def block_partial(x: ArrayLike, temperature: float = 1.0, axis: int = -1) -> tuple[FloatArray, FloatArray]:
    """``(m, d)`` of the scores along ``axis``; an empty block gives ``(-inf, 0)``."""
    x = np.asarray(x)
    if x.shape[axis] == 0:
        shape = x.shape[:axis % x.ndim] + x.shape[axis % x.ndim + 1:]
        return np.full(shape, -np.inf, x.dtype), np.zeros(shape, x.dtype)
    m = np.max(x, axis=axis, keepdims=True)
    d = weights(x, m, temperature).sum(axis=axis, keepdims=True)
    return np.squeeze(m, axis), np.squeeze(d, axis)


def merge(
    m_a: ArrayLike, d_a: ArrayLike, m_b: ArrayLike, d_b: ArrayLike, temperature: float = 1.0
) -> tuple[FloatArray, FloatArray]:
    """Merge two partials: ``m = max(m_a, m_b)``, ``d = d_a·r(m_a, m) + d_b·r(m_b, m)``."""
    m_a, d_a, m_b, d_b = (np.asarray(v) for v in (m_a, d_a, m_b, d_b))
    m = np.maximum(m_a, m_b)  # NaN propagates
    with np.errstate(all="ignore"):
        d = d_a * rescale(m_a, m, temperature) + d_b * rescale(m_b, m, temperature)
    return m, d


def finish_softmax(x: ArrayLike, m: ArrayLike, d: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """The second pass: ``w(x_i, m) / d`` with the row's final partial broadcast."""
    with np.errstate(all="ignore"):
        return weights(x, m, temperature) / np.asarray(d)


def finish_log_softmax(x: ArrayLike, m: ArrayLike, d: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """``(x - m) / T - log(d)``; an all ``-inf`` row gives NaN (``-inf - -inf``)."""
    x = np.asarray(x)
    m = np.asarray(m, dtype=x.dtype)
    with np.errstate(all="ignore"):
        z = np.where(x == m, np.where(m == -np.inf, np.nan, 0.0).astype(x.dtype), (x - m) / x.dtype.type(temperature))
        return z - np.log(np.asarray(d, dtype=x.dtype))


def finish_logsumexp(m: ArrayLike, d: ArrayLike) -> FloatArray:
    """``m + log(d)`` (temperature 1): ``+inf`` rows give ``+inf``, all ``-inf`` rows ``-inf``."""
    m = np.asarray(m)
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(m), m + np.log(np.asarray(d, dtype=m.dtype)), m)
