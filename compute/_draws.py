"""Seeded draws from the filtered distribution: inverse CDF, Gumbel-max, Gumbel-softmax.

:func:`sample` draws by inverse CDF; :func:`gumbel_max_sample` draws
``argmax(log p + G)`` with Gumbel noise ``G``, which has the same
distribution; :func:`gumbel_softmax` returns the relaxed sample.  ``p`` is
:func:`compute.filter_probs` with the same knobs.  All take a seed and are
reproducible: the same arguments and seed give the same draws on every run
and platform that NumPy's ``default_rng`` (PCG64) supports.  No warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_count, _check_positive, _check_seed, _drive
from compute._filters import filtered_row
from compute._rows import FloatArray, IntArray, _logit_rows, _one_row
from compute._softmax import softmax

__all__ = ["gumbel_max_sample", "gumbel_max_steps", "gumbel_softmax", "sample", "sample_counts", "sample_probs"]


# Largest number of float64 noise values gumbel_max_sample holds at once
# (32 MiB); the draws do not depend on it.
_GUMBEL_CHUNK_ELEMENTS = 1 << 22


def _counts_from_uniforms(filtered: NDArray[np.float64], n: int, rng: np.random.Generator) -> IntArray:
    """Counts per token of ``n`` inverse-CDF draws from ``filtered``."""
    cdf = np.cumsum(filtered)
    support = np.flatnonzero(filtered > 0)
    edges = cdf / cdf[-1]
    # Dividing by cdf[-1] makes the last positive token's upper edge exactly
    # 1.0 (x / x == 1 in IEEE arithmetic) and u < 1, so no uniform can fall
    # past it; as a guard that does not rely on this, that edge and those
    # of the zero-probability tokens after it are set to +inf, so every
    # uniform at or above the last positive token's lower edge is its draw.
    edges[support[-1] :] = np.inf
    u = rng.random(n)
    u.sort()
    upper = np.searchsorted(u, edges, side="left")  # draws below each token's upper edge
    return np.diff(upper, prepend=0).astype(np.int64)


def sample_counts(logits: ArrayLike, n: int, seed: int, **knobs: Any) -> IntArray:
    """How often each token is drawn in ``n`` draws: ``bincount(sample(...))``.

    Exactly ``np.bincount(sample(logits, n, seed, **knobs), minlength=V)``
    for the same arguments, but without building and shuffling the draws
    (faster; what a histogram needs).  Returns int64 counts of length ``V``.
    """
    _one_row(logits, "sample_counts")
    n = _check_count(n, "n", 0)
    rng = np.random.default_rng(_check_seed(seed))
    return _counts_from_uniforms(filtered_row(logits, knobs), n, rng)


def sample(logits: ArrayLike, n: int, seed: int, **knobs: Any) -> IntArray:
    """``n`` independent draws (token indices) from :func:`filter_probs`.

    Inverse-CDF sampling: ``n`` uniforms ``u`` in ``[0, 1)`` from
    ``np.random.default_rng(seed)``; the token drawn for ``u`` is the first
    index whose cumulative probability (``cumsum`` of the filtered row,
    divided by its last entry) exceeds ``u``.  A zero-probability token has
    an empty interval and is never drawn; the last token with non-zero
    probability takes every ``u`` up to 1, so rounding in the cumulative
    sum cannot push a draw onto a cut token.

    For speed the uniforms are sorted before the search (the search then
    runs once per token, not once per draw) and the resulting draws are put
    in random order with the same generator: a uniformly random permutation
    of an i.i.d. sample sorted is again an i.i.d. sample.  One million draws
    take tens of milliseconds, whatever ``V``.

    Parameters
    ----------
    logits
        one 1-D row of ``V`` logits (batches are not supported).
    n
        number of draws, an integer ``>= 0``.
    seed
        integer ``>= 0``; the same arguments and seed give the same
        draws.
    **knobs
        ``temperature``, ``top_k``, ``top_p``, ``min_p``, as for
        :func:`filter_probs`.

    Returns
    -------
    ndarray
        int64 array of shape ``(n,)`` with values in ``[0, V)``.

    Raises
    ------
    ValueError, TypeError
        as :func:`filter_probs`, a batch of logits,
        bad ``n`` or ``seed``, or an unknown knob.
    """
    _one_row(logits, "sample")
    n = _check_count(n, "n", 0)
    rng = np.random.default_rng(_check_seed(seed))
    counts = _counts_from_uniforms(filtered_row(logits, knobs), n, rng)
    draws = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    rng.shuffle(draws)
    return draws


def sample_probs(probs: ArrayLike, n: int, seed: int) -> IntArray:
    """:func:`sample` from a row that is already filtered: ``n`` draws from float64 ``probs``.

    ``sample(logits, n, seed, **knobs)`` is exactly
    ``sample_probs(filter_probs(logits, **knobs), n, seed)`` for float64
    logits (the same row, the same generator), so a caller that needs the
    filtered row anyway filters once.  ``probs`` must be one 1-D float64 row
    of non-negative numbers with a positive sum.
    """
    row = np.asarray(probs)
    if row.ndim != 1 or row.dtype != np.float64:
        raise ValueError(f"probs must be one 1-D float64 row, got shape {row.shape} dtype {row.dtype}")
    if not (np.all(row >= 0) and row.sum() > 0):
        raise ValueError("probs must be >= 0 with a positive sum")
    n = _check_count(n, "n", 0)
    rng = np.random.default_rng(_check_seed(seed))
    counts = _counts_from_uniforms(row, n, rng)
    draws = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    rng.shuffle(draws)
    return draws


def gumbel_max_sample(
    logits: ArrayLike,
    n: int,
    seed: int,
    *,
    progress: Callable[[int, int], object] | None = None,
    cancelled: Callable[[], bool] | None = None,
    **knobs: Any,
) -> IntArray:
    """``n`` draws by the Gumbel-max trick: ``argmax(log p + G)`` per draw.

    ``p`` is :func:`filter_probs` of the row (with the same knobs; by default
    just ``softmax(logits)``), so ``log p`` is the logits divided by ``T``
    up to a constant, and ``-inf`` for cut tokens.  ``G`` is i.i.d. standard
    Gumbel noise, generated as ``-log(E)`` with ``E`` standard exponential
    (the same law as ``rng.gumbel()``, about three times faster).  The
    argmax then has exactly the distribution ``p``, like :func:`sample`
    (the draws differ, the distribution does not).

    Tokens of probability 0 can never win, so noise is drawn only for the
    ``S`` tokens with ``p > 0``: the cost is ``O(n * S)`` (about 10 ns per
    element: ``n = 10**6`` over the whole GPT-2 vocabulary, ``S = 50,257``,
    would take minutes).  Callers should cap ``n * S`` (count the non-zero
    entries of :func:`filter_probs`) or run it in a worker with ``progress``
    and ``cancelled``.  Noise is drawn in chunks of at most ``2**22`` values
    (32 MiB), so memory stays bounded; the draws do not depend on the chunk
    size.  It drives :func:`gumbel_max_steps`, which yields after each chunk.

    Parameters
    ----------
    logits
        one 1-D row of ``V`` logits.
    n
        number of draws, an integer ``>= 0``.
    seed
        integer ``>= 0``, for ``np.random.default_rng``.
    progress
        called as ``progress(done, n)`` after each chunk.
    cancelled
        polled before each chunk; if it returns true,
        :class:`compute.Cancelled` is raised.
    **knobs
        ``temperature``, ``top_k``, ``top_p``, ``min_p``.

    Returns
    -------
    ndarray
        int64 array of shape ``(n,)`` with values in ``[0, V)``.
    """
    n_checked, steps = _gumbel_max_setup(logits, n, seed, knobs, "gumbel_max_sample")
    message = "Gumbel-max sampling cancelled after {done} of {total} draws"
    return _drive(steps, n_checked, progress, cancelled, message)


def gumbel_max_steps(
    logits: ArrayLike, n: int, seed: int, **knobs: Any
) -> Generator[tuple[int, int], None, IntArray]:
    """:func:`gumbel_max_sample` one chunk of draws at a time, as a generator.

    Yields ``(done, n)`` after each chunk of draws; its return value
    (``StopIteration.value``, or the value of ``yield from``) is the int64
    array of draws :func:`gumbel_max_sample` returns for the same arguments,
    bit for bit.  The arguments are checked when it is called, not at the
    first ``next``.  Stopping early is just not asking for the next chunk.
    """
    return _gumbel_max_setup(logits, n, seed, knobs, "gumbel_max_steps")[1]


def _gumbel_max_setup(
    logits: ArrayLike, n: int, seed: int, knobs: dict[str, Any], func: str
) -> tuple[int, Generator[tuple[int, int], None, IntArray]]:
    """Validate the arguments of the Gumbel-max draws; return ``(n, steps)``."""
    _one_row(logits, func)
    n = _check_count(n, "n", 0)
    rng = np.random.default_rng(_check_seed(seed))
    filtered = filtered_row(logits, knobs)
    return n, _gumbel_max_chunks(filtered, n, rng)


def _gumbel_max_chunks(
    filtered: NDArray[np.float64], n: int, rng: np.random.Generator
) -> Generator[tuple[int, int], None, IntArray]:
    support = np.flatnonzero(filtered > 0)
    with np.errstate(all="ignore"):
        log_p = np.log(filtered[support])
    s = support.size
    out = np.empty(n, dtype=np.int64)
    chunk = max(1, _GUMBEL_CHUNK_ELEMENTS // s)
    buf = np.empty(min(chunk, max(n, 1)) * s)
    done = 0
    while done < n:
        r = min(chunk, n - done)
        g = buf[: r * s].reshape(r, s)
        rng.standard_exponential(out=g)
        with np.errstate(all="ignore"):  # E == 0 gives G = +inf: a sure winner, as it should
            np.log(g, out=g)
        np.subtract(log_p, g, out=g)  # log p + G with G = -log E
        out[done : done + r] = support[np.argmax(g, axis=1)]
        done += r
        yield done, n
    return out


def gumbel_softmax(logits: ArrayLike, tau: float, seed: int, hard: bool = False) -> FloatArray:
    """One Gumbel-softmax (Concrete) sample per row: ``softmax((logits + G) / tau)``.

    ``G`` is i.i.d. standard Gumbel noise (``-log(E)``, ``E`` standard
    exponential) from ``np.random.default_rng(seed)``, one value per entry
    of ``logits``.  As ``tau -> 0`` the relaxed sample approaches the one-hot
    vector of ``argmax(logits + G)``, which is a draw from
    ``softmax(logits)``; large ``tau`` flattens it towards uniform.

    Parameters
    ----------
    logits
        a row ``(V,)`` or a batch ``(..., V)``; ``-inf`` entries get
        exactly 0.  Lists/ints/bools become float64.
    tau
        the relaxation temperature, finite and > 0.
    seed
        integer ``>= 0``.
    hard
        if true return only the one-hot vector at ``argmax(logits +
        G)`` instead of the relaxed sample.  It is the argmax of the
        relaxed sample for the same seed (softmax keeps order), so call
        twice with the same seed to get both.

    Returns
    -------
    ndarray
        An array of ``logits``' shape and float dtype (float16 and float32
        kept, else float64; the work is done in float64).  Each row sums to 1
        (within rounding); with ``hard`` it is exactly one 1 and zeros.

    Raises
    ------
    ValueError
        bad ``tau``, NaN or all ``-inf`` rows, empty or 0-d input.
    TypeError
        non-real logits or ``tau``.
    """
    tau = _check_positive(tau, "tau")
    rows, out_dtype = _logit_rows(logits)
    rng = np.random.default_rng(_check_seed(seed))
    g = rng.standard_exponential(size=rows.shape)
    with np.errstate(all="ignore"):
        np.log(g, out=g)
        # logits + G with G = -log E; a -inf logit stays -inf even if E == 0
        perturbed = np.where(rows == -np.inf, -np.inf, rows - g)
    if hard:
        out = np.zeros(rows.shape)
        out[np.arange(rows.shape[0]), np.argmax(perturbed, axis=-1)] = 1.0
    else:
        out = softmax(perturbed, temperature=tau)
    return out.astype(out_dtype, copy=False).reshape(np.shape(logits))
