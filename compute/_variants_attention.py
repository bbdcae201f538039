"""Attention without the softmax's competition, and with normalised queries and keys.

* :func:`sigmoid_attention`: ``sigmoid(q k^T * scale + b) @ v`` with
  ``b = -log n`` (Ramapuram et al., "Theory, Analysis, and Best Practices
  for Sigmoid Self-Attention", Apple, ICLR 2025): each weight is its own
  gate, the row sums are free, and the bias keeps them near 1 at the start
  of training.
* :func:`qk_norm`: RMS or L2 normalisation of each query and key vector
  before the dot product, with a gain standing in for the learned scale
  (QK-norm: ViT-22B with LayerNorm, OLMo 2 and Qwen3 with RMSNorm), which
  bounds the logits whatever the size of the inputs.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.array_utils import normalize_axis_index
from numpy.typing import ArrayLike

from compute._attention import attention_scores, causal_mask
from compute._checks import _check_bool, _check_finite, _check_positive
from compute._normalizers import sigmoid
from compute._rows import FloatArray, _as_float_array, _refuse_masked, _working_dtype

__all__ = ["qk_norm", "sigmoid_attention", "QK_NORMS"]

#: The kinds of :func:`qk_norm`.
QK_NORMS = ("rms", "l2")


def sigmoid_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    bias: float | None = None,
    scale: float | None = None,
    causal: bool = False,
) -> tuple[FloatArray, FloatArray]:
    """Sigmoid attention: ``weights = sigmoid(q k^T * scale + bias)``, ``output = weights @ v``.

    Parameters
    ----------
    q, k, v
        ``(..., n_q, d)``, ``(..., n_k, d)``, ``(..., n_k, d_v)``; leading
        axes broadcast as in :func:`compute.attention`.
    bias
        added to every score; ``None`` for the paper's ``-log(n_k)``.
    scale
        ``None`` for ``1/sqrt(d)``, else a finite float ``> 0``.
    causal
        if true, keys ``j > i`` get weight exactly 0 (top-left alignment).

    Returns
    -------
    tuple
        ``(weights, output)``, ``(..., n_q, n_k)`` and ``(..., n_q, d_v)``
        in the result dtype of ``q, k, v`` (float16 computed in float32).
        The weights lie in ``[0, 1]`` and a row's sum is anything from 0 to
        ``n_k``: no key competes with another.

    Raises
    ------
    ValueError
        the shapes of :func:`compute.attention_scores`, ``v`` with another
        number of keys than ``k``, a bias that is not finite, a bad scale.

    Examples
    --------
    >>> import numpy as np, compute
    >>> q = k = np.zeros((4, 2))
    >>> w, out = compute.sigmoid_attention(q, k, np.ones((4, 1)))
    >>> w[0].round(4), w[0].sum().round(4)
    (array([0.2, 0.2, 0.2, 0.2]), np.float64(0.8))
    """
    _refuse_masked(v, "v")
    va = _as_float_array(v)
    if va.ndim < 2:
        raise ValueError(f"v must have at least 2 dimensions (..., n, d_v), got shape {va.shape}")
    causal = _check_bool(causal, "causal")
    scores = attention_scores(q, k, scale)
    n_q, n_k = scores.shape[-2:]
    if va.shape[-2] != n_k:
        raise ValueError(f"k and v must have the same number of keys n_k, got {n_k} and {va.shape[-2]} in v")
    b = -math.log(n_k) if bias is None and n_k > 0 else 0.0 if bias is None else _check_finite(bias, "bias")
    out_dtype = np.result_type(scores, va)
    work = _working_dtype(out_dtype)
    with np.errstate(all="ignore"):
        weights = sigmoid((scores.astype(work, copy=False) + work.type(b)).astype(work, copy=False))
    if causal:
        weights = np.where(causal_mask(n_q, n_k), weights, work.type(0))
    try:
        with np.errstate(all="ignore"):
            output = np.matmul(weights, va.astype(work, copy=False))
    except ValueError:
        raise ValueError(f"the leading axes of the scores {scores.shape} and v {va.shape} do not broadcast") from None
    weights = np.broadcast_to(weights, output.shape[:-2] + weights.shape[-2:])
    return weights.astype(out_dtype), output.astype(out_dtype, copy=False)


def qk_norm(x: ArrayLike, kind: str = "rms", gain: ArrayLike | None = None, eps: float = 1e-6,
            axis: int = -1) -> FloatArray:
    """Normalise each query or key vector (along ``axis``, one head's ``d``) before ``q·k``.

    ``"rms"``: ``x / sqrt(mean(x²) + eps) * gain`` (RMSNorm, as OLMo 2 and
    Qwen3 apply it to q and k); ``"l2"``: ``x / max(‖x‖, eps) * gain``
    (unit vectors, as ``torch.nn.functional.normalize``).  After RMS
    normalisation ``‖x‖ = sqrt(d) * gain`` (for a scalar gain and ``eps``
    negligible), so the logit ``q·k / sqrt(d)`` stays within
    ``± sqrt(d) * gain_q * gain_k`` however large the inputs grow.

    Parameters
    ----------
    x
        queries or keys, ``(..., d)`` with ``d`` along ``axis``.
    kind
        ``"rms"`` or ``"l2"``.
    gain
        the learned scale's stand-in: ``None`` (1), a number, or one value
        per component (length ``d``, broadcast along ``axis``).
    eps
        finite ``> 0``.

    Examples
    --------
    >>> import compute
    >>> compute.qk_norm([3.0, 4.0], "l2")
    array([0.6, 0.8])
    >>> float((compute.qk_norm([30.0, 40.0]) ** 2).mean().round(6))
    1.0
    """
    if kind not in QK_NORMS:
        raise ValueError(f"kind must be one of {', '.join(QK_NORMS)}, got {kind!r}")
    e = _check_positive(eps, "eps")
    _refuse_masked(x, "x")
    a = _as_float_array(x)
    if a.ndim == 0:
        a = a.reshape(1)
    ax = normalize_axis_index(axis, a.ndim)
    out_dtype = a.dtype
    w = a.astype(_working_dtype(out_dtype), copy=False)
    with np.errstate(all="ignore"):
        if kind == "rms":
            y = w / np.sqrt(np.mean(w * w, axis=ax, keepdims=True) + e)
        else:
            y = w / np.maximum(np.sqrt(np.sum(w * w, axis=ax, keepdims=True)), e)
        if gain is not None:
            g = np.asarray(gain, dtype=y.dtype)
            if g.ndim == 1 and g.size not in (1, a.shape[ax]):
                raise ValueError(f"gain has {g.size} values for d = {a.shape[ax]}")
            if g.ndim > 1:
                raise ValueError(f"gain must be a number or one value per component, got shape {g.shape}")
            if g.ndim == 1:
                g = g.reshape((-1,) + (1,) * (a.ndim - 1 - ax))
            y = y * g
    return y.astype(out_dtype, copy=False).reshape(np.shape(x) or (1,))
