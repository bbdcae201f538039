"""What today's models change around softmax: soft-capping, sinks, length scaling, ALiBi.

Each function is the formula of the model or paper it names, in plain
NumPy, under compute's dtype rules (float16 computed in float32 and rounded
back; lists and ints become float64) and without warnings.

* :func:`softcap`, :func:`softcap_grad`: ``cap * tanh(x / cap)`` (Gemma 2
  caps attention logits at 50 and final logits at 30) and its derivative.
* :func:`softmax_one`: ``exp(x_i) / (1 + sum_j exp(x_j))`` (E. Miller,
  "Attention is off by one", 2023); :func:`softmax_with_sink`: the same
  with a learned sink logit per head in place of the 0 (gpt-oss).
* :func:`sink_tokens_softmax` and :func:`sink_window_mask`: StreamingLLM's
  cache (Xiao et al., 2023), the first tokens kept as attention sinks
  beside a window of recent ones.
* :func:`ssmax`: Scalable-Softmax, ``softmax(s * log(n) * x)`` (Nakanishi,
  2025); :func:`logn_scale` and :func:`logn_softmax`: Qwen's
  ``use_logn_attn``, which multiplies the query at position ``i`` by
  ``log_L(i)`` once ``i`` exceeds the training length ``L``.
* :func:`alibi_slopes`, :func:`alibi_bias`: ALiBi (Press et al., 2022), the
  slopes exactly as the paper's reference code computes them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _check_count, _check_positive
from compute._rows import FloatArray, _prepare, _restore, _rows_last
from compute._softmax import softmax

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "logn_scale",
    "logn_softmax",
    "sink_tokens_softmax",
    "sink_window_mask",
    "softcap",
    "softcap_grad",
    "softmax_one",
    "softmax_with_sink",
    "ssmax",
]


# --------------------------------------------------------------------------
# soft-capping
# --------------------------------------------------------------------------
def _elementwise(x: ArrayLike) -> tuple[FloatArray, np.dtype[Any], tuple[int, ...]]:
    a, _axis, out_dtype, shape = _prepare(x, -1)
    return a, out_dtype, shape


def softcap(x: ArrayLike, cap: float) -> FloatArray:
    """Soft-capping: ``cap * tanh(x / cap)``, bounded by ``±cap``, ≈ ``x`` for ``|x| ≪ cap``.

    Gemma 2 applies it to the attention logits (cap 50) and to the final
    logits (cap 30) before softmax.

    Parameters
    ----------
    x
        scores, any shape.
    cap
        finite real ``> 0``.

    Returns
    -------
    ndarray
        same shape and dtype as ``x``; ``±inf`` becomes ``±cap``, NaN stays NaN.

    Raises
    ------
    ValueError
        ``cap`` not finite and ``> 0``.

    Examples
    --------
    >>> import compute
    >>> compute.softcap([1.0, 30.0, 1000.0], 30.0).round(4)
    array([ 0.9996, 22.8478, 30.    ])
    """
    c = _check_positive(cap, "cap")
    a, out_dtype, shape = _elementwise(x)
    with np.errstate(all="ignore"):
        out = c * np.tanh(a / c)
    return out.astype(out_dtype, copy=False).reshape(shape)


def softcap_grad(x: ArrayLike, cap: float) -> FloatArray:
    """The derivative of :func:`softcap`: ``1 - tanh²(x / cap)`` = ``sech²(x / cap)``.

    Computed as ``1 / cosh²(x / cap)``, so far from 0 it is tiny but not
    rounded to 0 before it must be (``1 - tanh²`` loses every digit there).
    1 at ``x = 0``; 0 at ``±inf``.

    Examples
    --------
    >>> import compute
    >>> compute.softcap_grad([0.0, 50.0], 50.0).round(4)
    array([1.  , 0.42])
    """
    c = _check_positive(cap, "cap")
    a, out_dtype, shape = _elementwise(x)
    with np.errstate(all="ignore"):
        out = 1.0 / np.cosh(a / c) ** 2
    return out.astype(out_dtype, copy=False).reshape(shape)


# --------------------------------------------------------------------------
# sinks: softmax_one, gpt-oss's learned sink, StreamingLLM's sink tokens
# --------------------------------------------------------------------------
def _sink_rows(rows: FloatArray, s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Weights and sink share of contiguous rows ``(R, n)`` with sink logits ``s`` ``(R, 1)``.

    Shifted by ``m = max(max_j x_j, s)``: the largest term is ``exp(0) = 1``,
    so the denominator is at least 1 and nothing overflows.
    """
    n = rows.shape[-1]
    with np.errstate(all="ignore"):
        top = rows.max(axis=-1, keepdims=True) if n else np.full_like(s, -np.inf)
        m = np.maximum(top, s)
        e = np.exp(rows - m)
        es = np.exp(s - m)
        d = es + e.sum(axis=-1, keepdims=True)
        w = e / d
        ws = es / d
    big = np.isposinf(m[:, 0])
    if big.any():  # the limit as the +inf entries (and the sink, if +inf) grow together
        hits = rows[big] == np.inf
        hs = s[big] == np.inf
        k = hits.sum(axis=-1, keepdims=True) + hs
        w[big] = hits / k
        ws[big] = hs / k
    bad = np.isnan(rows).any(axis=-1) | np.isnan(s[:, 0])
    w[bad] = np.nan
    ws[bad] = np.nan
    return w, ws


def softmax_with_sink(
    x: ArrayLike, sink_logit: ArrayLike, axis: int = -1, *, return_sink: bool = False
) -> FloatArray | tuple[FloatArray, FloatArray]:
    """Softmax with a sink: ``exp(x_i) / (exp(s) + sum_j exp(x_j))``, the sink dropped.

    gpt-oss learns one sink logit ``s`` per head: it joins the normalisation
    as an extra column, takes its share of the mass and is then discarded,
    so a row's weights sum to ``1 - sink share`` < 1 and a head can give
    its tokens almost nothing.  ``sink_logit = 0`` is :func:`softmax_one`;
    ``-inf`` is plain softmax.

    Parameters
    ----------
    x
        scores; normalised along ``axis``.
    sink_logit
        real number, or an array broadcasting to ``x`` with ``axis`` kept as
        size 1 (``x.max(axis, keepdims=True)``'s shape): for scores of
        shape ``(heads, n_q, n_k)`` pass per-head sinks as ``s[:, None, None]``.
    axis
        the axis of the keys.
    return_sink
        also return the sink's share, shape of ``x`` with ``axis`` of size 1.

    Returns
    -------
    ndarray, or (ndarray, ndarray)
        the weights, shape and dtype of ``x``; with ``return_sink`` the
        sink's share too (weights plus share sum to 1).  ``-inf`` scores
        get exactly 0; a row of only ``-inf`` gives zeros and the sink 1
        (all NaN when the sink is ``-inf`` too); ``+inf`` scores (and a
        ``+inf`` sink) share the mass equally; NaN anywhere in a row or its
        sink makes the row and its share NaN.

    Raises
    ------
    ValueError
        ``sink_logit`` does not broadcast as described.

    Examples
    --------
    >>> import compute
    >>> w, sink = compute.softmax_with_sink([1.0, 0.0], 1.0, return_sink=True)
    >>> w.round(4), sink.round(4)
    (array([0.4223, 0.1554]), array([0.4223]))
    """
    a, ax, out_dtype, shape = _prepare(x, axis)
    rows = _rows_last(a, ax)
    s = np.asarray(sink_logit, dtype=np.float64)
    kept = rows.shape[:-1] + (1,)
    try:
        s = np.moveaxis(np.broadcast_to(s, a.shape[:ax] + (1,) + a.shape[ax + 1:]), ax, -1)
    except ValueError:
        raise ValueError(
            f"sink_logit of shape {np.shape(sink_logit)} does not broadcast to the scores' shape "
            f"{shape} with axis {axis} of size 1"
        ) from None
    flat = rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1])
    w, ws = _sink_rows(flat, np.ascontiguousarray(s, dtype=flat.dtype).reshape(flat.shape[0], 1))
    weights = _restore(w.reshape(rows.shape), ax, out_dtype, a.shape).reshape(shape)
    if not return_sink:
        return weights
    share = np.moveaxis(ws.reshape(kept), -1, ax).astype(out_dtype)
    return weights, share


def softmax_one(x: ArrayLike, axis: int = -1) -> FloatArray:
    """softmax₁: ``exp(x_i) / (1 + sum_j exp(x_j))`` — "attention is off by one".

    An extra zero logit joins the normalisation (Evan Miller, 2023), so the
    weights sum to less than 1 and tend to 0 together when every score is
    very negative: a head can attend to nothing.  Computed shifted by
    ``max(max_j x_j, 0)``; the special values are those of
    :func:`softmax_with_sink` with ``sink_logit = 0`` (a row of only
    ``-inf`` gives zeros).

    Examples
    --------
    >>> import compute
    >>> compute.softmax_one([0.0, 0.0, 0.0]).round(4)
    array([0.25, 0.25, 0.25])
    >>> float(compute.softmax_one([-20.0, -20.0]).sum()) < 1e-8
    True
    """
    return softmax_with_sink(x, 0.0, axis)


def sink_window_mask(n: int, sink_tokens: int, window: int) -> np.ndarray:
    """StreamingLLM's attention pattern: ``(n, n)`` bool, ``True`` where query ``i`` sees key ``j``.

    Causal, and of the earlier keys only the first ``sink_tokens`` (the
    attention sinks) and the last ``window`` up to the query itself
    (``i - window < j <= i``) stay in the cache; the rest are evicted.
    ``sink_tokens = 0`` is a plain sliding window.

    Examples
    --------
    >>> import compute
    >>> compute.sink_window_mask(5, 1, 2).astype(int)[4]
    array([1, 0, 0, 1, 1])
    """
    n = _check_count(n, "n", 1)
    sinks = _check_count(sink_tokens, "sink_tokens", 0)
    window = _check_count(window, "window", 1)
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return (j <= i) & ((j < sinks) | (j > i - window))


def sink_tokens_softmax(x: ArrayLike, sink_tokens: int, window: int, axis: int = -1) -> FloatArray:
    """Softmax over what StreamingLLM keeps of a row: its first ``sink_tokens`` and last ``window`` scores.

    The row is one query's scores over the ``n`` keys before it (the last
    is the query's own position).  The keys in between are evicted (weight
    exactly 0) and the kept ones share the mass; with ``sink_tokens = 0``
    the first tokens are evicted too, which is what made plain window
    attention collapse.  A row no longer than ``sink_tokens + window`` is
    plain softmax.

    Examples
    --------
    >>> import compute
    >>> compute.sink_tokens_softmax([0.0, 5.0, 5.0, 0.0], 1, 1).round(4)
    array([0.5, 0. , 0. , 0.5])
    """
    sinks = _check_count(sink_tokens, "sink_tokens", 0)
    window = _check_count(window, "window", 1)
    a, ax, out_dtype, shape = _prepare(x, axis)
    n = a.shape[ax]
    j = np.arange(n)
    keep = (j < sinks) | (j >= n - window)
    rows = _rows_last(a, ax)
    masked = np.where(keep, rows, -np.inf)
    out = softmax(masked, axis=-1)
    return _restore(out, ax, out_dtype, a.shape).reshape(shape)


# --------------------------------------------------------------------------
# length: SSMax and Qwen's log-n scaling
# --------------------------------------------------------------------------
def _scaled_softmax(a: FloatArray, ax: int, factor: Any, out_dtype: np.dtype[Any],
                    shape: tuple[int, ...]) -> FloatArray:
    """softmax(factor * a) along ``ax``; a zero factor keeps -inf and NaN as they are (all else ties)."""
    f = np.asarray(factor, dtype=a.dtype)
    with np.errstate(all="ignore"):
        if f.ndim == 0 and f != 0:
            z = a * f  # what the where below picks everywhere for a nonzero factor (without its passes)
        else:
            z = np.where(f == 0, np.where(np.isnan(a) | (a == -np.inf), a, 0.0), a * f)
    return softmax(z.astype(a.dtype, copy=False), axis=ax).astype(out_dtype, copy=False).reshape(shape)


def ssmax(x: ArrayLike, s: float, axis: int = -1, n: int | None = None) -> FloatArray:
    """Scalable-Softmax: ``softmax(s * log(n) * x)``, ``n`` the number of scores.

    Plain softmax spreads its mass thinner as the row grows (the largest
    weight of a fixed gap falls like ``1/n``); multiplying the scores by
    ``s log n`` keeps it from fading (Nakanishi, "Scalable-Softmax Is
    Superior for Attention", 2025; ``s`` is learned per head).

    Parameters
    ----------
    x
        scores; normalised along ``axis``.
    s
        the scaling parameter, finite ``> 0``.
    axis
        the axis of the keys.
    n
        the length in ``log n``: by default ``x.shape[axis]``; a causal row
        passes the number of keys the query sees.  ``n = 1`` makes the
        factor 0 (every score counts the same).

    Examples
    --------
    >>> import compute
    >>> compute.ssmax([1.0, 0.0, 0.0, 0.0], 1.0).round(4)
    array([0.5714, 0.1429, 0.1429, 0.1429])
    """
    s = _check_positive(s, "s")
    a, ax, out_dtype, shape = _prepare(x, axis)
    length = a.shape[ax] if n is None else _check_count(n, "n", 1)
    if length < 1:
        return np.zeros(shape, dtype=out_dtype)
    return _scaled_softmax(a, ax, s * math.log(length), out_dtype, shape)


def logn_scale(n: int, train_length: int) -> FloatArray:
    """Qwen's log-n factor for positions 1..n: ``log(i) / log(L)`` past the training length ``L``, else 1.

    Qwen's ``use_logn_attn`` (``modeling_qwen.py``: ``logn_list =
    [math.log(i, seq_length) if i > seq_length else 1 for i in range(1,
    32768)]``) multiplies the query at 1-based position ``i`` by this, so
    the logits of a long context grow like ``log n`` and its attention
    does not flatten.

    Examples
    --------
    >>> import compute
    >>> compute.logn_scale(16, 4)[[0, 3, 4, 15]]
    array([1.        , 1.        , 1.16096405, 2.        ])
    """
    n = _check_count(n, "n", 0)
    length = _check_count(train_length, "train_length", 2)
    i = np.arange(1, n + 1, dtype=np.float64)
    return np.where(i > length, np.log(i) / math.log(length), 1.0)


def logn_softmax(x: ArrayLike, train_length: int, axis: int = -1, position: int | None = None) -> FloatArray:
    """softmax of one query's scores with Qwen's log-n scaling: ``softmax(logn_scale(...)[position - 1] * x)``.

    Scaling the query by the factor scales each of its logits ``q·k/√d``
    by it.  ``position`` is the query's 1-based position (by default the
    row's length: the last query, which sees every key).

    Examples
    --------
    >>> import compute
    >>> compute.logn_softmax([1.0, 0.0, 0.0, 0.0], 2).round(4)
    array([0.7112, 0.0963, 0.0963, 0.0963])
    """
    length = _check_count(train_length, "train_length", 2)
    a, ax, out_dtype, shape = _prepare(x, axis)
    pos = a.shape[ax] if position is None else _check_count(position, "position", 1)
    factor = math.log(pos) / math.log(length) if pos > length else 1.0
    return _scaled_softmax(a, ax, factor, out_dtype, shape)


# --------------------------------------------------------------------------
# ALiBi
# --------------------------------------------------------------------------
def _power_of_two_slopes(heads: int) -> list[float]:
    """2^(-8/H), 2^(-16/H), ..., 2^(-8): the geometric sequence for H a power of two."""
    return [2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)]


def alibi_slopes(heads: int) -> FloatArray:
    """ALiBi's head slopes, exactly as the paper's reference code computes them.

    For ``H`` a power of two, the geometric sequence starting at and with
    ratio ``2^(-8/H)``: ``2^(-8i/H)`` for ``i = 1..H`` (8 heads: 1/2, 1/4,
    ..., 1/256).  Otherwise the slopes of the closest power of two below,
    ``P``, then every other slope of ``2P`` heads (its 1st, 3rd, ...) until
    there are ``H`` (``get_slopes`` in ofirpress/attention_with_linear_biases).

    Examples
    --------
    >>> import compute
    >>> compute.alibi_slopes(8) * 256
    array([128.,  64.,  32.,  16.,   8.,   4.,   2.,   1.])
    >>> compute.alibi_slopes(12)[8:].round(4)
    array([0.7071, 0.3536, 0.1768, 0.0884])
    """
    heads = _check_count(heads, "heads", 1)
    if heads & (heads - 1) == 0:
        return np.array(_power_of_two_slopes(heads))
    closest = 1 << (heads.bit_length() - 1)
    extra = alibi_slopes(2 * closest)[0::2][: heads - closest]
    return np.concatenate([_power_of_two_slopes(closest), extra])


def alibi_bias(n: int, heads: int, causal: bool = False) -> FloatArray:
    """ALiBi's biases, ``(heads, n, n)``: ``-slope_h * |i - j|`` added to the scores of head ``h``.

    With ``causal`` the future keys (``j > i``) get ``-inf`` and the rest
    ``-slope_h * (i - j)``, as a decoder uses it (the reference code adds
    ``slope * j`` instead, which differs by a constant per row and gives the
    same softmax).

    Examples
    --------
    >>> import compute
    >>> compute.alibi_bias(3, 8)[0]
    array([[ 0. , -0.5, -1. ],
           [-0.5,  0. , -0.5],
           [-1. , -0.5,  0. ]])
    """
    n = _check_count(n, "n", 0)
    slopes = alibi_slopes(heads)
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    distance = np.abs(i - j).astype(np.float64)
    bias = 0.0 - slopes[:, None, None] * distance  # +0 on the diagonal
    if causal:
        bias = np.where(j > i, -np.inf, bias)
    return bias

