"""Mixture-of-experts routing: each token's top-k experts and their gate weights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_count, check_temperature
from compute._rows import IntArray, _logit_rows, _refuse_masked
from compute._softmax import softmax

__all__ = ["MoERoute", "expert_load", "moe_route"]


@dataclass(frozen=True, eq=False)
class MoERoute:
    """Top-k routing of a batch of tokens; see :func:`moe_route`.

    Attributes
    ----------
    indices
        int64 ``(tokens, k)``: the chosen experts of each token,
        by gate weight descending (ties: lower expert index first).
    weights
        float64 ``(tokens, k)``: their softmax gate weights
        renormalised over the ``k`` chosen experts (each row sums to 1).
    probs
        float64 ``(tokens, experts)``: the full softmax of the gate
        logits at the temperature, before the top-k choice.
    """

    indices: IntArray
    weights: NDArray[np.float64]
    probs: NDArray[np.float64]

    def __iter__(self):  # allows ``indices, weights = moe_route(...)``
        return iter((self.indices, self.weights))


def moe_route(gate_logits: ArrayLike, k: int, temperature: float = 1.0) -> MoERoute:
    """Route each token to its top-``k`` experts, as a mixture-of-experts gate does.

    For each row of ``gate_logits`` (one token's score per expert) the ``k``
    experts with the largest logits are chosen (ties broken towards the
    lower expert index) and weighted by ``softmax(chosen logits / T)``, which
    is the full softmax restricted to the chosen experts and renormalised
    (Mixtral's and Switch's gating for ``k = 2`` / ``k = 1``).  The
    temperature never changes which experts are chosen, only how the weight
    is shared.

    Parameters
    ----------
    gate_logits
        ``(tokens, experts)``, or one token ``(experts,)``
        (treated as one row).
    k
        integer, ``1 <= k <= experts``.
    temperature
        finite real > 0.

    Returns
    -------
    MoERoute
        A :class:`MoERoute` (unpacks as ``indices, weights``).

    Raises
    ------
    ValueError
        bad ``k`` or temperature, a NaN or an all ``-inf`` row,
        more than 2 dimensions.
    """
    t = check_temperature(temperature)
    _refuse_masked(gate_logits, "gate_logits")
    a = np.asarray(gate_logits)
    if a.ndim > 2:
        raise ValueError(f"gate_logits must be (tokens, experts), got shape {a.shape}")
    rows, _ = _logit_rows(np.atleast_2d(a) if a.ndim == 1 else a, "gate_logits")
    n_experts = rows.shape[1]
    k = _check_count(k, "k", 1)
    if k > n_experts:
        raise ValueError(f"k must be <= the number of experts ({n_experts}), got {k}")
    order = np.argsort(-rows, axis=-1, kind="stable")[:, :k]
    chosen = np.take_along_axis(rows, order, axis=-1)
    return MoERoute(
        indices=order.astype(np.int64),
        weights=softmax(chosen, temperature=t),
        probs=softmax(rows, temperature=t),
    )


def expert_load(indices: ArrayLike, n_experts: int, weights: ArrayLike | None = None) -> NDArray[Any]:
    """Load per expert: how many (token, slot) routes chose each expert.

    ``indices`` is :attr:`MoERoute.indices` (any shape of expert indices).
    Without ``weights`` the result is int64 counts of length ``n_experts``
    (they sum to ``indices.size``); with ``weights`` (same shape) it is the
    float64 sum of the gate weights routed to each expert.
    """
    n_experts = _check_count(n_experts, "n_experts", 1)
    _refuse_masked(indices, "indices")
    _refuse_masked(weights, "weights")
    idx = np.asarray(indices)
    if idx.size and idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
    idx = idx.astype(np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= n_experts):
        raise ValueError(f"expert indices must be in [0, {n_experts}), got {idx.min()}..{idx.max()}")
    if weights is None:
        return np.bincount(idx, minlength=n_experts).astype(np.int64)
    w = np.asarray(weights, dtype=np.float64)
    if w.size != idx.size:
        raise ValueError(f"weights must match indices in size ({idx.size}), got {w.size}")
    return np.bincount(idx, weights=w.ravel(), minlength=n_experts)
