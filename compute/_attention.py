"""Scaled dot-product attention, its scores, masks and memory, in plain NumPy.

No warnings.  For queries ``Q`` (``..., n_q, d``), keys ``K``
(``..., n_k, d``) and values ``V`` (``..., n_k, d_v``)::

    scores  = (Q @ K^T) * scale           scale = 1/sqrt(d) unless given
    weights = softmax(scores with masked cells set to -inf)   over the keys
    output  = weights @ V

* **Leading axes** (batch, heads, ...) broadcast with NumPy's rules, as in
  ``np.matmul``; the mask's leading axes take part too.  ``weights`` and
  ``output`` both get the full broadcast leading shape, so ``weights[b]``
  always belongs to ``output[b]``.
* **Scores** are the matmul first and the scale second, exactly as
  :func:`attention_scores` computes them, so the two agree bit for bit
  (when ``q`` and ``k`` already have the result dtype of ``q, k, v``; mixed
  dtypes are promoted first).  A scale that is not a normal number in the
  working precision (``1e-50`` for float32) is applied in float64 and
  rounded back, so it cannot turn into 0 or inf.  ``scale = 1.0`` means "no
  scaling" and skips the multiplication.  Because the product comes
  first it can overflow before scaling (``1e20 * 1e20`` is inf in float32
  whatever the scale); see compute's special values for such scores.
* **Masks.**  ``mask`` is boolean, ``True`` where a query may attend to a
  key, and broadcasts to ``(..., n_q, n_k)``: ``(n_k,)`` is a padding mask
  shared by all queries, ``(n_q, n_k)`` a full pattern.  It may not stretch
  ``n_q`` or ``n_k`` (its last two axes are 1 or the real size).  Numeric
  masks are refused (``TypeError``): PyTorch's float masks are *added* to
  the scores, and a 0/1 integer mask would silently mean something else.
* **Causal alignment.**  ``causal=True`` allows key ``j`` for query ``i``
  iff ``j <= i`` (query ``i`` and key ``i`` are at the same position).  This
  is the *top-left* alignment of PyTorch's
  ``scaled_dot_product_attention(..., is_causal=True)``; for ``n_q != n_k``
  FlashAttention 2 and ``torch.nn.attention.bias.causal_lower_right`` align
  the *ends* instead (``j <= i + n_k - n_q``), which is what decoding with a
  KV cache needs.  Pass an explicit ``mask`` for that.  With the top-left
  rule, causal masking alone never empties a row (key 0 is always allowed).
* **Fully masked rows.**  Softmax over an empty set is undefined (the stable
  formula gives ``0/0 = NaN``).  A row whose every score is ``-inf`` after
  masking (all keys masked, or, rarely, every allowed score overflowed to
  ``-inf``) gets all-zero weights and an all-zero output row, which is what
  fused attention kernels and PyTorch's ``_safe_softmax`` return.  Rows with
  a NaN score stay NaN, but a masked key never contributes: its score is
  replaced by ``-inf`` before the softmax.
  The output is ``weights @ V`` as a plain matmul, so a NaN or inf in ``V``
  reaches every output row except fully masked ones, even where its weight
  is 0 (``0 * nan = nan``), as in PyTorch's math backend.
* **dtype.**  The result dtype of ``q, k, v`` under compute's dtype rules;
  the float16 scores :func:`attention_scores` returns are the float32 ones
  attention used, rounded.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from compute import backends as _backends
from compute._checks import _check_bool, _check_count, _check_scale
from compute._rows import (
    BoolArray,
    FloatArray,
    _as_float_array,
    _as_float_device,
    _refuse_masked,
    _times,
    _working_dtype,
)
from compute._softmax import softmax

__all__ = [
    "attention",
    "attention_parts",
    "AttentionParts",
    "attention_scores",
    "causal_mask",
    "masked_rows",
    "padding_mask",
]


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _check_operand(x: ArrayLike, name: str) -> FloatArray:
    _refuse_masked(x, name)
    a = _as_float_array(x)
    _check_ndim(a.shape, name)
    return a


def _check_ndim(shape: tuple[int, ...], name: str) -> None:
    if len(shape) < 2:
        raise ValueError(f"{name} must have at least 2 dimensions (..., n, d), got shape {shape}")


def _check_qk(q: FloatArray, k: FloatArray) -> None:
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension d, got shapes {q.shape} and {k.shape}")
    if q.shape[-1] == 0:
        raise ValueError("the head dimension d must be >= 1, got 0")
    try:
        np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError:
        raise ValueError(f"the leading axes of q {q.shape} and k {k.shape} do not broadcast") from None


def _check_mask(mask: ArrayLike, n_q: int, n_k: int) -> BoolArray:
    _refuse_masked(mask, "mask")
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(
            f"mask must be boolean (True = may attend), got dtype {m.dtype}; "
            "additive float masks are not supported"
        )
    tail = (1,) * max(0, 2 - m.ndim) + m.shape[-2:]
    if tail[0] not in (1, n_q) or tail[1] not in (1, n_k):
        raise ValueError(f"mask of shape {m.shape} does not broadcast to (..., {n_q}, {n_k})")
    return m


# --------------------------------------------------------------------------
# masks
# --------------------------------------------------------------------------
def causal_mask(n_q: int, n_k: int) -> BoolArray:
    """The ``(n_q, n_k)`` causal mask: ``True`` (allowed) where key ``j <= i``.

    Top-left aligned, like PyTorch's ``is_causal=True`` (see the module
    docstring); row ``i`` allows keys ``0 .. min(i, n_k - 1)``.
    """
    n_q = _check_count(n_q, "n_q")
    n_k = _check_count(n_k, "n_k")
    return np.tri(n_q, n_k, dtype=np.bool_)


def padding_mask(n_k: int, m: int) -> BoolArray:
    """A ``(n_k,)`` key mask: ``True`` for the first ``n_k - m`` keys.

    The last ``m`` keys are padding and may not be attended to.  Broadcasts
    against every query row when passed as ``attention(..., mask=...)``.

    Raises ``ValueError`` when ``m`` is negative or larger than ``n_k``.
    """
    n_k = _check_count(n_k, "n_k")
    m = _check_count(m, "m")
    if m > n_k:
        raise ValueError(f"cannot pad {m} of {n_k} keys")
    out = np.zeros(n_k, dtype=np.bool_)
    out[: n_k - m] = True
    return out


def _allowed(causal: bool, mask: ArrayLike | None, n_q: int, n_k: int) -> BoolArray | None:
    """The combined allowed-pattern (broadcastable to (..., n_q, n_k)), or None."""
    causal = _check_bool(causal, "causal")
    m = None if mask is None else _check_mask(mask, n_q, n_k)
    if causal:
        c = causal_mask(n_q, n_k)
        return c if m is None else c & m
    return m


def masked_rows(causal: bool, mask: ArrayLike | None, n_q: int, n_k: int) -> BoolArray:
    """Which query rows have no allowed key at all (boolean, ``(..., n_q)``).

    The leading axes are those of ``mask`` (none for ``mask=None`` or a 1-d
    or 2-d mask).  These are the rows :func:`attention` returns as zeros.
    (Attention also zeroes a row whose allowed scores all overflowed to
    ``-inf``; that depends on the data, so it is not counted here.)

    Raises ``TypeError`` (``causal`` not a bool, ``mask`` not boolean) and
    ``ValueError`` (``mask`` does not broadcast to ``(..., n_q, n_k)``).
    """
    n_q = _check_count(n_q, "n_q")
    n_k = _check_count(n_k, "n_k")
    allowed = _allowed(causal, mask, n_q, n_k)
    if allowed is None:
        return np.full(n_q, n_k == 0, dtype=np.bool_)
    allowed = np.broadcast_to(allowed, allowed.shape[:-2] + (n_q, n_k))
    return ~allowed.any(axis=-1)


# --------------------------------------------------------------------------
# attention
# --------------------------------------------------------------------------
def _scores(q: FloatArray, k: FloatArray, scale: float | None, work: np.dtype[Any],
            out: FloatArray | None = None) -> FloatArray:
    """The scaled scores in the working dtype ``work`` (in ``out`` when given: the same bits); q, k validated."""
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else _check_scale(scale)
    qw = q.astype(work, copy=False)
    kw = k.astype(work, copy=False)
    with np.errstate(all="ignore"):
        return _times(np.matmul(qw, np.swapaxes(kw, -1, -2), out=out), s)


def attention_scores(q: ArrayLike, k: ArrayLike, scale: float | None = None) -> FloatArray:
    """The scaled, unmasked score matrix ``(q @ k^T) * scale``.

    Parameters
    ----------
    q
        queries, ``(..., n_q, d)``.
    k
        keys, ``(..., n_k, d)``; leading axes broadcast with ``q``'s.
    scale
        ``None`` for ``1/sqrt(d)``, else a finite float ``> 0`` used
        as given (``1.0``: no scaling).

    Returns
    -------
    ndarray
        ``(..., n_q, n_k)`` in the result dtype of ``q`` and ``k`` (float16
        computed in float32).  :func:`attention` uses this very computation.

    Raises
    ------
    ValueError
        fewer than 2 dimensions, mismatched ``d``, ``d == 0``, leading axes that
        do not broadcast, or a bad ``scale`` (the message names the value).
    TypeError
        non-real input or scale.
    """
    qa = _check_operand(q, "q")
    ka = _check_operand(k, "k")
    _check_qk(qa, ka)
    out_dtype = np.result_type(qa, ka)
    scores = _scores(qa, ka, scale, _working_dtype(out_dtype))
    return scores.astype(out_dtype, copy=False)


def attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    scale: float | None = None,
    causal: bool = False,
    mask: ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Scaled dot-product attention: ``softmax(mask(q k^T * scale)) @ v``.

    Parameters
    ----------
    q
        queries, ``(..., n_q, d)``.
    k
        keys, ``(..., n_k, d)``.
    v
        values, ``(..., n_k, d_v)``.  Leading axes of all three (and of
        ``mask``) broadcast with NumPy's rules.
    scale
        ``None`` for ``1/sqrt(d)``; a finite float ``> 0`` is used as
        given (``1.0`` means no scaling).
    causal
        if true, query ``i`` may only attend to keys ``j <= i``
        (top-left alignment, like PyTorch's ``is_causal``; see the
        module docstring for ``n_q != n_k``).
    mask
        optional boolean array, ``True`` where a query may attend to a
        key, broadcastable to ``(..., n_q, n_k)``; combined with
        ``causal`` by logical and.

    Returns
    -------
    tuple
        ``(weights, output)``: ``(..., n_q, n_k)`` and ``(..., n_q, d_v)`` in
        the result dtype of ``q, k, v`` (float16 computed in float32).
        Masked weights are exactly 0; each row sums to 1 within rounding,
        except rows with no allowed key (see :func:`masked_rows`), whose
        weights and output are all exactly 0, not NaN.

    Backends: if any of ``q``, ``k``, ``v`` or ``mask`` is a CuPy array the
    whole call runs on the device and returns CuPy arrays; NumPy input with
    at least :data:`compute.backends.GPU_MIN_ELEMENTS` score cells runs
    there too when CuPy is the active backend (see :mod:`compute.backends`).
    The device computes the same steps (the score matmul and scale, the
    masks, the project's softmax kernel on the scores, the zeroed empty
    rows, the output matmul) rather than the fused ``flash_attention``
    kernel, because the weight matrix is returned anyway.

    Raises ``ValueError`` (bad shapes, ``d == 0`` or a bad ``scale``) and
    ``TypeError`` (non-real input, a non-boolean ``mask`` or ``causal``).
    """
    if _backends.any_device_array(q, k, v, mask):
        return _backends.run(_attention_on_device, [q, k, v, mask], {"scale": scale, "causal": causal}, _attention_host)
    return _attention_host(q, k, v, mask, scale=scale, causal=causal, offload=True)


def _check_shapes(qa: Any, ka: Any, va: Any, mask: ArrayLike | None, causal: bool):
    """Validate q, k, v (and ``mask``, on the host) together; return ``(n_q, n_k, allowed, batch)``.

    The one set of shape rules of both paths, so they raise the same errors."""
    _check_qk(qa, ka)
    if va.shape[-2] != ka.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys n_k, got shapes {ka.shape} and {va.shape}"
        )
    n_q, n_k = qa.shape[-2], ka.shape[-2]
    allowed = _allowed(causal, mask, n_q, n_k)
    lead = [qa.shape[:-2], ka.shape[:-2], va.shape[:-2]]
    if allowed is not None:
        lead.append(allowed.shape[:-2])
    try:
        batch = np.broadcast_shapes(*lead)
    except ValueError:
        raise ValueError(
            f"the leading axes of q {qa.shape}, k {ka.shape}, v {va.shape}"
            + ("" if mask is None else f" and mask {np.shape(mask)}")
            + " do not broadcast"
        ) from None
    return n_q, n_k, allowed, batch


def _check_known(raw: Any, qa: FloatArray, ka: FloatArray, work: np.dtype[Any]) -> FloatArray:
    """A given product for q @ k^T: an array of its shape in the working dtype (its bits are the caller's)."""
    shape = _scores_shape(qa, ka)
    if not isinstance(raw, np.ndarray) or raw.shape != shape or raw.dtype != work:
        raise ValueError(f"raw must be the product q @ k^T, a {work} array of shape {shape}")
    return raw


def _check_out(out: Any, qa: FloatArray, ka: FloatArray, work: np.dtype[Any]) -> tuple[FloatArray, FloatArray]:
    """``out`` of attention_parts: two apart, writable, C-contiguous arrays of the scores' shape and working dtype."""
    shape = _scores_shape(qa, ka)
    if not (isinstance(out, tuple) and len(out) == 2 and all(
            isinstance(a, np.ndarray) and a.shape == shape and a.dtype == work and a.flags.c_contiguous
            and a.flags.writeable for a in out)) or np.shares_memory(*out):
        raise ValueError(f"out must be two writable C-contiguous {work} arrays of shape {shape} that do not overlap")
    return out


def _scores_shape(qa: FloatArray, ka: FloatArray) -> tuple[int, ...]:
    return np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2]) + (qa.shape[-2], ka.shape[-2])


class AttentionParts(NamedTuple):
    """What :func:`attention_parts` returns: every matrix one attention call computes."""

    raw: FloatArray  # q @ k^T, before the scale
    scores: FloatArray  # raw * scale, before the masks
    weights: FloatArray | None  # None with ``weights=False``
    output: FloatArray | None


def attention_parts(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, scale: float | None = None, causal: bool = False,
    mask: ArrayLike | None = None, *, weights: bool = True, raw: FloatArray | None = None,
    out: tuple[FloatArray, FloatArray] | None = None,
) -> AttentionParts:
    """:func:`attention`, keeping the raw and the scaled score matrices (NumPy only).

    One product ``q @ k^T`` serves all four results, so a caller that shows
    the scores too (the Attention view) does not pay for it twice.
    ``weights`` and ``output`` are :func:`attention`'s bit for bit; ``raw``
    and ``scores`` are ``attention_scores(q, k, 1.0)`` and
    ``attention_scores(q, k, scale)`` in the working dtype.

    ``weights=False`` computes ``raw`` and ``scores`` only (the same checks and
    bits; ``weights`` and ``output`` None).  Each leading index is its own
    product and softmax: a caller needing a few heads' weights calls this on
    their slices, the full call's slices bit for bit; ``raw``, the ``raw``
    of such an earlier call (or its slice), is used instead of a new product.
    ``out``, two apart, writable, C-contiguous arrays of the scores' shape and
    working dtype, receive ``raw`` (unless given) and ``scores`` (same bits).
    """
    return _attention_host(q, k, v, mask, scale=scale, causal=causal, keep_raw=True, keep_weights=weights,
                           known=raw, out=out)


def _attention_host(
    q: ArrayLike, k: ArrayLike, v: ArrayLike, mask: ArrayLike | None, scale: float | None, causal: bool,
    offload: bool = False, keep_raw: bool = False, keep_weights: bool = True,
    known: FloatArray | None = None, out: tuple[FloatArray, FloatArray] | None = None,
):
    """:func:`attention` in NumPy; with ``offload``, large work may go to the device;
    with ``keep_raw``, :class:`AttentionParts` (never offloaded; the product ``known``
    if given), without the weights and the output unless ``keep_weights``."""
    qa = _check_operand(q, "q")
    ka = _check_operand(k, "k")
    va = _check_operand(v, "v")
    n_q, n_k, allowed, batch = _check_shapes(qa, ka, va, mask, causal)
    if offload and _backends.offload_wanted(math.prod(batch) * n_q * n_k):
        return _backends.run(
            _attention_on_device, [qa, ka, va, mask], {"scale": scale, "causal": causal}, _attention_host
        )
    out_dtype = np.result_type(qa, ka, va)
    work = _working_dtype(out_dtype)
    if keep_raw:  # the product once, the scale in a new array: the same bits as _scores gives
        into = (None, None) if out is None else _check_out(out, qa, ka, work)
        raw = _scores(qa, ka, 1.0, work, out=into[0]) if known is None else _check_known(known, qa, ka, work)
        s = 1.0 / math.sqrt(qa.shape[-1]) if scale is None else _check_scale(scale)
        with np.errstate(all="ignore"):
            normal = s != 1.0 and np.isfinite(work.type(s)) and work.type(s) >= np.finfo(work).tiny
            scores = np.multiply(raw, work.type(s), out=into[1]) if normal else _times(raw.copy(), s)  # _times' bits
            if into[1] is not None and scores is not into[1]:  # _times' float64 path made a new array
                np.copyto(into[1], scores)
                scores = into[1]
        if not keep_weights:
            return AttentionParts(raw, scores, None, None)
    else:
        scores = _scores(qa, ka, scale, work)
    with np.errstate(all="ignore"):
        unmasked = scores
        if allowed is not None:
            scores = np.where(allowed, scores, work.type(-np.inf))
        # all -inf rows: softmax gives 0/0 = NaN there; make them zero
        empty = (scores == -np.inf).all(axis=-1, keepdims=True)
        weights = softmax(scores, axis=-1)
        np.copyto(weights, 0, where=empty)
        output = np.matmul(weights, va.astype(work, copy=False))
        np.copyto(output, 0, where=empty)
    if weights.shape[:-2] != batch:
        weights = np.broadcast_to(weights, batch + (n_q, n_k))
    weights = np.array(weights, dtype=out_dtype, copy=None, order="C")
    output = output.astype(out_dtype, copy=False)
    if keep_raw:
        return AttentionParts(raw, unmasked, weights, output)
    return weights, output


def _attention_on_device(cp: Any, kernels: Any, q: Any, k: Any, v: Any, mask: Any, scale: float | None,
                         causal: bool) -> tuple[Any, Any]:
    """:func:`attention` on CuPy arrays (``cp`` is CuPy, ``kernels`` the
    project's ``cupy_backend``): the NumPy path's steps and rules, with the
    softmax kernel for the weights.  Validation raises what NumPy's does."""

    def operand(a: Any, name: str) -> Any:
        a = _as_float_device(cp.asarray(a))
        _check_ndim(a.shape, name)
        return a

    qa, ka, va = operand(q, "q"), operand(k, "k"), operand(v, "v")
    host_mask = cp.asnumpy(mask) if _backends.is_device_array(mask) else mask
    n_q, n_k, allowed, batch = _check_shapes(qa, ka, va, host_mask, causal)
    out_dtype = np.result_type(qa.dtype, ka.dtype, va.dtype)
    work = _working_dtype(out_dtype)
    s = 1.0 / math.sqrt(qa.shape[-1]) if scale is None else _check_scale(scale)
    scores = cp.matmul(qa.astype(work, copy=False), cp.swapaxes(ka.astype(work, copy=False), -1, -2))
    scores = _times(scores, s)
    if allowed is not None:
        scores = cp.where(cp.asarray(allowed), scores, work.type(-np.inf))
    empty = (scores == work.type(-np.inf)).all(axis=-1, keepdims=True)
    weights = cp.where(empty, work.type(0), kernels.softmax(scores, axis=-1))
    output = cp.matmul(weights, va.astype(work, copy=False))
    output = cp.where(empty, work.type(0), output)
    if weights.shape[:-2] != batch:
        weights = cp.broadcast_to(weights, batch + (n_q, n_k))
    weights = cp.ascontiguousarray(weights).astype(out_dtype, copy=False)
    return weights, output.astype(out_dtype, copy=False)
