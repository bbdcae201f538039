"""Classification losses on softmax besides plain cross-entropy, with their gradients written out.

Plain NumPy; compute's dtype rules; no warnings.  Every loss takes logits
(classes along ``axis``) and integer targets, optionally label-smoothed into
a target distribution ``y`` by :func:`compute.smoothed_target` (both
conventions), and returns one loss per row; every ``*_grad`` returns
``dL/dlogits`` of that per-row loss, the logits' shape.

* :func:`softmax_mse`: ``sum_i (p_i - y_i)^2``.  Its gradient goes through
  the softmax Jacobian, ``g = J (2 (p - y))`` with ``J = diag(p) - p p^T``:
  ``g_j = 2 p_j ((p_j - y_j) - sum_i p_i (p_i - y_i))``.  Every term carries
  a factor ``p_j``, and at the true class ``1 - p_t`` as well, so it dies
  where ``p`` saturates, right or wrong: the articles' reason not to train
  softmax with MSE.
* :func:`focal_loss` (Lin et al. 2017): ``-sum_i y_i (1 - p_i)^gamma log p_i``;
  ``gamma = 0`` is cross-entropy.  With ``a_i = p_i dL/dp_i =
  y_i (gamma (1 - p_i)^(gamma - 1) p_i log p_i - (1 - p_i)^gamma)`` the chain
  rule through ``J`` gives ``g = a - p sum(a)``.
* :func:`weighted_cross_entropy`: ``-sum_i w_i y_i log p_i`` (class weights
  ``w``, larger for rare classes); ``g = p sum(w y) - w y``, which for a hard
  target is ``w_t (p - y)``.  Per row, as ``torch.nn.functional.cross_entropy(
  weight=w, reduction="none")`` gives it; a "mean" over a batch in PyTorch's
  sense divides the sum by ``sum_n w_{t_n}`` (:func:`batch_mean` does).

:func:`loss_rows` is the trainer's entry: 2-D logits, a target distribution,
the loss by name, ``(losses, grads)`` in one pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _real
from compute._gradients import target_rows
from compute._rows import FloatArray, _restore
from compute._softmax import log_softmax

__all__ = [
    "LOSSES",
    "batch_mean",
    "focal_loss",
    "focal_loss_grad",
    "loss_rows",
    "softmax_mse",
    "softmax_mse_grad",
    "weighted_cross_entropy",
    "weighted_cross_entropy_grad",
]

#: The losses :func:`loss_rows` knows, by name.
LOSSES = ("cross_entropy", "mse", "focal", "weighted")


def _check_gamma(gamma: Any) -> float:
    g, plain = _real(gamma, "gamma")
    if not 0.0 <= g <= 100.0:  # also NaN
        raise ValueError(f"gamma must be in [0, 100], got {plain!r}")
    return g


def _check_weights(weights: ArrayLike, k: int) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (k,):
        raise ValueError(f"weights must hold one number per class ({k}), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and >= 0")
    return w


# --------------------------------------------------------------------------
# the formulas, on rows (classes last), in the rows' dtype
# --------------------------------------------------------------------------
def _mse(z: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    lp = log_softmax(z, axis=-1)
    p = np.exp(lp)
    r = p - y
    loss = (r * r).sum(axis=-1)
    grad = 2 * p * (r - (p * r).sum(axis=-1, keepdims=True))
    return loss, grad


def _focal(z: FloatArray, y: FloatArray, gamma: float) -> tuple[FloatArray, FloatArray]:
    lp = log_softmax(z, axis=-1)
    p = np.exp(lp)
    q = -np.expm1(lp)  # 1 - p without the cancellation near p = 1
    focus = q ** gamma  # (1 - p)^0 is 1, also at p = 1
    # a = y (gamma (1-p)^gamma p log p / (1-p) - (1-p)^gamma); log p / (1-p) -> -1 as p -> 1
    ratio = np.where(q > 0, lp / np.where(q > 0, q, 1), -1.0)
    yl = np.where(y == 0, 0, y * lp)  # 0 * log 0 is 0 (a masked class with no target mass)
    loss = 0 - (focus * yl).sum(axis=-1)
    a = np.where(y == 0, 0, y * (gamma * focus * p * ratio - focus))
    grad = a - p * a.sum(axis=-1, keepdims=True)
    return loss, grad


def _weighted(z: FloatArray, y: FloatArray, w: np.ndarray) -> tuple[FloatArray, FloatArray]:
    lp = log_softmax(z, axis=-1)
    p = np.exp(lp)
    wy = (w * y).astype(z.dtype, copy=False)
    loss = 0 - np.where(wy == 0, 0, wy * lp).sum(axis=-1)
    grad = p * wy.sum(axis=-1, keepdims=True) - wy
    return loss, grad


def _cross_entropy(z: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    lp = log_softmax(z, axis=-1)
    loss = 0 - np.where(y == 0, 0, y * lp).sum(axis=-1)
    return loss, np.exp(lp) - y


def loss_rows(loss: str, logits: FloatArray, y: FloatArray, *, gamma: float = 2.0,
              weights: ArrayLike | None = None) -> tuple[FloatArray, FloatArray]:
    """``(per-row loss, dL/dlogits)`` for 2-D ``logits`` and target distributions ``y``.

    ``loss`` is one of :data:`LOSSES`; ``gamma`` is the focal loss's,
    ``weights`` the weighted loss's (one per class; ones when None).
    """
    z = np.asarray(logits)
    y = np.asarray(y, dtype=z.dtype)
    with np.errstate(all="ignore"):
        if loss == "cross_entropy":
            return _cross_entropy(z, y)
        if loss == "mse":
            return _mse(z, y)
        if loss == "focal":
            return _focal(z, y, _check_gamma(gamma))
        if loss == "weighted":
            w = np.ones(z.shape[-1]) if weights is None else _check_weights(weights, z.shape[-1])
            return _weighted(z, y, w)
    raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")


def batch_mean(losses: ArrayLike, target: ArrayLike | None = None, weights: ArrayLike | None = None) -> float:
    """The batch's loss: the mean of the rows, or with class ``weights`` (and the hard ``target``)
    PyTorch's weighted mean ``sum(losses) / sum(weights[target])``."""
    losses = np.asarray(losses, dtype=np.float64)
    if weights is None:
        return float(losses.mean())
    w = np.asarray(weights, dtype=np.float64)[np.asarray(target)]
    return float(losses.sum() / w.sum())


# --------------------------------------------------------------------------
# public API: integer targets, label smoothing, any class axis
# --------------------------------------------------------------------------
def _per_row(kind: str, logits, target, label_smoothing, convention, axis, **kw):
    rows, y, ax, out_dtype, shape = target_rows(logits, target, label_smoothing, convention, axis)
    loss, grad = loss_rows(kind, rows, y, **kw)
    return np.asarray(loss).astype(out_dtype, copy=False), _restore(grad, ax, out_dtype, shape)


def softmax_mse(logits: ArrayLike, target: ArrayLike, label_smoothing: float = 0.0,
                convention: str = "others", axis: int = -1) -> FloatArray:
    """``sum_i (softmax(logits)_i - y_i)^2`` per row, ``y`` the (smoothed) one-hot target.

    Same arguments and shapes as :func:`compute.cross_entropy`; in ``[0, 2]``.
    """
    return _per_row("mse", logits, target, label_smoothing, convention, axis)[0]


def softmax_mse_grad(logits: ArrayLike, target: ArrayLike, label_smoothing: float = 0.0,
                     convention: str = "others", axis: int = -1) -> FloatArray:
    """Gradient of :func:`softmax_mse` with respect to the logits (through the softmax Jacobian)."""
    return _per_row("mse", logits, target, label_smoothing, convention, axis)[1]


def focal_loss(logits: ArrayLike, target: ArrayLike, gamma: float = 2.0, label_smoothing: float = 0.0,
               convention: str = "others", axis: int = -1) -> FloatArray:
    """Focal loss ``-sum_i y_i (1 - p_i)^gamma log p_i`` per row (``gamma = 0``: cross-entropy).

    ``gamma`` in ``[0, 100]``; ``log p`` from :func:`compute.log_softmax`, so
    huge logits give finite losses.
    """
    return _per_row("focal", logits, target, label_smoothing, convention, axis, gamma=gamma)[0]


def focal_loss_grad(logits: ArrayLike, target: ArrayLike, gamma: float = 2.0, label_smoothing: float = 0.0,
                    convention: str = "others", axis: int = -1) -> FloatArray:
    """Gradient of :func:`focal_loss` with respect to the logits: ``a - p sum(a)``."""
    return _per_row("focal", logits, target, label_smoothing, convention, axis, gamma=gamma)[1]


def weighted_cross_entropy(logits: ArrayLike, target: ArrayLike, weights: ArrayLike,
                           label_smoothing: float = 0.0, convention: str = "others",
                           axis: int = -1) -> FloatArray:
    """Class-weighted cross-entropy ``-sum_i w_i y_i log p_i`` per row (``weights``: one per class, >= 0)."""
    return _per_row("weighted", logits, target, label_smoothing, convention, axis, weights=weights)[0]


def weighted_cross_entropy_grad(logits: ArrayLike, target: ArrayLike, weights: ArrayLike,
                                label_smoothing: float = 0.0, convention: str = "others",
                                axis: int = -1) -> FloatArray:
    """Gradient of :func:`weighted_cross_entropy`: ``p sum(w y) - w y``."""
    return _per_row("weighted", logits, target, label_smoothing, convention, axis, weights=weights)[1]
