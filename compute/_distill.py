"""Temperature in training: knowledge distillation (Hinton et al. 2015) and InfoNCE.

Plain NumPy.

Distillation
------------
A teacher's logits ``v`` softened at temperature ``T`` are the student's soft
targets ``q = softmax(v / T)``; :func:`soft_targets` also takes the teacher's
probabilities (``softmax(log p / T)``, the same thing).  The articles' teacher
says 0.95 / 0.04 / 0.01 (cat, dog, bird); at ``T = 4`` that becomes about
0.564 / 0.255 / 0.181 (entropy 0.22 nats at ``T = 1``, 0.98 at ``T = 4``).  Hinton's loss mixes the hard-label cross-entropy and
the soft one, the soft term multiplied by ``T^2`` so that its gradient keeps
its size as ``T`` grows:

``L = (1 - alpha) CE(softmax(z), y) + alpha T^2 KL(q || softmax(z / T))``

and ``dL/dz = (1 - alpha)(softmax(z) - y) + alpha T (softmax(z / T) - q)``.
:func:`dark_knowledge` is the entropy of the soft targets: what they say
beyond the top class (0 for a one-hot teacher).

InfoNCE
-------
For a batch of ``B`` paired embeddings with similarities ``S`` (``B x B``,
row ``i`` against column ``j``; the pairs on the diagonal), InfoNCE is the
cross-entropy of ``softmax(S_i / tau)`` against ``i``.  CLIP averages the rows'
and the columns' losses (``symmetric``) and learns ``tau``, starting near
0.07.  The gradient with respect to ``S`` is ``(P - I) / (B tau)`` for the
rows (``P`` the softmax along each row), and the same with the softmax down
each column for the columns' loss; the symmetric loss averages the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from compute._softmax import log_softmax, softmax
from compute._steps import entropy

__all__ = [
    "InfoNCE",
    "dark_knowledge",
    "distillation_loss",
    "info_nce",
    "info_nce_sweep",
    "soft_targets",
]


def _check_positive(value: float, name: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def soft_targets(logits: ArrayLike | None = None, temperature: float = 1.0, *,
                 probabilities: ArrayLike | None = None) -> np.ndarray:
    """``softmax(logits / T)`` along the last axis, or from ``probabilities``: ``softmax(log p / T)``."""
    t = _check_positive(temperature, "temperature")
    if (logits is None) == (probabilities is None):
        raise ValueError("give logits or probabilities, not both")
    if probabilities is not None:
        p = np.asarray(probabilities, dtype=np.float64)
        if np.any(p < 0) or np.any(~np.isfinite(p)):
            raise ValueError("probabilities must be finite and >= 0")
        with np.errstate(divide="ignore"):
            z = np.log(p)
    else:
        z = np.asarray(logits, dtype=np.float64)
    return softmax(z, temperature=t, axis=-1)


def dark_knowledge(logits: ArrayLike, temperature: float = 1.0) -> np.ndarray:
    """The entropy (nats) of each row's soft targets at ``temperature``."""
    return np.asarray(entropy(soft_targets(logits, temperature), axis=-1))


def distillation_loss(student: ArrayLike, teacher: ArrayLike, labels: ArrayLike, temperature: float,
                      alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-row Hinton loss and its gradient with respect to the student's logits.

    ``student`` and ``teacher`` are ``(rows, classes)`` logits, ``labels`` the
    hard classes; ``alpha`` in ``[0, 1]`` is the soft term's share.
    """
    z = np.asarray(student, dtype=np.float64)
    v = np.asarray(teacher, dtype=np.float64)
    if z.ndim != 2 or z.shape != v.shape:
        raise ValueError(f"student and teacher logits must be the same (rows, classes), got {z.shape} and {v.shape}")
    t = _check_positive(temperature, "temperature")
    a = float(alpha)
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    y = np.asarray(labels)
    rows = np.arange(z.shape[0])
    lp = log_softmax(z, axis=-1)
    lq_student = log_softmax(z, temperature=t, axis=-1)
    lq_teacher = log_softmax(v, temperature=t, axis=-1)
    q = np.exp(lq_teacher)
    with np.errstate(all="ignore"):
        kl = np.where(q > 0, q * (lq_teacher - lq_student), 0.0).sum(axis=-1)
    hard = -lp[rows, y]
    loss = (1 - a) * hard + a * t * t * kl
    onehot = np.zeros_like(z)
    onehot[rows, y] = 1.0
    grad = (1 - a) * (np.exp(lp) - onehot) + a * t * (np.exp(lq_student) - q)
    return loss, grad


@dataclass(frozen=True)
class InfoNCE:
    """InfoNCE over one similarity matrix at one temperature."""

    tau: float
    loss: float  # mean over the rows (and the columns, when symmetric)
    row_probabilities: np.ndarray  # softmax(S / tau) along each row
    column_probabilities: np.ndarray  # softmax(S / tau) down each column
    grad: np.ndarray  # dloss / dS
    symmetric: bool

    @property
    def positive(self) -> np.ndarray:
        """Each row's probability of its own pair (the diagonal)."""
        return np.diagonal(self.row_probabilities).copy()


def info_nce(similarity: ArrayLike, tau: float, *, symmetric: bool = True) -> InfoNCE:
    """InfoNCE of a square similarity matrix (pairs on the diagonal) at temperature ``tau``."""
    s = np.asarray(similarity, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 1:
        raise ValueError(f"the similarity matrix must be square, got shape {s.shape}")
    tau = _check_positive(tau, "tau")
    b = s.shape[0]
    diag = np.arange(b)
    lr = log_softmax(s, temperature=tau, axis=1)
    lc = log_softmax(s, temperature=tau, axis=0)
    pr, pc = np.exp(lr), np.exp(lc)
    eye = np.eye(b)
    row_loss = float(-lr[diag, diag].mean())
    grad_rows = (pr - eye) / (b * tau)
    if not symmetric:
        return InfoNCE(tau, row_loss, pr, pc, grad_rows, False)
    col_loss = float(-lc[diag, diag].mean())
    grad_cols = (pc - eye) / (b * tau)
    return InfoNCE(tau, (row_loss + col_loss) / 2, pr, pc, (grad_rows + grad_cols) / 2, True)


def info_nce_sweep(similarity: ArrayLike, taus: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(symmetric loss, mean positive probability)`` of :func:`info_nce` at every ``tau``, in one pass."""
    s = np.asarray(similarity, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != s.shape[1] or s.shape[0] < 1:
        raise ValueError(f"the similarity matrix must be square, got shape {s.shape}")
    t = np.asarray(taus, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("tau must be positive numbers")
    scaled = s[None, :, :] / t[:, None, None]
    diag = np.arange(s.shape[0])
    rows = log_softmax(scaled, axis=2)[:, diag, diag]
    cols = log_softmax(scaled, axis=1)[:, diag, diag]
    return -(rows.mean(axis=1) + cols.mean(axis=1)) / 2, np.exp(rows).mean(axis=1)
