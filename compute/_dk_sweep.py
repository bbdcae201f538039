"""The d_k sweep: how softmax attention saturates with the head size, scaled vs unscaled.

With independent unit-variance components, ``q . k`` is a sum of ``d``
unit-variance products, so its standard deviation is ``sqrt(d)``.
Unscaled, the scores spread more and more as ``d`` grows, softmax saturates
towards one-hot and its gradient vanishes; dividing by ``sqrt(d)`` keeps
the score spread at 1 whatever ``d``.  :func:`dk_sweep` measures exactly
this; see its docstring for how it stays fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable

import numpy as np
from numpy.typing import NDArray

from compute._checks import _check_count, _drive

__all__ = ["dk_sweep", "dk_sweep_steps"]


def _row_stats(shifted: NDArray[np.float32], buf: NDArray[np.float32]) -> tuple[float, float]:
    """Sum over rows of softmax entropy and of the largest weight.

    ``shifted`` is a score matrix minus its row maxima (so ``<= 0`` with a 0
    in every row); ``buf`` is scratch space of the same shape.  With ``e =
    exp(shifted)`` and ``Z = sum(e)`` the weights are ``e / Z``, so the
    largest weight is ``1 / Z`` (the max entry has ``e = 1``) and the
    entropy is ``log Z - sum(e * shifted) / Z`` (from ``log p = shifted -
    log Z``): one ``exp`` per cell and no per-cell ``log``.  Row sums are
    float32 pairwise sums; everything after them is float64.
    """
    e = np.exp(shifted, out=buf)
    z = e.sum(axis=-1).astype(np.float64)
    e *= shifted
    es = e.sum(axis=-1).astype(np.float64)
    h = np.maximum(np.log(z) - es / z, 0.0)  # >= 0; rounding could dip below
    return float(h.sum()), float((1.0 / z).sum())


def dk_sweep(
    n: int,
    d_ks: Iterable[int],
    seed: int = 0,
    heads: int = 1,
    progress: Callable[[int, int], object] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, np.ndarray]:
    """How softmax attention saturates with the head size, scaled vs unscaled.

    For each ``d`` in ``d_ks``: draw standard-normal ``Q`` and ``K`` of shape
    ``(heads, n, d)``, form the raw scores ``Q @ K^T`` (``heads x n x n``)
    and take the row softmax of the raw scores ("unscaled") and of the
    scores times ``1/sqrt(d)`` ("scaled").

    Reproducibility: the sample for ``d`` comes from
    ``np.random.default_rng([seed, d])`` (``Q`` first, then ``K``, each
    ``rng.standard_normal((heads, n, d), dtype=np.float32)``), so a ``d``'s
    numbers depend only on ``(seed, d, n, heads)``, not on which other
    ``d``'s are requested or in what order.

    Speed: the matmuls and softmaxes run in **float32** (half the memory
    traffic and about twice the BLAS speed of float64); the means and the
    std are accumulated in float64.  Softmax is fused (see :func:`_row_stats`:
    one ``exp`` per cell, no per-cell ``log``), uses the same max shift as
    :func:`compute.softmax` (the scaled shift is ``(s - max) / sqrt(d)``,
    shift first), and heads are processed one at a time, so memory is a few
    ``n x n`` float32 matrices.  Every row is used (no sampling).  ``n =
    2048``, one head, ``d = 4 .. 1024`` takes 1.5-2.5 s on two cores (n = 512: 0.3 s).

    Parameters
    ----------
    n
        number of queries and of keys (``>= 1``).
    d_ks
        the head sizes (ints ``>= 1``), in the order wanted.
    seed
        a non-negative int.
    heads
        independent heads per ``d`` (``>= 1``); means are over all
        heads and rows.
    progress
        called as ``progress(done, total)`` after each ``d``
        (``done`` counts from 1 to ``total = len(d_ks)``).
    cancelled
        polled before each ``d``; if it returns true,
        :class:`Cancelled` is raised and nothing is returned.

    It drives :func:`dk_sweep_steps`, which does the work one ``d`` at a time.

    Returns
    -------
    dict
        float64 arrays over ``d_ks`` (``d_k`` is int64):

        * ``d_k``: the head sizes.
        * ``entropy_scaled``, ``entropy_unscaled``: mean row entropy of the
          weights, in nats (at most ``log(n)``).
        * ``max_weight_scaled``, ``max_weight_unscaled``: mean over rows of
          the largest weight (``1/n`` uniform ... 1 one-hot).
        * ``std_qk``: the measured (population) standard deviation of the
          ``heads * n * n`` raw entries ``q . k``; about ``sqrt(d)``.
        * ``sqrt_dk``: ``sqrt(d)``, the theoretical value.

    Raises
    ------
    Cancelled
        ``cancelled()`` returned true.
    TypeError, ValueError
        bad ``n``, ``d_ks``, ``seed`` or ``heads``.
    """
    total, steps = _dk_sweep_setup(n, d_ks, seed, heads)
    return _drive(steps, total, progress, cancelled, "d_k sweep cancelled after {done} of {total} head sizes")


def dk_sweep_steps(
    n: int, d_ks: Iterable[int], seed: int = 0, heads: int = 1
) -> Generator[tuple[int, int], None, dict[str, np.ndarray]]:
    """:func:`dk_sweep` one head size at a time, as a generator.

    Yields ``(done, total)`` after each ``d`` (``done`` from 1 to ``total =
    len(d_ks)``); its return value (``StopIteration.value``, or the value of
    ``yield from``) is the dict :func:`dk_sweep` returns, bit for bit.  The
    arguments are checked when it is called, not at the first ``next``.
    Stopping early is just not asking for the next step.
    """
    return _dk_sweep_setup(n, d_ks, seed, heads)[1]


def _dk_sweep_setup(
    n: int, d_ks: Iterable[int], seed: int, heads: int
) -> tuple[int, Generator[tuple[int, int], None, dict[str, np.ndarray]]]:
    """Validate :func:`dk_sweep`'s arguments; return ``(total, steps)``."""
    n = _check_count(n, "n", 1)
    heads = _check_count(heads, "heads", 1)
    seed = _check_count(seed, "seed")
    dks = [_check_count(d, "d_k", 1) for d in d_ks]
    total = len(dks)
    result = {
        "d_k": np.array(dks, dtype=np.int64),
        "entropy_scaled": np.zeros(total),
        "entropy_unscaled": np.zeros(total),
        "max_weight_scaled": np.zeros(total),
        "max_weight_unscaled": np.zeros(total),
        "std_qk": np.zeros(total),
        "sqrt_dk": np.sqrt(np.array(dks, dtype=np.float64)),
    }
    return total, _dk_sweep_run(n, dks, seed, heads, result)


def _dk_sweep_run(
    n: int, dks: list[int], seed: int, heads: int, result: dict[str, np.ndarray]
) -> Generator[tuple[int, int], None, dict[str, np.ndarray]]:
    total = len(dks)
    rows = heads * n
    cells = rows * n
    raw = np.empty((n, n), dtype=np.float32)  # reused: fresh 16 MB arrays
    buf = np.empty((n, n), dtype=np.float32)  # cost page faults every time
    for i, d in enumerate(dks):
        rng = np.random.default_rng([seed, d])
        q = rng.standard_normal((heads, n, d), dtype=np.float32)
        k = rng.standard_normal((heads, n, d), dtype=np.float32)
        inv_sqrt_d = np.float32(1.0 / math.sqrt(d))
        acc = np.zeros(6)  # sum x, sum x^2, H unscaled, max unscaled, H scaled, max scaled
        with np.errstate(all="ignore"):
            for h in range(heads):
                np.matmul(q[h], k[h].T, out=raw)
                acc[0] += raw.sum(axis=-1).sum(dtype=np.float64)
                acc[1] += np.multiply(raw, raw, out=buf).sum(axis=-1).sum(dtype=np.float64)
                raw -= raw.max(axis=-1, keepdims=True)  # now the shifted scores
                acc[2:4] += _row_stats(raw, buf)
                raw *= inv_sqrt_d
                acc[4:6] += _row_stats(raw, buf)
        mean = acc[0] / cells
        result["std_qk"][i] = math.sqrt(max(acc[1] / cells - mean * mean, 0.0))
        result["entropy_unscaled"][i] = acc[2] / rows
        result["max_weight_unscaled"][i] = acc[3] / rows
        result["entropy_scaled"][i] = acc[4] / rows
        result["max_weight_scaled"][i] = acc[5] / rows
        yield i + 1, total
    return result
