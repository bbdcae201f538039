"""The memory one attention call needs (for the view's size check and readout)."""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from compute._checks import _check_count

__all__ = ["attention_memory"]


def attention_memory(
    n_q: int,
    n_k: int,
    d: int,
    d_v: int,
    heads: int = 1,
    dtype: DTypeLike = np.float64,
) -> int:
    """Bytes to hold one attention call's arrays, for ``heads`` heads.

    Counted, each once per head and at ``dtype``'s item size:

    * ``q`` (``n_q x d``), ``k`` (``n_k x d``), ``v`` (``n_k x d_v``),
    * the score matrix (``n_q x n_k``) and the weight matrix (``n_q x n_k``),
    * the output (``n_q x d_v``).

    Not counted: the boolean mask, NumPy's temporaries inside softmax (the
    shifted scores and their exponentials, another ``n_q x n_k`` or two
    while it runs), array headers, and float16's float32 working copies
    (:func:`attention` computes float16 in float32).  The quadratic terms
    are the point: they are what fused kernels (FlashAttention) avoid
    storing.  Returns an exact Python int (no overflow for huge sizes).
    """
    n_q = _check_count(n_q, "n_q")
    n_k = _check_count(n_k, "n_k")
    d = _check_count(d, "d")
    d_v = _check_count(d_v, "d_v")
    heads = _check_count(heads, "heads")
    itemsize = np.dtype(dtype).itemsize
    cells = n_q * d + n_k * d + n_k * d_v + 2 * n_q * n_k + n_q * d_v
    return heads * cells * itemsize
