"""Temperature curves of one row, a synthetic Zipf vocabulary, and its top tokens."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_count, _check_finite, _check_seed, _drive, check_temperature
from compute._rows import IntArray, _as_float_array, _logit_rows, _one_row, _shifted_curve
from compute._softmax import softmax
from compute._steps import entropy

__all__ = ["sampling_curves", "top_indices", "zipf_logits"]


def sampling_curves(
    logits: ArrayLike,
    temperatures: Iterable[float] | ArrayLike,
    *,
    progress: Callable[[int, int], object] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, NDArray[Any]]:
    """How the softmax of one row changes with temperature.

    For each temperature ``T`` (no knobs: the plain ``softmax(logits / T)``):

    * ``entropy``: Shannon entropy in nats (:func:`compute.entropy`);
    * ``perplexity``: ``exp(entropy)``, the effective vocabulary size;
    * ``above_1pct``: how many tokens have probability ``> 0.01`` (int64);
    * ``top2_gap``: the largest probability minus the second largest (the
      largest itself when ``V == 1``).

    Temperatures are processed in blocks of at most ``2**21`` probabilities
    (16 MiB), so V = 200,000 needs ~10 temperatures per block.

    Parameters
    ----------
    logits
        one 1-D row of finite or ``-inf`` logits (not all ``-inf``,
        no NaN).
    temperatures
        finite reals > 0.
    progress
        called as ``progress(done, total)`` after each block.
    cancelled
        polled before each block; raises
        :class:`compute.Cancelled` when it returns true.

    Returns
    -------
    dict
        Dict of float64 arrays over the temperatures (``above_1pct`` int64):
        ``temperature``, ``entropy``, ``perplexity``, ``above_1pct``,
        ``top2_gap``.
    """
    _one_row(logits, "sampling_curves")
    rows, _ = _logit_rows(logits)
    x = rows[0]
    ts = np.asarray(list(temperatures) if not isinstance(temperatures, np.ndarray) else temperatures,
                    dtype=np.float64).ravel()
    for t in ts:
        check_temperature(float(t))
    total = ts.size
    result = {
        "temperature": ts.copy(),
        "entropy": np.zeros(total),
        "perplexity": np.zeros(total),
        "above_1pct": np.zeros(total, dtype=np.int64),
        "top2_gap": np.zeros(total),
    }
    steps = (_curves_general if np.isposinf(x).any() else _curves_fast)(x, ts, result)
    message = "temperature curves cancelled after {done} of {total} temperatures"
    return _drive(steps, total, progress, cancelled, message)


def _curves_fast(
    x: NDArray[np.float64], ts: NDArray[np.float64], result: dict[str, NDArray[Any]]
) -> Generator[tuple[int, int], None, dict[str, NDArray[Any]]]:
    """:func:`sampling_curves` for rows without ``+inf``, one block per step."""
    total = ts.size
    # -inf logits have probability 0 and contribute nothing, so
    # only the finite ones are kept, shifted: d = x - max(x) <= 0 and, at
    # each T, z = d / T (the shifted row softmax computes), e = exp(z),
    # Z = sum(e) and entropy = log Z - sum(e z) / Z.  Only the 100 largest
    # d can have p > 1 % (at most 99 tokens can), and the two largest give
    # the gap, so those need no pass over the whole row.
    f = x[np.isfinite(x)]
    with np.errstate(all="ignore"):
        d = f - f.max()
        # x - max can overflow (1e308 - -1e308) where (x - max) / T need not:
        # such rows take softmax's own shift per block (_shifted_curve); the
        # halves order the head, since they never overflow
        overflow = bool(np.isneginf(d).any())
        order = f * 0.5 - f.max() * 0.5 if overflow else d
        # z = -inf somewhere (its e = 0, and 0 * -inf is NaN in sum(e z))
        zero_tail = overflow or bool(np.isneginf(d.min() / ts.min()))
    v = d.size
    n_head = min(v, 100)
    head = np.argpartition(-order, n_head - 1)[:n_head]
    head = head[np.argsort(-order[head], kind="stable")]  # descending
    block = max(1, min(total, (1 << 21) // v))
    z_buf, e_buf = np.empty((block, v)), np.empty((block, v))  # reused: no fresh pages per block
    for start in range(0, total, block):
        sl = slice(start, min(start + block, total))
        t = ts[sl, None]
        with np.errstate(all="ignore"):
            if overflow:
                z = z_buf[: sl.stop - start]
                z[...] = _shifted_curve(f, ts[sl])
            else:
                z = np.divide(d[None, :], t, out=z_buf[: sl.stop - start])
            e = np.exp(z, out=e_buf[: sl.stop - start])
            big_z = e.sum(axis=1)
            ez = np.einsum("ij,ij->i", e, np.where(e > 0, z, 0.0) if zero_tail else z)
            h = np.log(big_z) - ez / big_z
            result["entropy"][sl] = np.maximum(h, 0.0)
            result["perplexity"][sl] = np.exp(result["entropy"][sl])
            p_head = np.exp(z[:, head]) / big_z[:, None]
        result["above_1pct"][sl] = np.count_nonzero(p_head > 0.01, axis=-1)
        result["top2_gap"][sl] = p_head[:, 0] - (p_head[:, 1] if v >= 2 else 0.0)
        yield sl.stop, total
    return result


def _curves_general(
    x: NDArray[np.float64], ts: NDArray[np.float64], result: dict[str, NDArray[Any]]
) -> Generator[tuple[int, int], None, dict[str, NDArray[Any]]]:
    """:func:`sampling_curves` through full softmax rows (rows with ``+inf``), one block per step."""
    total, v = ts.size, x.size
    block = max(1, (1 << 21) // v)
    for start in range(0, total, block):
        sl = slice(start, min(start + block, total))
        p = np.array([softmax(x, temperature=float(t)) for t in ts[sl]]).reshape(-1, v)
        h = entropy(p)
        result["entropy"][sl] = h
        with np.errstate(all="ignore"):
            result["perplexity"][sl] = np.exp(h)
        result["above_1pct"][sl] = np.count_nonzero(p > 0.01, axis=-1)
        if v >= 2:
            top2 = np.partition(p, v - 2, axis=-1)[:, v - 2 :]
            result["top2_gap"][sl] = top2[:, 1] - top2[:, 0]
        else:
            result["top2_gap"][sl] = p[:, 0]
        yield sl.stop, total
    return result


def zipf_logits(v: int, seed: int = 0, exponent: float = 1.1, noise: float = 0.1) -> NDArray[np.float64]:
    """A synthetic vocabulary row: Zipf-like logits of length ``v``, float64.

    The token of rank ``r`` (1 = most probable) gets the logit
    ``-exponent * log(r) - log(H)`` plus Gaussian noise of standard deviation
    ``noise`` (``H = sum r**-exponent``, so without noise ``softmax`` of the
    row is exactly the Zipf law ``r**-exponent / H``).  The ranks are then
    put in a seeded random order: index 0 is *not* the most probable token
    (as in a real vocabulary, whose order has nothing to do with frequency);
    use :func:`top_indices` to find the top tokens.  The same ``(v, seed,
    exponent, noise)`` always gives the same row.  With noise the ranks are
    only approximately by frequency.

    Parameters
    ----------
    v
        vocabulary size, integer >= 1.
    seed
        integer >= 0.
    exponent
        Zipf exponent, finite real > 0 (1.1 is typical of text).
    noise
        standard deviation of the logit noise, finite real >= 0.
    """
    v = _check_count(v, "v", 1)
    rng = np.random.default_rng(_check_seed(seed))
    s = _check_finite(exponent, "exponent")
    if s <= 0:
        raise ValueError(f"exponent must be > 0, got {exponent!r}")
    sigma = _check_finite(noise, "noise")
    if sigma < 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    log_r = np.log(np.arange(1, v + 1, dtype=np.float64))
    logits = -s * log_r
    logits -= np.log(np.exp(logits).sum())
    if sigma:
        logits += sigma * rng.standard_normal(v)
    return logits[rng.permutation(v)]


def top_indices(values: ArrayLike, n: int) -> IntArray:
    """Indices of the ``n`` largest entries of a 1-D real array, largest first.

    Ties are ordered by index (lower first), also at the boundary, so the
    result is deterministic; NaN counts as ``-inf``.  ``n`` larger than the
    length returns every index.  O(V + n log n): the head is found with a
    partition and only it is sorted.
    """
    a = _as_float_array(values)
    if a.ndim != 1:
        raise ValueError(f"values must be a 1-D array, got shape {a.shape}")
    n = min(_check_count(n, "n", 0), a.size)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    key = np.where(np.isnan(a), -np.inf, a).astype(np.float64)
    if n < a.size:
        thr = np.partition(key, a.size - n)[a.size - n]
        cand = np.flatnonzero(key >= thr)
    else:
        cand = np.arange(a.size)
    order = np.lexsort((cand, -key[cand]))  # value descending, then index ascending
    return cand[order[:n]].astype(np.int64)
