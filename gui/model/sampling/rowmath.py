"""Row arithmetic of the Sampling model that skips work and gives the same bits as the plain computation.

Each function says which plain computation it equals, bit for bit
(tests/gui/test_sampling_speed.py checks each against it).
"""

from __future__ import annotations

import threading

import numpy as np

import compute
from compute._variants_speculative import scattered_sum  # the Sampling model's too (knobs)

#: Rows shorter than this take the plain computations (the shortcuts pay off on long rows only).
LONG_ROW = 4096
_scratch = threading.local()  # each thread's reused buffers: a long row's entropy terms, its partition


def top_ids(probs: np.ndarray, shown: int) -> np.ndarray:
    """The ids of the ``shown`` most probable tokens, by probability descending (ties: the lower id first)."""
    v = probs.size
    n = min(shown, v)
    top = np.argpartition(-probs, n - 1)[:n] if n < v else np.arange(v)
    return top[np.lexsort((top, -probs[top]))]


def top_ids_among(probs: np.ndarray, candidates: np.ndarray | None, shown: int) -> np.ndarray:
    """``top_ids(probs, shown)``, bit for bit, ranking only ``candidates`` when they hold the answer.

    ``candidates`` are token ids thought to hold the most probable ones (the
    largest logits: softmax keeps their order).  Ranked among themselves by
    probability (ties: the lower id first), their first ``shown`` are the
    answer if no other token is as probable as the last of them: then exactly
    ``shown`` tokens of the row have a probability >= that one's, and these
    are they.  Anything else (too few candidates, a tie at the boundary, say
    probabilities that underflowed to 0, or a candidate list that misses a
    token) goes to :func:`top_ids`.
    """
    v = probs.size
    n = min(shown, v)
    if candidates is None or v < LONG_ROW or n < 1 or candidates.size < n:
        return top_ids(probs, shown)
    c = np.asarray(candidates)
    ranked = c[np.lexsort((c, -probs[c]))][:n]
    if np.count_nonzero(probs >= probs[ranked[-1]]) != n:
        return top_ids(probs, shown)
    return ranked


def cumulative_at(p: np.ndarray, total: float, ranks: np.ndarray, positive: np.ndarray | None = None) -> np.ndarray:
    """``cumsum(sort(p)[::-1] / total)[ranks - 1]`` (``total`` 0 taken as 1), bit for bit, sorting only p > 0.

    ``p`` is >= 0.  The zeros sort last and add exactly nothing to the running
    sum (x + 0 == x), so past the positive entries the sum stays at its last
    value: only the positive entries need sorting (after top-k, a few dozen of V).
    ``positive`` is ``p[p > 0]`` when already made (any order: it is sorted).
    """
    if positive is None:
        positive = p[p > 0]
    if not positive.size:
        return np.zeros(ranks.size)
    cum = np.cumsum(np.sort(positive)[::-1] / (total if total > 0 else 1.0))
    return cum[np.minimum(ranks, cum.size) - 1]


def sparse_entropy(p: np.ndarray, where: np.ndarray | None = None) -> float:
    """``compute.entropy(p)`` of a float64 row ``p >= 0`` with many zeros, bit for bit, in less work.

    compute.entropy takes ``-(p * log p)`` per entry, 0 where ``p == 0``, and
    sums the row (NumPy's pairwise sum, whose grouping depends on the
    positions): the same terms are made for the non-zero entries only and
    put at their places in a row of zeros, which is then summed the same way.
    Other rows (negative entries, NaN, other dtypes, few zeros) go to compute.entropy.
    ``where`` is ``np.flatnonzero(p)`` when already made.
    """
    p = np.asarray(p)
    if p.ndim != 1 or p.dtype != np.float64:
        return float(compute.entropy(p))
    if where is None:
        where = np.flatnonzero(p)
    if where.size > p.size // 4 or not (p[where] > 0).all():
        return float(compute.entropy(p))
    a = p[where]
    with np.errstate(all="ignore"):
        terms = np.log(a)
        terms *= a
        np.negative(terms, out=terms)
    return float(scattered_sum(p.size, where, terms))


def row_entropy(p: np.ndarray) -> np.floating | float | np.ndarray:
    """``compute.entropy(p)`` of a float64 row, bit for bit, its terms written into a reused buffer.

    compute.entropy writes ``-(p * log p)`` into a new array and sums it: for a
    long row every call pays the new array's pages (about 1 ms for 200,000
    float64 here).  The same operations into this thread's buffer (contiguous,
    the row's length) give the same terms and the same pairwise sum.  A row
    with many zeros goes to :func:`sparse_entropy`; one with any zero,
    negative or NaN entry, or not a long 1-D float64 row, to compute.entropy (whose result, in the
    row's dtype, is returned as it is).
    """
    p = np.asarray(p)
    if p.ndim != 1 or p.dtype != np.float64 or p.size < LONG_ROW:
        return compute.entropy(p)
    if not (p > 0).all():
        return sparse_entropy(p)  # which hands a row with few zeros (or a negative, a NaN) to compute.entropy
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.size < p.size:
        buf = _scratch.buf = np.empty(p.size)
    terms = buf[: p.size]
    with np.errstate(all="ignore"):
        np.log(p, out=terms)
        terms *= p
        np.negative(terms, out=terms)
    return float(terms.sum())


def kth_largest(x: np.ndarray, k: int) -> np.floating:
    """``np.partition(x, x.size - k)[x.size - k]`` of a 1-D float64 row (1 <= k <= size), partitioned in this
    thread's reused buffer (the k-th largest value does not depend on where the copy lives)."""
    v = x.size
    if x.ndim != 1 or x.dtype != np.float64 or v < LONG_ROW:
        return np.partition(x, v - k)[v - k]
    buf = getattr(_scratch, "part", None)
    if buf is None or buf.size < v:
        buf = _scratch.part = np.empty(v)
    part = buf[:v]
    np.copyto(part, x)
    part.partition(v - k)
    return part[v - k]
