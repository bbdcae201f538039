"""Speculative decoding on the Sampling view's vocabulary (no Qt): a draft q against the target p.

The target ``p`` is what the view samples from (the knobs applied to the
vocabulary's logits).  The draft ``q`` stands in for a smaller model: the
same logits plus seeded Gaussian noise of standard deviation ``noise``, at
the draft temperature, with the same cuts (with the model source: the same
model at another temperature, perturbed).  :func:`compute.speculative_accept`
gives the acceptance rate ``Σ min(p, q)``, the per-token acceptance
``min(1, p/q)`` and the residual ``norm(max(0, p − q))``;
:func:`compute.speculative_sample` runs the accept/resample rule ``n``
times, whose output tokens follow ``p`` exactly, checked with Pearson's χ².
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

import compute
from gui.model.base import ExportArray
from gui.model.sampling.draws import MIN_EXPECTED
from gui.model.sampling.rowmath import kth_largest
from gui.model.sampling.vocabulary import Vocabulary

#: The draft temperatures of the acceptance-rate curve.
DRAFT_T = np.geomspace(0.05, 5.0, 41)
#: Rows at least this long look for the tokens shown among the non-zero ones first (shown_ids).
_LONG_ROW = 4096


@dataclass(frozen=True, eq=False)
class SpeculativeResult:
    """The draft against the target over the whole vocabulary, and ``n`` simulated steps."""

    p: np.ndarray  # (V,) target
    q: np.ndarray  # (V,) draft
    accept: np.ndarray  # (V,) min(1, p/q)
    residual: np.ndarray  # (V,) norm(max(0, p - q))
    rate: float  # Σ min(p, q)
    shown: np.ndarray  # ids of the tokens shown (most probable under p or q)
    labels: tuple[str, ...]
    n: int
    counts: np.ndarray  # (V,) tokens that came out of the n steps
    accepted: np.ndarray  # (V,) of those, accepted proposals
    rejected: int
    chi2: float
    dof: int
    p_value: float
    curve_t: np.ndarray  # draft temperatures
    curve_rate: np.ndarray  # Σ min(p, q) at each (same noise and cuts)
    draft_t: float
    target_t: float  # the target's temperature (where the draft would match it without noise)

    @property
    def observed_rate(self) -> float:
        return 1.0 - self.rejected / self.n if self.n else float("nan")


def draft_eps(size: int, seed: int) -> np.ndarray:
    """The draft's seeded standard normal noise, one per token (it depends on neither the noise level nor T)."""
    return np.random.default_rng([int(seed), 0x5BEC]).standard_normal(size)


def draft_logits(logits: np.ndarray, noise: float, seed: int, eps: np.ndarray | None = None) -> np.ndarray:
    """The draft's logits: ``logits`` plus ``noise`` times seeded standard normal noise (-inf stays -inf).

    ``eps`` is :func:`draft_eps` of the same size and seed when already made.
    """
    if noise == 0:
        return logits
    if eps is None:
        eps = draft_eps(logits.size, seed)
    out = eps * noise  # noise * eps, then logits + that (the same two roundings), in one new row
    out += logits
    return out


def rate_curve(p: np.ndarray, draft: np.ndarray, cuts: dict[str, Any]) -> np.ndarray:
    """``Σ min(p, q(T))`` for each draft temperature of DRAFT_T.

    With top-k on, q is zero outside the draft's k largest logits (and their
    ties) at every temperature, so each q is computed on those alone: the
    same numbers for a fraction of the work on a large vocabulary.
    """
    k = cuts.get("top_k")
    if k is not None and k < draft.size:
        kth = kth_largest(draft, k)
        inside = np.flatnonzero(draft >= kth)
        if inside.size < draft.size:
            p, draft = p[inside], draft[inside]
    # all temperatures in one pass: bit for bit one filter_probs per temperature (and one sum per row)
    return np.minimum(p, compute.filter_over_temperatures(draft, DRAFT_T, **cuts)).sum(axis=-1)


def shown_ids(p: np.ndarray, q: np.ndarray, shown: int) -> np.ndarray:
    """The ``shown`` tokens most probable under p or q, by max(p, q) descending (ties: the lower id first).

    On a long row where p and q are mostly 0 (after top-k) the tokens are
    ranked among those where either is non-zero, when that gives the plain
    answer for sure: the last one shown is > 0 (so above every 0 outside)
    and above the next one (no tie at the boundary, where argpartition's
    pick among equals would decide); else the whole row, as before.
    """
    k = min(shown, p.size)
    if p.size >= _LONG_ROW and k >= 1:
        u = np.flatnonzero((p > 0) | (q > 0))
        if k <= u.size <= p.size // 8:
            both_u = np.maximum(p[u], q[u])
            order = np.lexsort((u, -both_u))
            last = both_u[order[k - 1]]
            if last > 0 and (u.size == k or both_u[order[k]] < last):
                return u[order[:k]]
    both = np.maximum(p, q)
    top = np.argpartition(-both, k - 1)[:k] if k < p.size else np.arange(p.size)
    return top[np.lexsort((top, -both[top]))]


def with_shown(s: SpeculativeResult, vocab: Vocabulary, shown: int) -> SpeculativeResult:
    """``s`` over another number of tokens shown (nothing else depends on it)."""
    if s.shown.size == min(shown, s.p.size):
        return s
    top = shown_ids(s.p, s.q, shown)
    return replace(s, shown=top, labels=tuple(vocab.label(i) for i in top))


def draft_rule(p: np.ndarray, draft: np.ndarray, knobs: dict[str, Any],
               draft_t: float) -> tuple[np.ndarray, compute.SpeculativeAccept]:
    """The draft's distribution q (the knobs' cuts at ``draft_t``) and the acceptance rule of p against it."""
    q = compute.filter_probs(draft, temperature=draft_t, **{k: v for k, v in knobs.items() if k != "temperature"})
    return q, compute.speculative_accept(p, q)


def speculative(vocab: Vocabulary, knobs: dict[str, Any], draft_t: float, noise: float, n: int, seed: int,
                shown: int, curve: np.ndarray | None = None, p: np.ndarray | None = None,
                draft: np.ndarray | None = None,
                rule: tuple[np.ndarray, compute.SpeculativeAccept] | None = None) -> SpeculativeResult:
    """The target, the draft, the acceptance rule and ``n`` seeded steps (a pure function of its inputs).

    ``curve`` is :func:`rate_curve` of the same p, draft and cuts when already made (it does not
    depend on ``draft_t``, ``n`` or ``shown``); else it is made here.  ``p`` is
    ``compute.filter_probs(vocab.logits, **knobs)``, ``draft`` is
    :func:`draft_logits` of the same noise and seed and ``rule`` is :func:`draft_rule`
    of those at ``draft_t`` (it does not depend on ``n`` or ``shown``), when already made.
    """
    logits = vocab.logits
    cuts = {k: v for k, v in knobs.items() if k != "temperature"}
    if p is None:
        p = compute.filter_probs(logits, **knobs)
    if draft is None:
        draft = draft_logits(logits, noise, seed)
    q, rule = draft_rule(p, draft, knobs, draft_t) if rule is None else rule
    out = compute.speculative_sample(p, q, n, seed, accept=rule)  # the rule is not made twice
    keep = p > 0
    chi2, dof, p_value = compute.chi_square_test(out.counts[keep], n * p[keep], min_expected=MIN_EXPECTED)
    top = shown_ids(p, q, shown)
    return SpeculativeResult(
        p=p, q=q, accept=rule.accept, residual=rule.residual, rate=float(rule.rate), shown=top,
        labels=tuple(vocab.label(i) for i in top), n=int(n), counts=out.counts, accepted=out.accepted,
        rejected=int(out.rejected), chi2=float(chi2), dof=int(dof), p_value=float(p_value),
        curve_t=DRAFT_T, curve_rate=rate_curve(p, draft, cuts) if curve is None else curve, draft_t=float(draft_t),
        target_t=float(knobs["temperature"]))


def speculative_arrays(s: SpeculativeResult) -> dict[str, ExportArray]:
    """The tokens shown (p, q, acceptance, residual, expected and observed counts), the summary, the curve."""
    ids = s.shown
    table = np.column_stack([ids, s.p[ids], s.q[ids], s.accept[ids], s.residual[ids], s.n * s.p[ids],
                             s.counts[ids], s.accepted[ids]])
    return {
        "speculative_tokens": ExportArray(table, ("token_id", "p", "q", "accept", "residual", "expected",
                                                  "observed", "accepted"), s.labels),
        "speculative_draft": ExportArray(np.column_stack([s.p, s.q, s.residual]), ("p", "q", "residual"),
                                         csv=False),
        "speculative_summary": ExportArray(
            np.array([[s.n, s.rate, s.observed_rate, s.rejected, s.chi2, s.dof, s.p_value, s.draft_t]]),
            ("steps", "rate", "observed_rate", "rejected", "chi2", "dof", "p_value", "draft_temperature")),
        "speculative_rate": ExportArray(np.column_stack([s.curve_t, s.curve_rate]), ("draft_temperature", "rate")),
    }
