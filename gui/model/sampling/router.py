"""The mixture-of-experts router of the Sampling view: seeded tokens through a softmax gate."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

import compute
from gui.model.normal_stream import NormalStream

#: Router token embeddings have this many dimensions.
ROUTER_DIM = 32
#: The router's token count goes up to this many (the model's ``router_tokens``).
ROUTER_MAX_TOKENS = 65_536
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
        return self.dense_rows(self.gates.shape[0])

    def dense_rows(self, n: int) -> np.ndarray:
        """The first ``n`` rows of :attr:`dense` (the heatmap shows only a few tokens)."""
        out = np.zeros_like(self.gates[:n])
        np.put_along_axis(out, self.indices[:n], self.weights[:n], axis=1)
        return out

    @property
    def importance_cv2(self) -> float:
        """The squared coefficient of variation of the importance (Shazeer et al.'s balance loss)."""
        m = float(self.importance.mean())
        return float(self.importance.var() / (m * m)) if m > 0 else float("nan")


class Embeddings:
    """The seeded token embeddings of :func:`router_scores`, drawn once and extended as more tokens are asked for.

    ``np.random.default_rng(seed).standard_normal((tokens, ROUTER_DIM))`` fills
    its rows in order from one stream of normals, so the first n rows of a
    longer draw are the draw of n tokens: the rows are the first
    ``tokens * ROUTER_DIM`` normals of a :class:`NormalStream` with room for
    ROUTER_MAX_TOKENS rows, so a new token count takes a view (or draws only the
    new rows, in place after the old ones: until December 2026 each growth
    copied every kept row, 4.6 MB at 18,000 tokens), not the whole draw again.
    """

    def __init__(self, seed: int):
        self.seed = seed
        self._stream = NormalStream(ROUTER_MAX_TOKENS * ROUTER_DIM)

    def take(self, tokens: int) -> np.ndarray:
        """``np.random.default_rng(seed).standard_normal((tokens, ROUTER_DIM))``, the same numbers (a copy)."""
        return self.view(tokens).copy()

    def view(self, tokens: int) -> np.ndarray:
        """:meth:`take` as a read-only view of the rows kept (no copy: at 65,536 tokens one is 16 MB per move)."""
        rows = self._stream.first(self.seed, tokens * ROUTER_DIM).reshape(tokens, ROUTER_DIM)
        rows.flags.writeable = False
        return rows


@functools.lru_cache(maxsize=8)
def _router_matrix(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The router's matrix rows (divided by sqrt(ROUTER_DIM)) and bias for 64 experts (read-only; kept per seed).

    Both are made elementwise from one seeded draw of 64 experts, so the first
    ``experts`` of them are what a draw for ``experts`` gives.
    """
    w = np.random.default_rng([seed, 1]).standard_normal((64, ROUTER_DIM)) / np.sqrt(ROUTER_DIM)
    bias = np.random.default_rng([seed, 2]).normal(0.0, 0.5, 64)
    w.flags.writeable = bias.flags.writeable = False
    return w, bias


def router_scores(experts: int, tokens: int, seed: int, embeddings: Embeddings | None = None) -> np.ndarray:
    """(tokens, experts): seeded token embeddings through a seeded router matrix, plus its bias (before T).

    ``embeddings`` is an :class:`Embeddings` of the same seed when one is kept (it draws only new rows).
    """
    if embeddings is not None and embeddings.seed == seed:
        x = embeddings.view(tokens)  # only read here
    else:
        x = np.random.default_rng(seed).standard_normal((tokens, ROUTER_DIM))
    # the matrix for expert e does not depend on how many experts there are; a learned router has a bias:
    # a few experts are favoured (what load balancing fights).  ``w[:experts].T`` is laid out as
    # ``(draw[:experts].T / sqrt(ROUTER_DIM))`` was (the quotient keeps the transposed layout): the same product
    w, bias = _router_matrix(int(seed))
    return x @ w[:experts].T + bias[:experts]


def router(experts: int, k: int, tokens: int, seed: int, temperature: float,
           scores: np.ndarray | None = None) -> RouterResult:
    """Seeded token embeddings through a seeded router matrix, gated by softmax at ``temperature``.

    ``scores`` is :func:`router_scores` of the same experts, tokens and seed when already made.
    """
    if scores is None:
        scores = router_scores(experts, tokens, seed)
    logits = scores / temperature
    route = compute.moe_route(logits, min(k, experts))
    indices, weights = route
    gates = route.probs  # moe_route's full softmax of the same logits: compute.softmax(logits, axis=-1)
    return RouterResult(logits, gates, np.asarray(indices), np.asarray(weights),
                        compute.expert_load(indices, experts), gates.sum(axis=0))
