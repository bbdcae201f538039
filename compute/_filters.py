"""The LM head's knobs: temperature, top-k, top-p and min-p on the last softmax.

Plain NumPy; no warnings.  ``+inf`` logits: see compute's special values.

The knobs (:func:`filter_probs`, :func:`filter_result`)
-------------------------------------------------------
The distribution a sampler really draws from is the softmax at temperature
``T`` with some tokens cut away and the rest renormalised.  The knobs are
applied in the order of Hugging Face transformers' ``generate`` (its
``TemperatureLogitsWarper``, ``TopKLogitsWarper``, ``TopPLogitsWarper``,
``MinPLogitsWarper``), each one seeing only the tokens the previous ones
kept, with their semantics:

1. **temperature**: ``p = softmax(logits / T)`` (computed as
   :func:`compute.softmax` does, max-shifted first).
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
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_knobs
from compute._rows import _SMALL_ROW, BoolArray, FloatArray, _logit_rows, _top_p_cut, _top_p_thresholds
from compute._softmax import softmax

__all__ = [
    "STAGE_KEPT",
    "STAGE_MASKED",
    "STAGE_MIN_P",
    "STAGE_NAMES",
    "STAGE_TOP_K",
    "STAGE_TOP_P",
    "FilterResult",
    "Stage",
    "filter_probs",
    "filter_result",
    "filter_result_given_probs",
]


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

# A long row whose top-k leaves at most V / _SPARSE tokens is filtered on those alone (_filter_top_k_row).
_SPARSE = 8


# --------------------------------------------------------------------------
# the knobs
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FilterResult:
    """What the knobs did to one row or a batch of rows (shape ``(..., V)``).

    Attributes
    ----------
    probs
        ``softmax(logits / T)`` before any cut (the logits' float
        dtype; see :func:`filter_probs`).
    kept
        bool mask of the tokens that survive every knob (``-inf``
        logits are never kept).
    filtered
        the distribution sampled from: ``probs`` renormalised over
        ``kept``, exactly 0 elsewhere.
    stage
        int8 code of what removed each token: :data:`STAGE_KEPT` (0),
        :data:`STAGE_TOP_K` (1), :data:`STAGE_TOP_P` (2),
        :data:`STAGE_MIN_P` (3), or :data:`STAGE_MASKED` (4, the logit
        is ``-inf``).  A token is charged to the first knob that removed
        it.
    temperature, top_k, top_p, min_p
        the validated knobs (``None`` =
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


def _filter_rows(
    rows: NDArray[np.float64], t: float, k: int | None, top_p: float | None, min_p: float | None,
    probs: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], BoolArray, NDArray[np.float64], NDArray[np.int8]]:
    """The knobs on float64 rows ``(R, V)`` (validated: no NaN, not all -inf).

    ``probs``: the rows' softmax when already made (then ``t`` is not used),
    e.g. one row at several temperatures (:func:`filter_over_temperatures`).
    """
    n_rows, v = rows.shape
    if probs is None:
        probs = softmax(rows, temperature=t)
    if n_rows == 1 and k is not None and v > _SMALL_ROW and k <= v // _SPARSE:
        sparse = _filter_top_k_row(rows, probs, k, top_p, min_p)
        if sparse is not None:
            return sparse
    stage = np.zeros(rows.shape, dtype=np.int8)
    masked = rows == -np.inf
    all_kept = not masked.any()  # while true, ``kept`` is all True and p == probs
    kept = ~masked
    if not all_kept:
        stage[masked] = STAGE_MASKED

    def cut(mask: BoolArray, code: int) -> None:
        # ``mask`` lies within ``kept``, whose stage is 0: ``stage[mask] = code`` and
        # ``kept[mask] = False`` as two whole-array passes (boolean indexing is ~30x slower)
        nonlocal all_kept
        if mask.any():
            np.bitwise_or(stage, mask.view(np.int8) * np.int8(code), out=stage)
            np.logical_and(kept, ~mask, out=kept)
            all_kept = False

    scratch: list[NDArray[np.float64]] = []  # a renormalised row no longer needed: the next one reuses it

    def renormalised() -> NDArray[np.float64]:
        if all_kept:
            return probs
        # np.where(kept, probs, 0.0): probs are finite (in [0, 1]), so x * 1 == x and x * 0 == 0
        p = np.multiply(probs, kept, out=scratch.pop()) if scratch else probs * kept
        p /= p.sum(axis=-1, keepdims=True)
        return p

    with np.errstate(all="ignore"):
        if k is not None and k < v:
            kth = np.partition(rows, v - k, axis=-1)[:, v - k : v - k + 1]
            cut(kept & (rows < kth), STAGE_TOP_K)

        if top_p is not None:
            p1 = renormalised()
            cut(kept & (p1 < _top_p_thresholds(p1, kept, k is not None and k < v, top_p)), STAGE_TOP_P)
            if p1 is not probs:
                scratch.append(p1)  # not used below

        if min_p is not None and min_p > 0.0:
            p2 = renormalised()
            cut(kept & (p2 < min_p * p2.max(axis=-1, keepdims=True)), STAGE_MIN_P)
            if p2 is not probs:
                scratch.append(p2)

        filtered = renormalised()
        if filtered is probs:
            filtered = probs.copy()
    return probs, kept, filtered, stage


_scratch = threading.local()  # each thread's buffer for the top-k partition (reused: no fresh pages per call)
_SCRATCH_MAX = 1 << 20  # entries; longer rows get a fresh copy (no 8 MB+ buffer kept per thread)


def _partition_scratch(rows: NDArray[np.float64], kth: int) -> NDArray[np.float64]:
    """``np.partition(rows[0], kth)`` in this thread's reused buffer (valid until its next call here).

    The order statistics (the value at ``kth``, everything at or above it
    being >= it) do not depend on where the copy lives; a fresh copy of a
    long row per call costs its page faults (about 1 ms for 200,000 float64).
    """
    v = rows.shape[1]
    if v > _SCRATCH_MAX:  # a row this long is not kept around: a fresh copy
        return np.partition(rows[0], kth)
    buf = getattr(_scratch, "buf", None)
    if buf is None or buf.size < v:
        buf = _scratch.buf = np.empty(v)
    part = buf[:v]
    np.copyto(part, rows[0])
    part.partition(kth)
    return part


def _filter_top_k_row(
    rows: NDArray[np.float64], probs: NDArray[np.float64], k: int, top_p: float | None, min_p: float | None
) -> tuple[NDArray[np.float64], BoolArray, NDArray[np.float64], NDArray[np.int8]] | None:
    """:func:`_filter_rows` of one long row with top-k on, bit for bit, working on the top-k survivors only.

    After top-k only a few tokens of V are left, and every later step of
    _filter_rows is a whole-row pass over ``probs * kept`` (zero outside).
    That row is built here as zeros with ``probs`` at the kept tokens (the
    same numbers: ``x * 1 == x`` and ``x * 0 == 0`` for the finite ``probs >= 0``),
    summed along the row as _filter_rows sums it (the same grouping, so the
    same sum), and the quotients, the top-p sort (_filter_rows also sorts the
    kept tokens only) and the min-p comparisons are made for the kept tokens
    alone.  None (the caller goes the whole-row way) when top-k leaves more
    than V / _SPARSE tokens (ties, -inf logits) or a logit is +inf.
    """
    v = rows.shape[1]
    part = _partition_scratch(rows, v - k)  # only the order statistics at v - k and above are read
    if not part[v - k :].max() < np.inf:  # a +inf logit (its own softmax rule): the whole-row way
        return None
    kth = part[v - k]
    kept = rows >= kth  # -inf < kth unless kth is -inf
    masked = rows == -np.inf
    any_masked = bool(masked.any())
    if any_masked:
        kept &= ~masked
    where = np.flatnonzero(kept[0])
    if where.size > v // _SPARSE:
        return None
    stage = (~kept).view(np.int8) * np.int8(STAGE_TOP_K)  # what top-k cut (the masked ones fixed next)
    if any_masked:
        stage[masked] = STAGE_MASKED
    p_kept = probs[0, where]
    # ``probs * kept`` as a whole row: zeros with probs at the kept tokens (one row, a cut token zeroed in it)
    row = np.zeros((1, v))
    row[0, where] = p_kept

    def renormalised() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The row's sum (summed as _filter_rows sums ``probs * kept``) and ``probs * kept / sum`` at the kept."""
        total = row.sum(axis=-1, keepdims=True)
        return total, p_kept / total[0, 0]

    def cut(drop: BoolArray, code: int) -> None:
        nonlocal where, p_kept
        if drop.any():
            gone = where[drop]
            stage[0, gone] = code
            kept[0, gone] = False
            row[0, gone] = 0.0
            where, p_kept = where[~drop], p_kept[~drop]

    with np.errstate(all="ignore"):
        if top_p is not None:
            _total, p1 = renormalised()
            threshold = np.nextafter(0.0, 1.0) if top_p >= 1.0 else _top_p_cut(p1, top_p)
            cut(p1 < threshold, STAGE_TOP_P)
        if min_p is not None and min_p > 0.0:
            _total, p2 = renormalised()
            top = max(float(p2.max()), 0.0) if where.size < v else float(p2.max())  # the zeros of the row
            cut(p2 < min_p * top, STAGE_MIN_P)
        # ``row / total``: 0 / total is 0 outside the kept tokens, so only the kept ones are divided
        _total, at = renormalised()
        filtered = row
        filtered[0, where] = at
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


def filter_result_given_probs(
    logits: ArrayLike,
    probs: NDArray[np.float64],
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
) -> FilterResult:
    """:func:`filter_result` of one float64 row whose softmax at ``temperature`` is already made.

    ``probs`` must be the ``probs`` of an earlier :func:`filter_result` of the
    same ``logits`` at the same ``temperature`` (not checked): only the cuts
    are made again (a top-k, top-p or min-p move at an unchanged T), with the
    same operations on the same numbers, so the result has the same bits.
    ``probs`` is used as given (read, never written) and is the result's
    ``probs``.  Other logits (not a 1-D float64 row) go to filter_result.
    """
    t, k, p, m = _check_knobs(temperature, top_k, top_p, min_p)
    rows, out_dtype = _logit_rows(logits)
    probs = np.asarray(probs)
    if np.ndim(logits) != 1 or out_dtype != np.float64 or probs.dtype != np.float64 or probs.shape != rows.shape[1:]:
        return filter_result(logits, t, k, p, m)
    _, kept, filtered, stage = _filter_rows(rows, t, k, p, m, probs=probs.reshape(rows.shape))
    return FilterResult(probs=probs, kept=kept.reshape(-1), filtered=filtered.reshape(-1), stage=stage.reshape(-1),
                        temperature=t, top_k=k, top_p=p, min_p=m)


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

    Parameters
    ----------
    logits
        one row of ``V`` scores, or a batch ``(..., V)`` (each row
        filtered on its own).  Lists, ints and bools become float64.
    temperature
        finite real > 0 (:func:`compute.check_temperature`).
    top_k
        ``None`` (off) or an integer ``>= 1``; ``>= V`` keeps all.
    top_p
        ``None`` (off) or a real in ``(0, 1]``.
    min_p
        ``None`` (off) or a real in ``[0, 1]``; 0 cuts nothing.

    Returns
    -------
    ndarray
        An array of ``logits``' shape.  The work is done in float64; the
        result is cast to the logits' float dtype (float16 and float32 are
        kept, everything else is float64), like :func:`compute.softmax`.

    Raises
    ------
    TypeError
        non-real logits, or a knob of the wrong type (e.g. a float
        ``top_k``, a string ``top_p``).
    ValueError
        a knob out of range, empty or 0-d logits, a row with a
        NaN, or a row whose every logit is ``-inf`` (nothing to sample).

    ``+inf`` logits: see compute's special values.
    """
    return filter_result(logits, temperature, top_k, top_p, min_p).filtered


# --------------------------------------------------------------------------
# for the samplers (compute._draws)
# --------------------------------------------------------------------------
def filtered_row(logits: ArrayLike, knobs: dict[str, Any]) -> NDArray[np.float64]:
    """:func:`filter_probs` of one row with the knobs given by name, in float64.

    What the samplers draw from (kept in float64 whatever the logits' dtype).

    Raises
    ------
    TypeError
        An unknown knob; otherwise as :func:`filter_probs`.
    """
    unknown = set(knobs) - {"temperature", "top_k", "top_p", "min_p"}
    if unknown:
        raise TypeError(f"unknown knob(s) {sorted(unknown)}; expected temperature, top_k, top_p, min_p")
    t, k, p, m = _check_knobs(
        knobs.get("temperature", 1.0), knobs.get("top_k"), knobs.get("top_p"), knobs.get("min_p")
    )
    rows, _ = _logit_rows(logits)
    return _filter_rows(rows, t, k, p, m)[2][0]
