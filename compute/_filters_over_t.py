"""Top-k / top-p / min-p filtering of one logit row at many temperatures at once.

:func:`filter_over_temperatures` is bit for bit one :func:`compute.filter_probs`
call per temperature (see :mod:`compute._filters` for the knobs' rules), in
whole-array passes: the Sampling view's speculative-decoding acceptance
curve filters its draft at 25 temperatures per redraw.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from compute._checks import _check_knobs, check_temperature
from compute._filters import STAGE_MASKED, STAGE_MIN_P, STAGE_TOP_K, STAGE_TOP_P
from compute._rows import BoolArray, _logit_rows, _top_p_thresholds
from compute._steps import softmax_over_temperatures

__all__ = ["filter_over_temperatures"]


def filter_over_temperatures(
    logits: ArrayLike,
    temperatures: ArrayLike,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
) -> NDArray[np.float64]:
    """``filter_probs(logits, temperature=t, ...)`` for every ``t``, as the rows of one float64 array.

    One 1-D row of ``logits``; the result has shape ``(len(temperatures), V)``
    and is bit for bit one :func:`filter_probs` call per temperature for float64
    logits: the softmaxes come from :func:`compute.softmax_over_temperatures`
    (bit for bit softmax's, in one 2-D pass), then the knobs take each row on
    its own, as filter_probs does, without its per-call checks.  Other
    dtypes: float64 here (filter_probs casts back to theirs).
    """
    ts = np.asarray(temperatures, dtype=np.float64).reshape(-1)
    for t in ts:
        check_temperature(float(t))
    _t, k, p, m = _check_knobs(1.0, top_k, top_p, min_p)
    rows, _ = _logit_rows(logits)
    if rows.shape[0] != 1:
        raise ValueError(f"filter_over_temperatures takes one 1-D row, got shape {np.shape(logits)}")
    if not ts.size:
        return np.zeros((0, rows.shape[1]))
    probs = softmax_over_temperatures(rows[0], ts).astype(np.float64, copy=False)
    return _filter_each(rows, probs, k, p, m)


def _filter_each(
    rows: NDArray[np.float64], probs: NDArray[np.float64], k: int | None, top_p: float | None, min_p: float | None
) -> NDArray[np.float64]:
    """The filtered rows of :func:`_filter_rows` for one logit row ``(1, V)`` and its softmaxes ``probs``
    ``(R, V)`` (one per temperature), each row bit for bit ``_filter_rows(rows, 1.0, k, top_p, min_p,
    probs=probs[i : i + 1])[2]``, in whole-array passes.

    _filter_rows renormalises every row of a batch once any row loses a token; a row of its own is
    returned as it is while nothing cut it.  Here each row keeps that flag of its own (``untouched``):
    a row nothing cut is its softmax, the others are renormalised as _filter_rows does (per row: the
    same products, the same sum along the row, the same quotients).
    """
    n_rows, v = probs.shape
    masked = rows == -np.inf  # (1, V): the same for every temperature
    stage = np.zeros(probs.shape, dtype=np.int8)
    kept = np.broadcast_to(~masked, probs.shape).copy()
    untouched = np.full(n_rows, not masked.any())
    if masked.any():
        stage[np.broadcast_to(masked, probs.shape)] = STAGE_MASKED

    def cut(mask: BoolArray, code: int) -> None:
        hit = mask.any(axis=-1)
        if hit.any():  # rows with nothing to cut are left as they are by these passes (| 0, & True)
            np.bitwise_or(stage, mask.view(np.int8) * np.int8(code), out=stage)
            np.logical_and(kept, ~mask, out=kept)
            untouched[hit] = False

    def renormalised() -> NDArray[np.float64]:
        if untouched.all():
            return probs
        p = probs * kept
        p /= p.sum(axis=-1, keepdims=True)
        p[untouched] = probs[untouched]
        return p

    with np.errstate(all="ignore"):
        if k is not None and k < v:
            kth = np.partition(rows, v - k, axis=-1)[:, v - k : v - k + 1]
            cut(kept & (rows < kth), STAGE_TOP_K)

        if top_p is not None:
            p1 = renormalised()
            cut(kept & (p1 < _top_p_thresholds(p1, kept, k is not None and k < v, top_p)), STAGE_TOP_P)

        if min_p is not None and min_p > 0.0:
            p2 = renormalised()
            cut(kept & (p2 < min_p * p2.max(axis=-1, keepdims=True)), STAGE_MIN_P)

        filtered = renormalised()
        if filtered is probs:
            filtered = probs.copy()
    return filtered
