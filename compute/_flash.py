"""FlashAttention's loop in NumPy: attention by K/V tiles with a running max and sum.

Built from the online-softmax partials of :mod:`compute._online` (their
:func:`~compute._online.weights` and :func:`~compute._online.rescale`), so
special values are compute's (see compute's special values).  No warnings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _check_scale, _check_whole
from compute._online import finish_logsumexp, rescale, weights
from compute._rows import FloatArray, _refuse_masked, _times

__all__ = ["FlashStep", "FlashTrace", "flash_attention", "flash_attention_trace"]


def _attention_inputs(q: ArrayLike, k: ArrayLike, v: ArrayLike, scale: float | None, tile: int):
    for name, a in (("q", q), ("k", k), ("v", v)):
        _refuse_masked(a, name)
    qa, ka, va = (np.asarray(a) for a in (q, k, v))
    for name, a in (("q", qa), ("k", ka), ("v", va)):
        if a.ndim < 2 or a.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be a real array of at least 2 axes, got shape {a.shape}")
    if qa.shape[-1] != ka.shape[-1] or qa.shape[-1] == 0:
        raise ValueError(f"q and k need the same d > 0, got shapes {qa.shape} and {ka.shape}")
    if ka.shape[-2] != va.shape[-2]:
        raise ValueError(f"k and v need the same number of keys, got shapes {ka.shape} and {va.shape}")
    tile = _check_whole(tile, "tile")
    out_dtype = np.result_type(qa, ka, va, np.float16)
    work = np.promote_types(out_dtype, np.float32)
    qa, ka, va = (a.astype(work, copy=False) for a in (qa, ka, va))
    # the scale as attention applies it: a Python float, multiplied in float64
    # where it is not a normal number of the working dtype (1e50 for float32)
    s = 1.0 / math.sqrt(qa.shape[-1]) if scale is None else _check_scale(scale)
    return qa, ka, va, s, out_dtype, tile


def _tile_scores(qa, ka, start: int, stop: int, s: float, causal: bool):
    """The scaled scores of keys start..stop for every query, causal cells set to -inf."""
    with np.errstate(all="ignore"):
        scores = _times(np.matmul(qa, np.swapaxes(ka[..., start:stop, :], -1, -2)), s)
    if causal:
        i = np.arange(qa.shape[-2])[:, None]
        j = np.arange(start, stop)[None, :]
        scores = np.where(j <= i, scores, scores.dtype.type(-np.inf))
    return scores


def _tile_update(m, lsum, acc, scores, v_tile):
    """Merge one tile into the running (m, lsum, acc): FlashAttention's inner step."""
    m_tile = np.max(scores, axis=-1)
    m_new = np.maximum(m, m_tile)
    r = rescale(m, m_new)
    p = weights(scores, m_new[..., None])
    with np.errstate(all="ignore"):
        l_new = lsum * r + p.sum(axis=-1)
        acc_new = acc * r[..., None] + np.matmul(p, v_tile)
    return m_tile, m_new, r, l_new, acc_new


def _finish(m, lsum, acc):
    """out = acc / l and lse = m + log l; a row with no allowed key gets 0 and -inf."""
    with np.errstate(all="ignore"):
        out = acc / lsum[..., None]
    empty = (lsum == 0)[..., None]
    out = np.where(empty, out.dtype.type(0), out)
    return out, finish_logsumexp(m, lsum)


def flash_attention(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, scale: float | None = None, causal: bool = False, tile: int = 64
) -> tuple[FloatArray, FloatArray]:
    """Attention by K/V tiles without the ``n_q x n_k`` matrix: ``(output, lse)``.

    The scores of one tile of ``tile`` keys are formed at a time; each query
    row keeps a running max ``m``, sum ``l`` and output accumulator, which
    are rescaled by ``exp(m_old - m_new)`` whenever a tile raises ``m``.
    ``output`` matches :func:`compute.attention`'s (a row with no allowed
    key gets zeros), and ``lse`` is the log-sum-exp of each row's scaled,
    masked scores (``-inf`` for such a row).  ``scale`` defaults to
    ``1/sqrt(d)``; ``causal`` is the top-left rule ``j <= i``.  Leading
    axes broadcast as in ``np.matmul``.  float16 is computed in float32.
    """
    qa, ka, va, s, out_dtype, tile = _attention_inputs(q, k, v, scale, tile)
    lead = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2], va.shape[:-2])
    n_q, n_k, d_v = qa.shape[-2], ka.shape[-2], va.shape[-1]
    m = np.full(lead + (n_q,), -np.inf, qa.dtype)
    lsum = np.zeros(lead + (n_q,), qa.dtype)
    acc = np.zeros(lead + (n_q, d_v), qa.dtype)
    for start in range(0, n_k, tile):
        stop = min(start + tile, n_k)
        scores = _tile_scores(qa, ka, start, stop, s, causal)
        _m_tile, m, _r, lsum, acc = _tile_update(m, lsum, acc, scores, va[..., start:stop, :])
    out, lse = _finish(m, lsum, acc)
    return out.astype(out_dtype, copy=False), lse.astype(out_dtype, copy=False)


@dataclass(frozen=True)
class FlashStep:
    """One K/V tile of the attention loop, for every query row (arrays of length n_q)."""

    index: int
    start: int
    stop: int  # keys start..stop
    m_before: FloatArray
    l_before: FloatArray
    m_tile: FloatArray  # each row's max over this tile's (masked) scores
    m_after: FloatArray
    l_after: FloatArray
    rescale: FloatArray  # exp(m_before - m_after): what l and the accumulator were multiplied by
    acc_before: FloatArray  # (n_q, d_v)
    acc_after: FloatArray

    @property
    def out_partial(self) -> FloatArray:
        """acc / l: the attention output over the keys read so far."""
        return _finish(self.m_after, self.l_after, self.acc_after)[0]


@dataclass(frozen=True)
class FlashTrace:
    steps: list[FlashStep]
    output: FloatArray  # (n_q, d_v)
    lse: FloatArray  # (n_q,)
    scale: float


def flash_attention_trace(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, tile: int, scale: float | None = None, causal: bool = False
) -> FlashTrace:
    """:func:`flash_attention` for one head (2-D ``q``, ``k``, ``v``), every tile recorded."""
    qa, ka, va, s, _out_dtype, tile = _attention_inputs(q, k, v, scale, tile)
    if qa.ndim != 2 or ka.ndim != 2 or va.ndim != 2:
        raise ValueError("the trace takes one head: q, k and v must be 2-D")
    n_q, n_k, d_v = qa.shape[0], ka.shape[0], va.shape[1]
    m = np.full(n_q, -np.inf, qa.dtype)
    lsum = np.zeros(n_q, qa.dtype)
    acc = np.zeros((n_q, d_v), qa.dtype)
    steps = []
    for index, start in enumerate(range(0, n_k, tile)):
        stop = min(start + tile, n_k)
        scores = _tile_scores(qa, ka, start, stop, s, causal)
        m_tile, m_new, r, l_new, acc_new = _tile_update(m, lsum, acc, scores, va[start:stop])
        steps.append(FlashStep(index, start, stop, m, lsum, m_tile, m_new, l_new, r, acc, acc_new))
        m, lsum, acc = m_new, l_new, acc_new
    out, lse = _finish(m, lsum, acc)
    return FlashTrace(steps, out, lse, float(s))
