"""The knobs applied to the Sampling view's vocabulary row: :func:`knob_result` (no Qt).

The softmax at T and its entropy are kept (in the model's cache) while only
a cut moves, so a k, p or min-p move makes the cuts alone; the rest works on
the tokens that matter (the top-k survivors, the tokens drawn from), with
the bits of the plain whole-row computation (gui.model.sampling.rowmath and
tests/gui/test_sampling_speed*.py).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import compute
from compute import Stage
from compute._filters import filter_result_given_probs
from gui.model.sampling.results import SamplingResult
from gui.model.sampling.rowmath import (
    cumulative_at,
    row_entropy,
    scattered_sum,
    sparse_entropy,
    top_ids_among,
)
from gui.model.sampling.vocabulary import Vocabulary

#: The cumulative-probability plot gets at most about this many points (log-spaced ranks).
CUM_POINTS = 600


@functools.lru_cache(maxsize=16)
def _log_ranks(v: int, points: int = CUM_POINTS) -> np.ndarray:
    """The log-spaced ranks of the cumulative curve (made once per V: read-only, shared by the results)."""
    ranks = np.unique(np.geomspace(1, v, points).round().astype(np.int64))
    ranks.flags.writeable = False
    return ranks


def _cached(cache: dict[str, tuple[tuple, Any]], name: str, key: tuple, make) -> Any:
    hit = cache.get(name)
    if hit is not None and hit[0] == key:
        return hit[1]
    value = make()
    cache[name] = (key, value)
    return value


def knob_result(vocab: Vocabulary, knobs: dict[str, Any], shown: int, cache: dict[str, tuple[tuple, Any]]) -> SamplingResult:
    """``compute.filter_result(vocab.logits, **knobs)`` and what the view shows of it.

    ``cache`` is the model's cache (one entry per name): ``softmax`` holds the
    softmax at T and its entropy, ``cumulative`` the curve when top-k cuts nothing.
    """
    logits = vocab.logits
    soft_key = (vocab.key, knobs["temperature"])
    soft = cache.get("softmax")
    if soft is not None and soft[0] == soft_key:
        probs, h = soft[1]
        fr = filter_result_given_probs(logits, probs, **knobs)
    else:
        fr = compute.filter_result(logits, **knobs)
        probs = fr.probs
        h = row_entropy(probs)  # compute.entropy(probs), in the row's dtype
        cache["softmax"] = (soft_key, (probs, h))
    filtered, stage = fr.filtered, fr.stage
    v = logits.size
    top = top_ids_among(probs, vocab.ranked, shown)
    # the distribution top-p sees: after the temperature and top-k, i.e. probs * (stage != TOP_K)
    # (probs are finite, >= 0: x * 1 == x, x * 0 == 0): zeros, and probs where top-k did not cut
    cut_by_k = stage == Stage.TOP_K
    positive = None
    if cut_by_k.any():
        rest = np.flatnonzero(~cut_by_k)
        seen = probs[rest]
        if probs.dtype == np.float64:  # that row's sum, made in a reused row of zeros
            before_p, total = None, scattered_sum(v, rest, seen)
        else:
            before_p = np.zeros(v, dtype=probs.dtype)
            before_p[rest] = seen
            total = before_p.sum()
        positive, stage_seen = seen[seen > 0], stage[rest]
    else:
        before_p, stage_seen = probs, stage
        total = before_p.sum()
    ranks = _log_ranks(v)
    if before_p is probs:  # top-k cut nothing: the curve is the softmax's alone (a p move does not sort V again)
        cum_prob = _cached(cache, "cumulative", soft_key, lambda: cumulative_at(probs, total, ranks))
    else:
        cum_prob = cumulative_at(before_p, total, ranks, positive)
    # top-p keeps what is kept in the end and what only min-p (applied after it) cut
    top_p_rank = 0
    if knobs["top_p"] is not None:
        top_p_rank = int(np.count_nonzero((stage_seen == Stage.KEPT) | (stage_seen == Stage.MIN_P)))
    # np.flatnonzero(filtered): filtered is exactly 0 outside kept, so looked for among the kept (a bool pass)
    kept_ids = np.flatnonzero(fr.kept)
    support = kept_ids[filtered[kept_ids] > 0]
    dense = support.size > v // 4 and filtered.dtype == np.float64  # else sparse_entropy's own rules
    h_filtered = float(row_entropy(filtered)) if dense else sparse_entropy(filtered, support)
    return SamplingResult(
        vocab=vocab, probs=probs, filtered=filtered, stage=stage, shown=top,
        cum_rank=ranks, cum_prob=cum_prob, top_p=knobs["top_p"],
        top_p_rank=top_p_rank,
        kept=int(support.size), support=support,
        entropy=float(h), entropy_filtered=float(h_filtered),
        # compute.perplexity is exp(entropy) in the row's dtype: the same numbers from the entropies above
        perplexity=float(np.exp(h)), perplexity_filtered=float(np.exp(h_filtered)),
    )
