"""What the Sampling model hands to the view's panels: plain, immutable results (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gui.model.sampling.vocabulary import Vocabulary


@dataclass(frozen=True, eq=False)
class SamplingResult:
    """The knobs applied to the vocabulary: both distributions, what cut each token, the summaries."""

    vocab: Vocabulary
    probs: np.ndarray  # softmax(logits / T), before any cut
    filtered: np.ndarray  # what is sampled from
    stage: np.ndarray  # int8 compute.Stage code per token: what cut it (KEPT if nothing did)
    shown: np.ndarray  # ids of the top tokens shown (by probs, descending)
    cum_rank: np.ndarray  # 1-based ranks (log-spaced) of the cumulative curve
    cum_prob: np.ndarray  # cumulative probability the top-p cut sees, at those ranks
    top_p: float | None  # the top-p level (None when top-p is off)
    top_p_rank: int  # tokens kept by top-p (0 when top-p is off)
    kept: int
    entropy: float  # of probs
    entropy_filtered: float
    perplexity: float
    perplexity_filtered: float
    support: np.ndarray | None = None  # np.flatnonzero(filtered): the tokens that can be drawn (None: not made)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.vocab.label(i) for i in self.shown)

    @property
    def size(self) -> int:
        return self.vocab.logits.size


@dataclass(frozen=True, eq=False)
class CurveResult:
    """A curve over a log-spaced grid and where the current setting sits on it."""

    x: np.ndarray
    y: np.ndarray
    x_now: float
    y_now: float
    name: str = ""  # which quantity (the T curve's choice)


@dataclass(frozen=True, eq=False)
class GumbelResult:
    """One seeded Gumbel-softmax sample over the tokens shown, and its sharpening as tau falls."""

    labels: tuple[str, ...]  # of the tokens shown
    relaxed: np.ndarray  # (shown,) the relaxed sample at tau
    hard: np.ndarray  # (shown,) its hard one-hot
    sharpening: CurveResult  # the largest relaxed entry against tau
    hard_label: str  # the token the hard sample picks
    hard_shown: bool  # whether that token is among the tokens shown
