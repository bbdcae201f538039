"""Sampling from a language model's last softmax, and mixture-of-experts routing.

Plain NumPy, like :mod:`compute.softmax` (whose softmax, entropy and dtype
helpers this module reuses); nothing here imports Qt or SciPy.  No warnings
are ever emitted: special values are produced on purpose.

The knobs (:func:`filter_probs`, :func:`filter_result`)
-------------------------------------------------------
The distribution a sampler really draws from is the softmax at temperature
``T`` with some tokens cut away and the rest renormalised.  The knobs are
applied in the order of Hugging Face transformers' ``generate`` (its
``TemperatureLogitsWarper``, ``TopKLogitsWarper``, ``TopPLogitsWarper``,
``MinPLogitsWarper``), each one seeing only the tokens the previous ones
kept, with their semantics:

1. **temperature**: ``p = softmax(logits / T)`` (computed as
   :func:`compute.softmax.softmax` does, max-shifted first).
2. **top-k**: keep every token whose logit is ``>=`` the ``k``-th largest
   logit.  Ties at the boundary are all kept, so more than ``k`` tokens can
   survive (transformers does the same: it removes ``scores < topk[-1]``).
   ``k >= V`` keeps everything.
3. **top-p** (nucleus): on ``p`` renormalised over the survivors, keep the
   smallest set of most probable tokens whose total probability reaches
   ``top_p``, and always at least the most probable token.  transformers
   sorts ascending, takes the cumulative sum and removes the tokens whose
   cumulative sum (their own probability plus every less probable one) is
   ``<= 1 - top_p``; this module evaluates exactly that criterion, in float64,
   summing the tail in ascending order as transformers does.  ``top_p = 1``
   therefore keeps every token of non-zero probability (and, like
   transformers, removes tokens whose probability underflowed to exactly 0).
4. **min-p**: on ``p`` renormalised over the survivors, keep the tokens whose
   probability is ``>= min_p * max(p)``.  The most probable token always
   survives.

The kept tokens get their softmax probability renormalised over the kept set
(the same as the softmax of the kept logits at ``T``); every other token gets
exactly 0.

Differences from transformers (all at exact ties or at the last bit):

* **Top-p ties.**  When several tokens share exactly the probability of the
  last token kept by top-p, all of them are kept.  transformers keeps the
  ones its (unstable) sort happens to place last, i.e. an order-dependent
  subset; keeping all of them makes the result independent of token order
  and matches the tie rule of its own top-k.  Without such ties the kept
  sets are identical.
* **Precision.**  All decisions are made in float64 (transformers works in
  the logits' dtype, usually float32), so a token whose cumulative or
  scaled probability lies within rounding of a threshold may fall on the
  other side.
* **-inf logits** are never "kept": they have probability 0 and get their
  own stage, :data:`STAGE_MASKED` (transformers would report them as
  removed by top-p, or keep them as ``-inf`` when no knob is on).

Finite logits whose probability underflows to exactly 0 (at a small ``T``)
are kept when no knob removes them; they are drawn with probability 0.

Sampling
--------
:func:`sample` draws by inverse CDF; :func:`gumbel_max_sample` draws
``argmax(log p + G)`` with Gumbel noise ``G``, which has the same
distribution; :func:`gumbel_softmax` returns the relaxed sample.  All take a
seed and are reproducible: the same arguments and seed give the same draws
on every run and platform that NumPy's ``default_rng`` (PCG64) supports.

Checking draws
--------------
:func:`chi_square_test` is Pearson's test with small bins pooled, its
p-value from :func:`chi2_sf`, the regularised upper incomplete gamma
function implemented here (series and continued fraction), so SciPy is not
needed at run time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import (
    Cancelled,
    _check_count,
    _check_finite,
    _check_positive,
    _check_seed,
    _drive,
    _real,
    check_temperature,
)
from compute._rows import FloatArray, _as_float_array, _logit_rows, _one_row
from compute._softmax import softmax
from compute._steps import entropy

__all__ = [
    "STAGE_KEPT",
    "STAGE_MASKED",
    "STAGE_MIN_P",
    "STAGE_NAMES",
    "STAGE_TOP_K",
    "STAGE_TOP_P",
    "Stage",
    "FilterResult",
    "MoERoute",
    "chi2_sf",
    "chi_square_test",
    "expert_load",
    "filter_probs",
    "filter_result",
    "gumbel_max_sample",
    "gumbel_max_steps",
    "gumbel_softmax",
    "moe_route",
    "sample",
    "sample_counts",
    "sampling_curves",
    "top_indices",
    "zipf_logits",
]

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

class Stage(IntEnum):
    """What removed a token, as :attr:`FilterResult.stage` stores it (int8 codes)."""

    KEPT = 0
    TOP_K = 1
    TOP_P = 2
    MIN_P = 3
    MASKED = 4  # the logit was -inf before any knob


# the stage codes under their old names (kept for existing callers)
STAGE_KEPT, STAGE_TOP_K, STAGE_TOP_P, STAGE_MIN_P, STAGE_MASKED = (int(s) for s in Stage)
#: Human-readable names of the stage codes, indexed by code.
STAGE_NAMES = ("kept", "top-k", "top-p", "min-p", "-inf logit")

# Largest number of float64 noise values gumbel_max_sample holds at once
# (32 MiB); the draws do not depend on it.
_GUMBEL_CHUNK_ELEMENTS = 1 << 22
# Rows longer than this go through the per-row partial top-p path; shorter
# rows (and any batch of them) are sorted in full, vectorised.
_SMALL_ROW = 2048


# --------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------
def _check_knobs(
    temperature: float, top_k: Any, top_p: Any, min_p: Any
) -> tuple[float, int | None, float | None, float | None]:
    t = check_temperature(temperature)
    k = None if top_k is None else _check_count(top_k, "top_k", 1)
    p = None
    if top_p is not None:
        p = _check_finite(top_p, "top_p")
        if not 0.0 < p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    m = None
    if min_p is not None:
        m = _check_finite(min_p, "min_p")
        if not 0.0 <= m <= 1.0:
            raise ValueError(f"min_p must be in [0, 1], got {min_p!r}")
    return t, k, p, m


# --------------------------------------------------------------------------
# the knobs
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FilterResult:
    """What the knobs did to one row or a batch of rows (shape ``(..., V)``).

    Attributes:
        probs: ``softmax(logits / T)`` before any cut (the logits' float
            dtype; see :func:`filter_probs`).
        kept: bool mask of the tokens that survive every knob (``-inf``
            logits are never kept).
        filtered: the distribution sampled from: ``probs`` renormalised over
            ``kept``, exactly 0 elsewhere.
        stage: int8 code of what removed each token: :data:`STAGE_KEPT` (0),
            :data:`STAGE_TOP_K` (1), :data:`STAGE_TOP_P` (2),
            :data:`STAGE_MIN_P` (3), or :data:`STAGE_MASKED` (4, the logit
            is ``-inf``).  A token is charged to the first knob that removed
            it.
        temperature, top_k, top_p, min_p: the validated knobs (``None`` =
            off).
    """

    probs: FloatArray
    kept: BoolArray
    filtered: FloatArray
    stage: NDArray[np.int8]
    temperature: float
    top_k: int | None
    top_p: float | None
    min_p: float | None

    @property
    def n_kept(self) -> NDArray[np.int64]:
        """Number of kept tokens per row (a 0-d array for a single row)."""
        return np.asarray(np.count_nonzero(self.kept, axis=-1), dtype=np.int64)


def _top_p_cut(p: NDArray[np.float64], top_p: float) -> float:
    """Smallest probability kept by top-p on one row ``p`` (>= 0, sums to ~1).

    transformers' rule: in ascending order, a token is removed iff its
    cumulative probability (itself plus everything less probable) is
    ``<= 1 - top_p``; the most probable token is always kept.  Every token
    with ``p >= result`` is kept (ties included).

    Short rows are sorted.  Long rows are first bucketed by the top 16 bits
    of their float64 pattern (exponent and 4 mantissa bits: 16 buckets per
    power of two, ordered like the values), which gives the mass of every
    bucket in two linear passes.  Whole buckets then fall on one side of the
    cut, and only the tokens of the one bucket the cut falls in are sorted:
    typically a few hundred of 200,000.
    """
    limit = 1.0 - top_p
    if p.size <= _SMALL_ROW:
        head = np.sort(p)
        below = 0.0
    else:
        bucket = p.view(np.int64) >> 48  # p >= 0, so this is monotone in p
        mass = np.bincount(bucket, weights=p, minlength=1 << 15)
        cum = np.cumsum(mass)  # mass of every bucket <= b
        b = int(np.searchsorted(cum, limit, side="right"))  # first bucket whose end passes the limit
        if b >= cum.size:  # rounding: nothing exceeds the limit; keep the top token only
            return float(p.max())
        below = float(cum[b - 1]) if b else 0.0
        head = np.sort(p[bucket == b])
    tails = below + np.cumsum(head)  # ascending cumulative probability
    first = int(np.searchsorted(tails, limit, side="right"))  # first tail > limit
    return float(head[min(first, head.size - 1)])


def _filter_rows(
    rows: NDArray[np.float64], t: float, k: int | None, top_p: float | None, min_p: float | None
) -> tuple[NDArray[np.float64], BoolArray, NDArray[np.float64], NDArray[np.int8]]:
    """The knobs on float64 rows ``(R, V)`` (validated: no NaN, not all -inf)."""
    n_rows, v = rows.shape
    probs = softmax(rows, temperature=t)
    stage = np.zeros(rows.shape, dtype=np.int8)
    masked = rows == -np.inf
    all_kept = not masked.any()  # while true, ``kept`` is all True and p == probs
    kept = ~masked
    if not all_kept:
        stage[masked] = STAGE_MASKED

    def cut(mask: BoolArray, code: int) -> None:
        nonlocal all_kept
        if mask.any():
            stage[mask] = code
            kept[mask] = False
            all_kept = False

    def renormalised() -> NDArray[np.float64]:
        if all_kept:
            return probs
        p = np.where(kept, probs, 0.0)
        p /= p.sum(axis=-1, keepdims=True)
        return p

    with np.errstate(all="ignore"):
        if k is not None and k < v:
            kth = np.partition(rows, v - k, axis=-1)[:, v - k : v - k + 1]
            cut(kept & (rows < kth), STAGE_TOP_K)

        if top_p is not None:
            p1 = renormalised()
            if top_p >= 1.0:
                thresholds = np.full((n_rows, 1), np.nextafter(0.0, 1.0))  # keep p > 0
            elif v <= _SMALL_ROW:  # whole batch at once
                asc = np.sort(p1, axis=-1)
                tails = np.cumsum(asc, axis=-1)
                first = np.minimum(np.count_nonzero(tails <= 1.0 - top_p, axis=-1), v - 1)
                thresholds = np.take_along_axis(asc, first[:, None], axis=-1)
            else:
                thresholds = np.empty((n_rows, 1))
                for r in range(n_rows):
                    row = p1[r]
                    if k is not None and k < v:  # only the top-k survivors can be kept
                        row = row[kept[r]]
                    thresholds[r, 0] = _top_p_cut(row, top_p)
            cut(kept & (p1 < thresholds), STAGE_TOP_P)

        if min_p is not None and min_p > 0.0:
            p2 = renormalised()
            cut(kept & (p2 < min_p * p2.max(axis=-1, keepdims=True)), STAGE_MIN_P)

        filtered = renormalised()
        if filtered is probs:
            filtered = probs.copy()
    return probs, kept, filtered, stage


def filter_result(
    logits: ArrayLike,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
) -> FilterResult:
    """Apply temperature, top-k, top-p and min-p, keeping what each one cut.

    Same arguments, semantics and errors as :func:`filter_probs`, which
    returns only :attr:`FilterResult.filtered`.  See :class:`FilterResult`
    for the fields; every array has the shape of ``logits``.
    """
    t, k, p, m = _check_knobs(temperature, top_k, top_p, min_p)
    rows, out_dtype = _logit_rows(logits)
    shape = np.shape(logits)
    probs, kept, filtered, stage = _filter_rows(rows, t, k, p, m)
    return FilterResult(
        probs=probs.astype(out_dtype, copy=False).reshape(shape),
        kept=kept.reshape(shape),
        filtered=filtered.astype(out_dtype, copy=False).reshape(shape),
        stage=stage.reshape(shape),
        temperature=t,
        top_k=k,
        top_p=p,
        min_p=m,
    )


def filter_probs(
    logits: ArrayLike,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
) -> FloatArray:
    """The distribution actually sampled from, after temperature and the cuts.

    Applies temperature, then top-k, then top-p, then min-p (the order of
    Hugging Face transformers); see the module docstring for the exact rules,
    tie handling and the few differences from transformers.  Kept tokens are
    renormalised; every other token gets exactly 0.

    Args:
        logits: one row of ``V`` scores, or a batch ``(..., V)`` (each row
            filtered on its own).  Lists, ints and bools become float64.
        temperature: finite real > 0 (:func:`compute.softmax.check_temperature`).
        top_k: ``None`` (off) or an integer ``>= 1``; ``>= V`` keeps all.
        top_p: ``None`` (off) or a real in ``(0, 1]``.
        min_p: ``None`` (off) or a real in ``[0, 1]``; 0 cuts nothing.

    Returns:
        An array of ``logits``' shape.  The work is done in float64; the
        result is cast to the logits' float dtype (float16 and float32 are
        kept, everything else is float64), like :func:`compute.softmax.softmax`.

    Raises:
        TypeError: non-real logits, or a knob of the wrong type (e.g. a float
            ``top_k``, a string ``top_p``).
        ValueError: a knob out of range, empty or 0-d logits, a row with a
            NaN, or a row whose every logit is ``-inf`` (nothing to sample).

    ``+inf`` logits follow :func:`compute.softmax.softmax`: the ``+inf``
    tokens share the mass and the rest get 0.
    """
    return filter_result(logits, temperature, top_k, top_p, min_p).filtered


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


# --------------------------------------------------------------------------
# drawing
# --------------------------------------------------------------------------
def _filtered_row(logits: ArrayLike, knobs: dict[str, Any]) -> NDArray[np.float64]:
    unknown = set(knobs) - {"temperature", "top_k", "top_p", "min_p"}
    if unknown:
        raise TypeError(f"unknown knob(s) {sorted(unknown)}; expected temperature, top_k, top_p, min_p")
    t, k, p, m = _check_knobs(
        knobs.get("temperature", 1.0), knobs.get("top_k"), knobs.get("top_p"), knobs.get("min_p")
    )
    rows, _ = _logit_rows(logits)
    return _filter_rows(rows, t, k, p, m)[2][0]


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
    return _counts_from_uniforms(_filtered_row(logits, knobs), n, rng)


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

    Args:
        logits: one 1-D row of ``V`` logits (batches are not supported).
        n: number of draws, an integer ``>= 0``.
        seed: integer ``>= 0``; the same arguments and seed give the same
            draws.
        **knobs: ``temperature``, ``top_k``, ``top_p``, ``min_p``, as for
            :func:`filter_probs`.

    Returns:
        int64 array of shape ``(n,)`` with values in ``[0, V)``.

    Raises:
        ValueError, TypeError: as :func:`filter_probs`, a batch of logits,
            bad ``n`` or ``seed``, or an unknown knob.
    """
    _one_row(logits, "sample")
    n = _check_count(n, "n", 0)
    rng = np.random.default_rng(_check_seed(seed))
    counts = _counts_from_uniforms(_filtered_row(logits, knobs), n, rng)
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

    Args:
        logits: one 1-D row of ``V`` logits.
        n: number of draws, an integer ``>= 0``.
        seed: integer ``>= 0``, for ``np.random.default_rng``.
        progress: called as ``progress(done, n)`` after each chunk.
        cancelled: polled before each chunk; if it returns true,
            :class:`compute.attention.Cancelled` is raised.
        **knobs: ``temperature``, ``top_k``, ``top_p``, ``min_p``.

    Returns:
        int64 array of shape ``(n,)`` with values in ``[0, V)``.
    """
    n_checked, steps = _gumbel_max_setup(logits, n, seed, knobs, "gumbel_max_sample")
    return _drive(steps, n_checked, progress, cancelled, "Gumbel-max sampling cancelled after {done} of {total} draws")


def gumbel_max_steps(logits: ArrayLike, n: int, seed: int, **knobs: Any) -> Generator[tuple[int, int], None, IntArray]:
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
    filtered = _filtered_row(logits, knobs)
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

    Args:
        logits: a row ``(V,)`` or a batch ``(..., V)``; ``-inf`` entries get
            exactly 0.  Lists/ints/bools become float64.
        tau: the relaxation temperature, finite and > 0.
        seed: integer ``>= 0``.
        hard: if true return only the one-hot vector at ``argmax(logits +
            G)`` instead of the relaxed sample.  It is the argmax of the
            relaxed sample for the same seed (softmax keeps order), so call
            twice with the same seed to get both.

    Returns:
        An array of ``logits``' shape and float dtype (float16 and float32
        kept, else float64; the work is done in float64).  Each row sums to 1
        (within rounding); with ``hard`` it is exactly one 1 and zeros.

    Raises:
        ValueError: bad ``tau``, NaN or all ``-inf`` rows, empty or 0-d input.
        TypeError: non-real logits or ``tau``.
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


# --------------------------------------------------------------------------
# mixture-of-experts routing
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MoERoute:
    """Top-k routing of a batch of tokens; see :func:`moe_route`.

    Attributes:
        indices: int64 ``(tokens, k)``: the chosen experts of each token,
            by gate weight descending (ties: lower expert index first).
        weights: float64 ``(tokens, k)``: their softmax gate weights
            renormalised over the ``k`` chosen experts (each row sums to 1).
        probs: float64 ``(tokens, experts)``: the full softmax of the gate
            logits at the temperature, before the top-k choice.
    """

    indices: IntArray
    weights: NDArray[np.float64]
    probs: NDArray[np.float64]

    def __iter__(self):  # allows ``indices, weights = moe_route(...)``
        return iter((self.indices, self.weights))


def moe_route(gate_logits: ArrayLike, k: int, temperature: float = 1.0) -> MoERoute:
    """Route each token to its top-``k`` experts, as a mixture-of-experts gate does.

    For each row of ``gate_logits`` (one token's score per expert) the ``k``
    experts with the largest logits are chosen (ties broken towards the
    lower expert index) and weighted by ``softmax(chosen logits / T)``, which
    is the full softmax restricted to the chosen experts and renormalised
    (Mixtral's and Switch's gating for ``k = 2`` / ``k = 1``).  The
    temperature never changes which experts are chosen, only how the weight
    is shared.

    Args:
        gate_logits: ``(tokens, experts)``, or one token ``(experts,)``
            (treated as one row).
        k: integer, ``1 <= k <= experts``.
        temperature: finite real > 0.

    Returns:
        A :class:`MoERoute` (unpacks as ``indices, weights``).

    Raises:
        ValueError: bad ``k`` or temperature, a NaN or an all ``-inf`` row,
            more than 2 dimensions.
    """
    t = check_temperature(temperature)
    a = np.asarray(gate_logits)
    if a.ndim > 2:
        raise ValueError(f"gate_logits must be (tokens, experts), got shape {a.shape}")
    rows, _ = _logit_rows(np.atleast_2d(a) if a.ndim == 1 else a, "gate_logits")
    n_experts = rows.shape[1]
    k = _check_count(k, "k", 1)
    if k > n_experts:
        raise ValueError(f"k must be <= the number of experts ({n_experts}), got {k}")
    order = np.argsort(-rows, axis=-1, kind="stable")[:, :k]
    chosen = np.take_along_axis(rows, order, axis=-1)
    return MoERoute(
        indices=order.astype(np.int64),
        weights=softmax(chosen, temperature=t),
        probs=softmax(rows, temperature=t),
    )


def expert_load(indices: ArrayLike, n_experts: int, weights: ArrayLike | None = None) -> NDArray[Any]:
    """Load per expert: how many (token, slot) routes chose each expert.

    ``indices`` is :attr:`MoERoute.indices` (any shape of expert indices).
    Without ``weights`` the result is int64 counts of length ``n_experts``
    (they sum to ``indices.size``); with ``weights`` (same shape) it is the
    float64 sum of the gate weights routed to each expert.
    """
    n_experts = _check_count(n_experts, "n_experts", 1)
    idx = np.asarray(indices)
    if idx.size and idx.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
    idx = idx.astype(np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= n_experts):
        raise ValueError(f"expert indices must be in [0, {n_experts}), got {idx.min()}..{idx.max()}")
    if weights is None:
        return np.bincount(idx, minlength=n_experts).astype(np.int64)
    w = np.asarray(weights, dtype=np.float64)
    if w.size != idx.size:
        raise ValueError(f"weights must match indices in size ({idx.size}), got {w.size}")
    return np.bincount(idx, weights=w.ravel(), minlength=n_experts)


# --------------------------------------------------------------------------
# chi-square
# --------------------------------------------------------------------------
_EPS = 4e-16  # a couple of ulps: |delta - 1| < 1e-16 may never be reached
_TINY = 1e-300
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _stirlerr(a: float) -> float:
    """``lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2)``, without cancellation.

    The error of Stirling's formula; for ``a > 15`` from its asymptotic
    series (as in Loader's algorithm for the binomial and Poisson laws),
    below that directly (the terms are small enough not to cancel badly).
    """
    if a <= 15.0:
        return math.lgamma(a) - (a - 0.5) * math.log(a) + a - _HALF_LOG_2PI
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    nn = a * a
    if a > 500:
        return (s0 - s1 / nn) / a
    if a > 80:
        return (s0 - (s1 - s2 / nn) / nn) / a
    if a > 35:
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / a
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / a


def _bd0(a: float, x: float) -> float:
    """``a log(a / x) + x - a`` (>= 0), accurate also when ``x`` is close to ``a``."""
    if abs(a - x) < 0.1 * (a + x):
        v = (a - x) / (a + x)
        s = (a - x) * v
        ej = 2.0 * a * v
        v2 = v * v
        for j in range(1, 1000):
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return a * math.log(a / x) + x - a


def _log_prefactor(a: float, x: float) -> float:
    """``log(x**a e**-x / Gamma(a))``, the common factor of P(a, x) and Q(a, x).

    Written as ``-bd0(a, x) + log(a / 2 pi) / 2 - stirlerr(a)`` so that the
    large terms ``a log x``, ``x`` and ``lgamma(a)`` never cancel in floating
    point (their naive sum loses ~``log10(a log x)`` digits for large ``a``).
    """
    return -_bd0(a, x) + 0.5 * math.log(a) - _HALF_LOG_2PI - _stirlerr(a)


def _gamma_p_series(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x) by its series (x < a + 1)."""
    term = 1.0 / a
    total = term
    ap = a
    for _ in range(1_000_000):
        ap += 1.0
        term *= x / ap
        total += term
        if term < total * _EPS:
            break
    return total * math.exp(_log_prefactor(a, x))


def _gamma_q_cf(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) by its continued fraction
    (modified Lentz, x >= a + 1)."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, 1_000_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return math.exp(_log_prefactor(a, x)) * h


def _gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma ``Q(a, x) = Gamma(a, x) / Gamma(a)``."""
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return _gamma_q_cf(a, x)


def chi2_sf(statistic: float, dof: int) -> float:
    """Survival function of the chi-square law: ``P(X >= statistic)``.

    ``Q(dof / 2, statistic / 2)``, the regularised upper incomplete gamma
    function, by its power series below ``a + 1`` and its continued fraction
    (modified Lentz) above, as in Numerical Recipes' ``gammq``.  Accurate to
    about 1e-12 relative against ``scipy.stats.chi2.sf`` for ``dof`` from 1 to
    10**5 and p-values down to 1e-300; underflows to 0 below that.

    Args:
        statistic: >= 0 (``inf`` gives 0).
        dof: degrees of freedom, an integer >= 1.
    """
    dof = _check_count(dof, "dof", 1)
    x, _ = _real(statistic, "statistic")
    if math.isnan(x) or x < 0:
        raise ValueError(f"statistic must be >= 0, got {statistic!r}")
    return _gamma_q(dof / 2.0, x / 2.0)


def chi_square_test(
    observed: ArrayLike, expected: ArrayLike, min_expected: float = 5.0
) -> tuple[float, int, float]:
    """Pearson's chi-square goodness-of-fit test of counts against expected counts.

    Bins whose expected count is below ``min_expected`` are pooled into one
    bin (observed and expected summed); if that pooled bin is itself still
    below ``min_expected`` it is merged into the remaining bin with the
    smallest expected count.  Then ``statistic = sum((O - E)**2 / E)`` over
    the bins, ``dof = bins - 1`` and ``p_value = chi2_sf(statistic, dof)``
    (see :func:`chi2_sf`; no SciPy).  Without pooling this equals
    ``scipy.stats.chisquare(observed, expected)``.

    A bin with expected count exactly 0 but observed draws (an impossible
    event under the hypothesis) makes the statistic ``inf`` and the p-value 0
    before any pooling.  With a single bin left (``dof == 0``) there is
    nothing to test: the statistic is 0 and the p-value NaN.

    Args:
        observed: counts, 1-D, >= 0.
        expected: expected counts, same shape, >= 0; the totals must agree
            to 1e-6 relative (like SciPy's check), e.g. ``n * filter_probs``.
        min_expected: pooling threshold (default 5, the textbook rule); 0
            disables pooling.

    Returns:
        ``(statistic, dof, p_value)`` as ``(float, int, float)``.

    Raises:
        ValueError: shapes differ, not 1-D, empty, negative or non-finite
            entries, totals that disagree, or a negative ``min_expected``.
    """
    o = np.asarray(observed, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if o.ndim != 1 or o.shape != e.shape:
        raise ValueError(f"observed and expected must be 1-D of the same length, got {o.shape} and {e.shape}")
    if o.size == 0:
        raise ValueError("observed and expected must not be empty")
    if not (np.all(np.isfinite(o)) and np.all(np.isfinite(e))) or (o < 0).any() or (e < 0).any():
        raise ValueError("observed and expected counts must be finite and >= 0")
    min_expected = _check_finite(min_expected, "min_expected")
    if min_expected < 0:
        raise ValueError(f"min_expected must be >= 0, got {min_expected}")
    total_o, total_e = float(o.sum()), float(e.sum())
    if abs(total_o - total_e) > 1e-6 * max(total_o, total_e):
        raise ValueError(
            f"observed and expected totals differ ({total_o:g} vs {total_e:g}); "
            "expected counts must be n times the probabilities"
        )
    if ((e == 0) & (o > 0)).any():
        return math.inf, max(int(np.count_nonzero(e > 0)) - 1, 0), 0.0
    small = e < min_expected
    big_o, big_e = o[~small], e[~small]
    if small.any():
        pool_o, pool_e = float(o[small].sum()), float(e[small].sum())
        if pool_e >= min_expected or big_e.size == 0:
            big_o, big_e = np.append(big_o, pool_o), np.append(big_e, pool_e)
        else:
            j = int(np.argmin(big_e))
            big_o, big_e = big_o.copy(), big_e.copy()
            big_o[j] += pool_o
            big_e[j] += pool_e
    keep = big_e > 0  # 0/0 bins (nothing expected, nothing seen) carry no information
    big_o, big_e = big_o[keep], big_e[keep]
    dof = int(big_e.size) - 1
    stat = float(np.sum((big_o - big_e) ** 2 / big_e))
    if dof < 1:
        return 0.0, 0, math.nan
    return stat, dof, chi2_sf(stat, dof)


# --------------------------------------------------------------------------
# curves and synthetic logits
# --------------------------------------------------------------------------
def sampling_curves(
    logits: ArrayLike,
    temperatures: Iterable[float] | ArrayLike,
    *,
    progress: Callable[[int, int], object] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> dict[str, NDArray[Any]]:
    """How the softmax of one row changes with temperature.

    For each temperature ``T`` (no knobs: the plain ``softmax(logits / T)``):

    * ``entropy``: Shannon entropy in nats (:func:`compute.softmax.entropy`);
    * ``perplexity``: ``exp(entropy)``, the effective vocabulary size;
    * ``above_1pct``: how many tokens have probability ``> 0.01`` (int64);
    * ``top2_gap``: the largest probability minus the second largest (the
      largest itself when ``V == 1``).

    Temperatures are processed in blocks of at most ``2**21`` probabilities
    (16 MiB), so V = 200,000 needs ~10 temperatures per block.

    Args:
        logits: one 1-D row of finite or ``-inf`` logits (not all ``-inf``,
            no NaN).
        temperatures: finite reals > 0.
        progress: called as ``progress(done, total)`` after each block.
        cancelled: polled before each block; raises
            :class:`compute.attention.Cancelled` when it returns true.

    Returns:
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
    v = x.size
    result = {
        "temperature": ts.copy(),
        "entropy": np.zeros(total),
        "perplexity": np.zeros(total),
        "above_1pct": np.zeros(total, dtype=np.int64),
        "top2_gap": np.zeros(total),
    }
    if np.isposinf(x).any():
        return _curves_general(x, ts, result, progress, cancelled)
    # Fast path.  -inf logits have probability 0 and contribute nothing, so
    # only the finite ones are kept, shifted: d = x - max(x) <= 0 and, at
    # each T, z = d / T (the shifted row softmax computes), e = exp(z),
    # Z = sum(e) and entropy = log Z - sum(e z) / Z.  Only the 100 largest
    # d can have p > 1 % (at most 99 tokens can), and the two largest give
    # the gap, so those need no pass over the whole row.
    d = x[np.isfinite(x)]
    d = d - d.max()
    v = d.size
    head = np.sort(np.partition(d, v - min(v, 100))[v - min(v, 100) :])[::-1]  # descending
    block = max(1, min(total, (1 << 21) // v))
    z_buf, e_buf = np.empty((block, v)), np.empty((block, v))  # reused: no fresh pages per block
    for start in range(0, total, block):
        if cancelled is not None and cancelled():
            raise Cancelled(f"temperature curves cancelled after {start} of {total} temperatures")
        sl = slice(start, min(start + block, total))
        t = ts[sl, None]
        with np.errstate(all="ignore"):
            z = np.divide(d[None, :], t, out=z_buf[: sl.stop - start])
            e = np.exp(z, out=e_buf[: sl.stop - start])
            big_z = e.sum(axis=1)
            h = np.log(big_z) - np.einsum("ij,ij->i", e, z) / big_z
            result["entropy"][sl] = np.maximum(h, 0.0)
            result["perplexity"][sl] = np.exp(result["entropy"][sl])
            p_head = np.exp(head[None, :] / t) / big_z[:, None]
        result["above_1pct"][sl] = np.count_nonzero(p_head > 0.01, axis=-1)
        result["top2_gap"][sl] = p_head[:, 0] - (p_head[:, 1] if v >= 2 else 0.0)
        if progress is not None:
            progress(sl.stop, total)
    return result


def _curves_general(
    x: NDArray[np.float64],
    ts: NDArray[np.float64],
    result: dict[str, NDArray[Any]],
    progress: Callable[[int, int], object] | None,
    cancelled: Callable[[], bool] | None,
) -> dict[str, NDArray[Any]]:
    """:func:`sampling_curves` through full softmax rows (rows with ``+inf``)."""
    total, v = ts.size, x.size
    block = max(1, (1 << 21) // v)
    for start in range(0, total, block):
        if cancelled is not None and cancelled():
            raise Cancelled(f"temperature curves cancelled after {start} of {total} temperatures")
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
        if progress is not None:
            progress(sl.stop, total)
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

    Args:
        v: vocabulary size, integer >= 1.
        seed: integer >= 0.
        exponent: Zipf exponent, finite real > 0 (1.1 is typical of text).
        noise: standard deviation of the logit noise, finite real >= 0.
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
