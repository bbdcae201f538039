"""Derivatives of softmax and the cross-entropy loss, in plain NumPy.

Plain NumPy; compute's dtype rules; no warnings.

The softmax Jacobian
--------------------
For ``p = softmax(s)``, ``dp_i / ds_j = p_i (delta_ij - p_j)``, i.e.
``J = diag(p) - p p^T``.  It only needs ``p``, so :func:`softmax_jacobian`
takes the probabilities, not the scores.  It is symmetric, its rows and
columns sum to ``p_i (1 - sum(p)) = 0`` (the output always sums to 1, so
moving every score together changes nothing) and it is positive
semi-definite.  With a temperature, ``p = softmax(s / T)``, the chain rule
gives ``dp/ds = softmax_jacobian(p) / T``: a low temperature makes softmax
steeper, until it saturates (``p`` one-hot, ``J = 0``).  The diagonal is
computed as ``p_i (1 - p_i)`` (``1 - p_i`` is exact for ``p_i >= 0.5``),
the off-diagonal as ``-p_i p_j``, so ``J`` is exactly symmetric.

Cross-entropy with label smoothing
----------------------------------
``cross_entropy = -sum_i y_i log_softmax(logits)_i`` with the target
distribution ``y`` from :func:`smoothed_target`, and its gradient with
respect to the logits is ``softmax(logits) - y`` (because ``y`` sums to 1).
Two conventions for the smoothing mass ``a``:

* ``"others"`` (default, the articles' convention): the target class gets
  ``1 - a``, each of the ``K - 1`` other classes ``a / (K - 1)`` (``K == 1``:
  just ``[1.0]``).
* ``"pytorch"`` (``torch.nn.functional.cross_entropy(label_smoothing=a)``):
  ``a`` is spread over all ``K`` classes, so the target gets
  ``1 - a + a / K`` and the others ``a / K``.

The loss is computed from the logits with :func:`compute.log_softmax`, never
as ``log(softmax)``, so huge logits give the exact finite loss
(``cross_entropy([1000, 0], 1) == 1000.0``, not ``inf``).  A class with zero
target mass contributes nothing even where its log-probability is ``-inf``
(a masked ``-inf`` logit): ``0 * log 0`` is taken as 0, not NaN.  A row of
logits with NaN, or only ``-inf``, gives NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_count, _real
from compute._rows import (
    FloatArray,
    _as_float_array,
    _prepare,
    _refuse_masked,
    _restore,
    _rows_last,
    _working_dtype,
)
from compute._softmax import log_softmax, softmax

__all__ = [
    "cross_entropy",
    "cross_entropy_grad",
    "smoothed_target",
    "softmax_jacobian",
]

CONVENTIONS = ("others", "pytorch")


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------
def _check_label_smoothing(label_smoothing: float) -> float:
    result, plain = _real(label_smoothing, "label_smoothing")
    if not 0.0 <= result <= 1.0:  # also rejects NaN
        raise ValueError(f"label_smoothing must be in [0, 1], got {plain!r}")
    return result


def _check_convention(convention: str) -> str:
    if not isinstance(convention, str) or convention not in CONVENTIONS:
        raise ValueError(f"convention must be 'others' or 'pytorch', got {convention!r}")
    return convention


def _check_target(target: ArrayLike, n_classes: int) -> NDArray[np.intp]:
    _refuse_masked(target, "target")
    t = np.asarray(target)
    if t.dtype.kind not in "iu":
        raise TypeError(
            f"target must be integer class indices, got {target!r} (dtype {t.dtype})"
        )
    bad = (t < 0) | (t >= n_classes)
    if bad.any():
        raise ValueError(
            f"target must be in [0, {n_classes}) (n_classes = {n_classes}), "
            f"got {t[bad].reshape(-1)[0]}"
        )
    return t.astype(np.intp)


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
def softmax_jacobian(p: ArrayLike) -> FloatArray:
    """The softmax Jacobian ``diag(p) - p p^T`` over the last axis of ``p``.

    ``p`` are probabilities (``softmax`` of something), used as given.
    Batched over leading axes: shape ``(..., n)`` gives ``(..., n, n)`` with
    ``J[..., i, j] = dp_i / ds_j``; a 0-d ``p`` is a one-element vector
    (result shape ``(1, 1)``).  ``J`` is exactly symmetric and its rows sum
    to 0 up to rounding.  For ``p = softmax(s, temperature=T)`` the Jacobian
    with respect to ``s`` is ``softmax_jacobian(p) / T``.  Same dtype rules
    as :func:`compute.softmax`.
    """
    arr = _as_float_array(p)
    out_dtype = arr.dtype
    a = arr.astype(_working_dtype(out_dtype), copy=False)
    if a.ndim == 0:
        a = a.reshape(1)
    n = a.shape[-1]
    with np.errstate(all="ignore"):
        jac = -(a[..., :, None] * a[..., None, :])
        i = np.arange(n)
        jac[..., i, i] = a * (1 - a)
        return jac.astype(out_dtype, copy=False)


def smoothed_target(
    n_classes: int,
    target: ArrayLike,
    label_smoothing: float = 0.0,
    convention: str = "others",
) -> NDArray[np.float64]:
    """The (label-smoothed) target distribution ``y`` over ``n_classes``.

    Parameters
    ----------
    n_classes
        ``K >= 1``.
    target
        the true class, an int or an integer array (one per row).
    label_smoothing
        the smoothing mass ``a`` in ``[0, 1]``.
    convention
        ``"others"`` (default): target ``1 - a``, every other
        class ``a / (K - 1)``, and ``[1.0]`` for ``K == 1``.
        ``"pytorch"``: target ``1 - a + a / K``, others ``a / K``.

    Returns
    -------
    ndarray
        float64 array of shape ``target.shape + (K,)``; each row sums to 1.
        E.g. ``K = 4, a = 0.1, target = 0``: ``"others"`` gives
        ``[0.9, 0.0333, 0.0333, 0.0333]``, ``"pytorch"``
        ``[0.925, 0.025, 0.025, 0.025]``.

    Raises
    ------
    ValueError
        ``K < 1``, a target outside ``[0, K)``, ``a`` outside
        ``[0, 1]`` or NaN, or an unknown convention (messages name the
        value).
    TypeError
        non-integer ``n_classes`` or ``target``, non-real ``a``.
    """
    k = _check_count(n_classes, "n_classes", 1)
    a = _check_label_smoothing(label_smoothing)
    conv = _check_convention(convention)
    t = _check_target(target, k)
    if k == 1:
        on, off = 1.0, 0.0
    elif conv == "others":
        on, off = 1.0 - a, a / (k - 1)
    else:
        on, off = 1.0 - a + a / k, a / k
    y = np.full(t.shape + (k,), off, dtype=np.float64)
    np.put_along_axis(y, t[..., None], on, axis=-1)
    return y


def target_rows(
    logits: ArrayLike,
    target: ArrayLike,
    label_smoothing: float,
    convention: str,
    axis: int,
) -> tuple[FloatArray, FloatArray, int, np.dtype[Any], tuple[int, ...]]:
    """Logit rows (working dtype, classes last), the matching target distributions ``y``, and what
    :func:`compute._rows._restore` needs (shared with :mod:`compute._losses`)."""
    a, ax, out_dtype, shape = _prepare(logits, axis)
    rows = _rows_last(a, ax)
    batch = rows.shape[:-1]
    _refuse_masked(target, "target")
    t = np.asarray(target)
    try:
        t = np.broadcast_to(t, batch)
    except ValueError:
        raise ValueError(
            f"target shape {t.shape} does not match the logits' shape without "
            f"the class axis, {batch}"
        ) from None
    y = smoothed_target(rows.shape[-1], t, label_smoothing, convention)
    return rows, y.astype(rows.dtype), ax, out_dtype, shape


def cross_entropy(
    logits: ArrayLike,
    target: ArrayLike,
    label_smoothing: float = 0.0,
    convention: str = "others",
    axis: int = -1,
) -> FloatArray:
    """Cross-entropy ``-sum(y * log_softmax(logits))`` along the class ``axis``.

    ``y = smoothed_target(K, target, label_smoothing, convention)``.  The
    ``target`` (int or integer array) must broadcast to the logits' shape
    without ``axis``.  Returns an ndarray of that shape (0-d for one row) in
    the logits' float dtype (float16 computed in float32; a loss above 65504
    is then ``inf``).  Computed in the log domain: finite for any finite
    logits; ``0 * log 0`` counts as 0 (masked ``-inf`` logits with no target
    mass are fine), a ``-inf`` logit with target mass gives ``inf``, a NaN
    or all-``-inf`` row gives NaN.  With hard targets the loss is ``>= 0``.
    """
    rows, y, _, out_dtype, _ = target_rows(logits, target, label_smoothing, convention, axis)
    with np.errstate(all="ignore"):
        lp = log_softmax(rows, axis=-1)
        terms = np.where(y == 0, 0, y * lp)
        loss = 0 - terms.sum(axis=-1)  # "0 -": no -0.0 for a zero loss
        return np.asarray(loss).astype(out_dtype, copy=False)  # float16 may overflow


def cross_entropy_grad(
    logits: ArrayLike,
    target: ArrayLike,
    label_smoothing: float = 0.0,
    convention: str = "others",
    axis: int = -1,
) -> FloatArray:
    """Gradient of :func:`cross_entropy` with respect to the logits: ``p - y``.

    ``p = softmax(logits)`` along ``axis``.  Same arguments as
    :func:`cross_entropy`; the result has the logits' shape and float dtype
    and sums to 0 along ``axis`` (up to rounding).  NaN/all-``-inf`` rows
    give NaN.  With a temperature, ``logits = s / T``, the gradient with
    respect to ``s`` is this divided by ``T``.
    """
    rows, y, ax, out_dtype, shape = target_rows(logits, target, label_smoothing, convention, axis)
    with np.errstate(all="ignore"):
        g = softmax(rows, axis=-1) - y
        return _restore(g, ax, out_dtype, shape)
