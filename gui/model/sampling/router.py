"""The mixture-of-experts router of the Sampling view: seeded tokens through a softmax gate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import compute

#: Router token embeddings have this many dimensions.
ROUTER_DIM = 32
#: The router heatmap shows at most this many tokens.
ROUTER_SHOWN = 24


@dataclass(frozen=True, eq=False)
class RouterResult:
    gate_logits: np.ndarray  # (tokens, experts), already divided by the gate temperature
    gates: np.ndarray  # (tokens, experts) full softmax of the gate logits
    indices: np.ndarray  # (tokens, k) chosen experts, by weight descending
    weights: np.ndarray  # (tokens, k) their gate weights renormalised over the k
    load: np.ndarray  # (experts,) tokens routed to each expert
    importance: np.ndarray  # (experts,) sum of the full softmax gates over the tokens

    @property
    def dense(self) -> np.ndarray:
        """(tokens, experts): the renormalised weight of each chosen expert, 0 elsewhere."""
        out = np.zeros_like(self.gates)
        np.put_along_axis(out, self.indices, self.weights, axis=1)
        return out

    @property
    def importance_cv2(self) -> float:
        """The squared coefficient of variation of the importance (Shazeer et al.'s balance loss)."""
        m = float(self.importance.mean())
        return float(self.importance.var() / (m * m)) if m > 0 else float("nan")


def router_scores(experts: int, tokens: int, seed: int) -> np.ndarray:
    """(tokens, experts): seeded token embeddings through a seeded router matrix, plus its bias (before T)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, ROUTER_DIM))
    # the matrix for expert e does not depend on how many experts there are
    w = np.random.default_rng([seed, 1]).standard_normal((64, ROUTER_DIM))[:experts].T / np.sqrt(ROUTER_DIM)
    # a learned router has a bias: a few experts are favoured (what load balancing fights)
    bias = np.random.default_rng([seed, 2]).normal(0.0, 0.5, 64)[:experts]
    return x @ w + bias


def router(experts: int, k: int, tokens: int, seed: int, temperature: float,
           scores: np.ndarray | None = None) -> RouterResult:
    """Seeded token embeddings through a seeded router matrix, gated by softmax at ``temperature``.

    ``scores`` is :func:`router_scores` of the same experts, tokens and seed when already made.
    """
    if scores is None:
        scores = router_scores(experts, tokens, seed)
    logits = scores / temperature
    indices, weights = compute.moe_route(logits, min(k, experts))
    gates = compute.softmax(logits, axis=-1)
    return RouterResult(logits, gates, np.asarray(indices), np.asarray(weights),
                        compute.expert_load(indices, experts), gates.sum(axis=0))
