"""Speculative decoding's accept/resample rule (Leviathan et al. 2023; Chen et al. 2023).

A cheap draft model proposes a token ``x ~ q``; the target model, whose
distribution is ``p``, accepts it with probability ``min(1, p(x) / q(x))``
and otherwise draws a replacement from the residual
``norm(max(0, p - q))``.  The tokens that come out follow ``p`` exactly,
and a proposal is accepted with probability ``sum_x min(p(x), q(x))``.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_count, _check_seed
from compute._rows import FloatArray, IntArray, _as_float_array, _refuse_masked

__all__ = ["speculative_accept", "speculative_sample", "SpeculativeAccept", "SpeculativeDraws"]

#: How far from 1 a distribution's sum may be.
SUM_TOLERANCE = 1e-6


class SpeculativeAccept(NamedTuple):
    """What :func:`speculative_accept` returns."""

    rate: float  # sum_x min(p, q): the chance that a proposal is accepted
    accept: FloatArray  # min(1, p/q) per token (1 where q = 0: never proposed)
    residual: FloatArray  # norm(max(0, p - q)): where a rejected proposal is redrawn from


class SpeculativeDraws(NamedTuple):
    """What :func:`speculative_sample` returns: counts per token over ``n`` steps."""

    counts: IntArray  # tokens that came out (accepted or redrawn); follows p
    accepted: IntArray  # of those, the accepted proposals
    proposed: IntArray  # the draft's proposals; follows q
    rejected: int  # proposals rejected (and redrawn from the residual)


def _distribution(x: ArrayLike, name: str) -> NDArray[np.float64]:
    _refuse_masked(x, name)
    a = np.asarray(_as_float_array(x), dtype=np.float64)  # a float64 row is read as it is (only read here)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be one non-empty row of probabilities, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name} must hold finite probabilities >= 0")
    total = float(a.sum())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ValueError(f"{name} must sum to 1, got {total:.9g}")
    return a


def _pair(p: ArrayLike, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    pa, qa = _distribution(p, "p"), _distribution(q, "q")
    if pa.shape != qa.shape:
        raise ValueError(f"p and q must have the same length, got {pa.size} and {qa.size}")
    return pa, qa


def speculative_accept(p: ArrayLike, q: ArrayLike) -> SpeculativeAccept:
    """The acceptance rule of speculative decoding for a target ``p`` and a draft ``q``.

    Parameters
    ----------
    p, q
        1-D probabilities over the same vocabulary, each summing to 1
        (within 1e-6).

    Returns
    -------
    SpeculativeAccept
        ``rate`` = ``sum min(p, q)`` (1 - total variation distance);
        ``accept`` = ``min(1, p / q)`` per token, 1 where ``q = 0`` (the
        draft never proposes it); ``residual`` = ``max(0, p - q)``
        normalised, all zeros when ``p <= q`` everywhere (then nothing is
        ever rejected).

    Raises
    ------
    ValueError
        not 1-D, empty, different lengths, negative or non-finite entries,
        a sum other than 1.

    Examples
    --------
    >>> import compute
    >>> r = compute.speculative_accept([0.5, 0.5, 0.0], [0.25, 0.5, 0.25])
    >>> r.rate, r.accept, r.residual
    (0.75, array([1., 1., 0.]), array([1., 0., 0.]))
    """
    pa, qa = _pair(p, q)
    return _accept(pa, qa)


_scratch = threading.local()  # each thread's reused row of zeros (see scattered_sum)
_SCRATCH_MAX = 1 << 20  # entries; a longer row of zeros is made for the call (no 8 MB+ buffer kept per thread)
#: Rows at least this long where p and q are both 0 on most tokens take :func:`_sparse_accept`.
_SPARSE_ROW = 4096


def scattered_sum(size: int, where: NDArray[np.int64], values: NDArray[np.float64]) -> np.float64:
    """The sum of ``np.zeros(size)`` holding ``values`` (float64) at the distinct ``where``, bit for bit: the
    same row, so the same pairwise sum, made in this thread's reused row of zeros (put in, summed, taken
    out), without a new row's pages for each call (about 0.5 ms for 200,000 float64 here)."""
    if size > _SCRATCH_MAX:  # a row this long is not kept around
        row = np.zeros(size)
        row[where] = values
        return row.sum()
    buf = getattr(_scratch, "zeros", None)
    if buf is None or buf.size < size:
        buf = _scratch.zeros = np.zeros(size)
    row = buf[:size]
    row[where] = values
    try:
        return row.sum()
    finally:
        row[where] = 0.0


def _sparse_accept(pa: NDArray[np.float64], qa: NDArray[np.float64]) -> SpeculativeAccept | None:
    """:func:`_accept`, bit for bit, working on the tokens where p or q is non-zero.

    Where both are +0 (no -0.0 anywhere), ``min(p, q)`` and ``max(0, p - q)``
    are +0 and ``accept`` is 1: the rows of :func:`_accept` are zeros (ones)
    with its values at those tokens, summed (divided) as it sums (divides)
    them.  None (the caller takes the whole rows) when they are not mostly
    zeros or hold a -0.0.
    """
    v = pa.size
    if v < _SPARSE_ROW:
        return None
    u = np.flatnonzero((pa != 0) | (qa != 0))
    if u.size > v // 8 or np.signbit(pa).any() or np.signbit(qa).any():
        return None
    pu, qu = pa[u], qa[u]
    rate = float(scattered_sum(v, u, np.minimum(pu, qu)))
    accept = np.ones(v)
    with np.errstate(all="ignore"):
        accept[u] = np.where(qu > 0, np.minimum(1.0, pu / qu), 1.0)
    rest = np.maximum(0.0, pu - qu)
    total = scattered_sum(v, u, rest)
    residual = np.zeros(v)
    if total > 0:
        residual[u] = rest / total
    return SpeculativeAccept(min(rate, 1.0), accept, residual)


def _accept(pa: NDArray[np.float64], qa: NDArray[np.float64]) -> SpeculativeAccept:
    """:func:`speculative_accept` of rows already checked by :func:`_pair`."""
    sparse = _sparse_accept(pa, qa)
    if sparse is not None:
        return sparse
    rate = float(np.minimum(pa, qa).sum())
    with np.errstate(all="ignore"):  # p/q overflows for a tiny q: min(1, inf) = 1
        accept = np.where(qa > 0, np.minimum(1.0, pa / qa), 1.0)
    rest = np.maximum(0.0, pa - qa)
    total = rest.sum()
    residual = rest / total if total > 0 else np.zeros_like(rest)
    return SpeculativeAccept(min(rate, 1.0), accept, residual)


def _multinomial(rng: np.random.Generator, n: int, pvals: NDArray[np.float64]) -> NDArray[np.int64]:
    """``rng.multinomial(n, pvals).astype(np.int64)``, bit for bit and with the same draws, over p > 0 only.

    NumPy draws a multinomial as one binomial per category in order, with
    ``p_j / remaining`` (``remaining`` = 1 minus the categories before), the
    last category taking what is left; a category of ``p_j = 0`` gets
    ``0 / remaining = 0``, for which the binomial returns 0 without drawing,
    and leaves ``remaining`` as it is.  So the categories of ``p > 0`` (and
    the last one, which takes the leftover) get the same binomials from the
    same stream.  Only where ``remaining`` would reach exactly 0 before the
    end (``0 / 0``) is the whole row drawn, as NumPy does.
    """
    where, counts = _multinomial_draws(rng, n, pvals)
    if where is None:
        return counts
    out = np.zeros(pvals.size, dtype=np.int64)
    out[where] = counts
    return out


def _multinomial_into(rng: np.random.Generator, n: int, pvals: NDArray[np.float64], into: NDArray[np.int64]) -> None:
    """``into += _multinomial(rng, n, pvals)``: the same draws, added where they fall (no row of them is made
    where they are sparse; integer sums, so the same counts)."""
    where, counts = _multinomial_draws(rng, n, pvals)
    if where is None:
        into += counts
    else:
        into[where] += counts


def _multinomial_draws(rng: np.random.Generator, n: int,
                       pvals: NDArray[np.float64]) -> tuple[NDArray[np.int64] | None, NDArray[np.int64]]:
    """The draws of :func:`_multinomial` as (categories drawn, their counts), or (None, the whole row) where
    the row is drawn whole: NumPy's own call where there is little to skip, NumPy refuses the row, or the
    sparse draw would need it."""
    v = pvals.size
    support = np.flatnonzero(pvals > 0)
    if support.size <= v // 4 and (pvals >= 0).all():
        drawn = _multinomial_support(rng, n, v, support, pvals[support])
        if drawn is not None:
            return drawn
    return None, rng.multinomial(n, pvals).astype(np.int64)


def _multinomial_support(rng: np.random.Generator, n: int, v: int, support: NDArray[np.int64],
                         at: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """The draws of :func:`_multinomial` of a row of ``v`` categories that is ``at`` (> 0) on ``support``
    (ascending) and 0 elsewhere, as the categories drawn (ascending, distinct) and their counts (0 off them);
    None, before drawing anything, where NumPy's own call on the whole row is needed."""
    if not support.size or support[-1] != v - 1:
        # the last category takes what is left: NumPy never reads its probability (0 here)
        support = np.append(support, v - 1)
        at = np.append(at, 0.0)
    # the remaining mass NumPy divides by, before each category but the last (sequential, as its loop)
    remaining = np.subtract.accumulate(np.concatenate(([1.0], at[:-1])))
    if (remaining == 0).any():
        return None
    return support, rng.multinomial(n, at)


def _multinomial_at(rng: np.random.Generator, n: int, v: int, support: NDArray[np.int64],
                    at: NDArray[np.float64]) -> NDArray[np.int64] | None:
    """:func:`_multinomial` of a row of ``v`` categories that is ``at`` (> 0) on ``support`` (ascending) and
    0 elsewhere; None, before drawing anything, where NumPy's own call on the whole row is needed."""
    drawn = _multinomial_support(rng, n, v, support, at)
    if drawn is None:
        return None
    out = np.zeros(v, dtype=np.int64)
    out[drawn[0]] = drawn[1]
    return out


def _sparse_steps(rng: np.random.Generator, n: int, pa: NDArray[np.float64], qa: NDArray[np.float64],
                  rule: SpeculativeAccept) -> SpeculativeDraws | None:
    """The steps of :func:`speculative_sample`, the same draws in the same order, on rows where q is mostly 0.

    None (before drawing anything) where the whole rows are needed.  The
    proposals are :func:`_multinomial` of ``qa / qa.sum()`` made on the tokens
    of q > 0 alone; the binomials and the redraws are those of the whole-row code.
    """
    v = qa.size
    near = np.flatnonzero(qa > 0)
    if v < _SPARSE_ROW or near.size > v // 8:
        return None
    total = qa.sum()
    at = qa[near] / total  # (qa / qa.sum())[near]: the same quotients; 0 / total is 0 elsewhere
    keep = at > 0
    support, at = near[keep], at[keep]
    proposed = _multinomial_at(rng, n, v, support, at)
    if proposed is None:
        return None
    where = support[proposed[support] > 0]  # np.flatnonzero(proposed > 0): proposed is 0 off the support
    if proposed[v - 1] > 0 and (not where.size or where[-1] != v - 1):
        where = np.append(where, v - 1)
    accepted = np.zeros_like(proposed)
    accepted[where] = rng.binomial(proposed[where], rule.accept[where])
    rejected = int(n - accepted[where].sum())
    redraw = rule.residual if (rule.residual > 0).any() else pa / pa.sum()  # residual >= 0: sum > 0 iff any > 0
    counts = accepted.copy()  # accepted + the redraws, added in place (no row of redraws)
    if rejected:
        _multinomial_into(rng, rejected, redraw, counts)
    return SpeculativeDraws(counts, accepted, proposed, rejected)


def speculative_sample(p: ArrayLike, q: ArrayLike, n: int, seed: int, *,
                       accept: SpeculativeAccept | None = None) -> SpeculativeDraws:
    """Run the accept/resample rule ``n`` times (seeded); the counts follow ``p`` exactly.

    Each step proposes ``x ~ q``, accepts it with probability
    ``min(1, p(x) / q(x))`` and otherwise redraws from the residual.  The
    ``n`` steps are independent, so they are drawn per token: the
    proposals as one multinomial over ``q``, the accepted ones among each
    token's proposals as a binomial, the replacements as one multinomial
    over the residual (the same distribution as stepping one by one).  If
    rounding leaves rejections but no residual mass (``p`` and ``q`` equal
    to rounding), the replacements are drawn from ``p``.

    Parameters
    ----------
    p, q
        as for :func:`speculative_accept`.
    n
        number of steps, an integer ``>= 0``.
    seed
        integer ``>= 0``: ``np.random.default_rng(seed)``.
    accept
        :func:`speculative_accept` of the same ``p`` and ``q`` when
        already made (it is not made again).

    Returns
    -------
    SpeculativeDraws
        int64 ``counts``, ``accepted`` and ``proposed`` per token and the
        number ``rejected``; ``counts.sum() == proposed.sum() == n``.

    Examples
    --------
    >>> import compute
    >>> d = compute.speculative_sample([0.5, 0.5], [0.9, 0.1], 100_000, seed=0)
    >>> (d.counts / 100_000).round(2), round(d.rejected / 100_000, 2)
    (array([0.5, 0.5]), 0.4)
    """
    pa, qa = _pair(p, q)
    n = _check_count(n, "n", 0)
    rng = np.random.default_rng(_check_seed(seed))
    rule = _accept(pa, qa) if accept is None else accept
    sparse = _sparse_steps(rng, n, pa, qa, rule)  # None before drawing anything: the whole rows then
    if sparse is not None:
        return sparse
    proposed = _multinomial(rng, n, qa / qa.sum())
    # a token never proposed draws no binomial (NumPy returns 0 for n = 0 without drawing)
    where = np.flatnonzero(proposed > 0)
    accepted = np.zeros_like(proposed)
    accepted[where] = rng.binomial(proposed[where], rule.accept[where])
    rejected = int(n - accepted.sum())
    redraw = rule.residual if rule.residual.sum() > 0 else pa / pa.sum()
    redrawn = _multinomial(rng, rejected, redraw) if rejected else np.zeros_like(accepted)
    return SpeculativeDraws(accepted + redrawn, accepted, proposed, rejected)
