"""Row arithmetic of the Sampling model that skips work and gives the same bits as the plain computation.

Each function says which plain computation it equals, bit for bit
(tests/gui/test_sampling_speed.py checks each against it).
"""

from __future__ import annotations

import numpy as np

import compute


def top_ids(probs: np.ndarray, shown: int) -> np.ndarray:
    """The ids of the ``shown`` most probable tokens, by probability descending (ties: the lower id first)."""
    v = probs.size
    n = min(shown, v)
    top = np.argpartition(-probs, n - 1)[:n] if n < v else np.arange(v)
    return top[np.lexsort((top, -probs[top]))]


def cumulative_at(p: np.ndarray, total: float, ranks: np.ndarray) -> np.ndarray:
    """``cumsum(sort(p)[::-1] / total)[ranks - 1]`` (``total`` 0 taken as 1), bit for bit, sorting only p > 0.

    ``p`` is >= 0.  The zeros sort last and add exactly nothing to the running
    sum (x + 0 == x), so past the positive entries the sum stays at its last
    value: only the positive entries need sorting (after top-k, a few dozen of V).
    """
    positive = p[p > 0]
    if not positive.size:
        return np.zeros(ranks.size)
    cum = np.cumsum(np.sort(positive)[::-1] / (total if total > 0 else 1.0))
    return cum[np.minimum(ranks, cum.size) - 1]


def sparse_entropy(p: np.ndarray) -> float:
    """``compute.entropy(p)`` of a float64 row ``p >= 0`` with many zeros, bit for bit, in less work.

    compute.entropy takes ``-(p * log p)`` per entry, 0 where ``p == 0``, and
    sums the row (NumPy's pairwise sum, whose grouping depends on the
    positions): the same terms are made for the non-zero entries only and
    put at their places in a row of zeros, which is then summed the same way.
    Other rows (negative entries, NaN, other dtypes, few zeros) go to compute.entropy.
    """
    p = np.asarray(p)
    if p.ndim != 1 or p.dtype != np.float64:
        return float(compute.entropy(p))
    where = np.flatnonzero(p)
    if where.size > p.size // 4 or not (p[where] > 0).all():
        return float(compute.entropy(p))
    a = p[where]
    with np.errstate(all="ignore"):
        terms = np.log(a)
        terms *= a
        np.negative(terms, out=terms)
    row = np.zeros(p.size)
    row[where] = terms
    return float(row.sum())
