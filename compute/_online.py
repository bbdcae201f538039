"""Online softmax (Milakov & Gimelshein 2018): the running max and sum.

The primitives here are the one definition of the algorithm that the CUDA
kernels run; the kernels' NumPy emulation (``tests/compute/kernel_emulation.py``)
and the Online-softmax view are built from them.

A *partial* of a block of scores ``x`` is the pair ``(m, d)``: ``m`` the
block's max in raw score units and ``d = sum_i w(x_i, m)`` with

    w(x, m) = exp((x - m) / T)   if x != m
              1                  if x == m and m != -inf
              0                  if x == m == -inf

so the temperature is folded in exactly as :func:`compute.softmax` does it
(shift first, then divide, with its rules for a T outside the dtype's range
and for an overflowing shift: see compute's special values).  The ``x == m`` cases give compute's special
values: each ``+inf`` score contributes 1 and everything else
``exp(-inf) = 0``; an all ``-inf`` row has ``d = 0``; a NaN makes ``m`` and
``d`` NaN.  Two partials merge by keeping the larger max and rescaling the other
sum by :func:`rescale`; merging is associative and commutative (up to
rounding), which is what lets a row be split over threads, warps and blocks.

Everything works elementwise on NumPy arrays (one partial per row) as well as
on scalars.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from compute._checks import _check_whole
from compute._rows import FloatArray, _diff_over_t, _refuse_masked

__all__ = [
    "MEMORY_METHODS",
    "MemoryTraffic",
    "OnlineStep",
    "TreeNode",
    "block_partial",
    "finish_log_softmax",
    "finish_logsumexp",
    "finish_softmax",
    "memory_passes",
    "merge",
    "online_softmax_trace",
    "rescale",
    "tree_merge_trace",
    "weights",
]


def weights(x: ArrayLike, m: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """``w(x, m)`` elementwise (see the module docstring); ``m`` broadcasts."""
    _refuse_masked(x, "x")
    x = np.asarray(x)
    m = np.asarray(m, dtype=x.dtype)
    with np.errstate(all="ignore"):
        e = np.exp(_diff_over_t(x, m, temperature))
        return np.where(x == m, np.where(m == -np.inf, 0.0, 1.0).astype(x.dtype), e)


def rescale(m_old: ArrayLike, m_new: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """The factor a sum taken against ``m_old`` is multiplied by to refer to ``m_new``.

    ``exp((m_old - m_new) / T)``, and exactly 1 when the two are equal (so
    ``+inf == +inf`` gives 1, not ``exp(NaN)``; ``-inf == -inf`` gives 1 on
    a sum that is 0 anyway).  NaN stays NaN.
    """
    m_old = np.asarray(m_old)
    m_new = np.asarray(m_new, dtype=m_old.dtype)
    with np.errstate(all="ignore"):
        e = np.exp(_diff_over_t(m_old, m_new, temperature))
        return np.where(m_old == m_new, m_old.dtype.type(1), e)


def block_partial(x: ArrayLike, temperature: float = 1.0, axis: int = -1) -> tuple[FloatArray, FloatArray]:
    """``(m, d)`` of the scores along ``axis``; an empty block gives ``(-inf, 0)``."""
    x = np.asarray(x)
    if x.shape[axis] == 0:
        shape = x.shape[:axis % x.ndim] + x.shape[axis % x.ndim + 1:]
        return np.full(shape, -np.inf, x.dtype), np.zeros(shape, x.dtype)
    m = np.max(x, axis=axis, keepdims=True)
    d = weights(x, m, temperature).sum(axis=axis, keepdims=True)
    return np.squeeze(m, axis), np.squeeze(d, axis)


def merge(
    m_a: ArrayLike, d_a: ArrayLike, m_b: ArrayLike, d_b: ArrayLike, temperature: float = 1.0
) -> tuple[FloatArray, FloatArray]:
    """Merge two partials: ``m = max(m_a, m_b)``, ``d = d_a·r(m_a, m) + d_b·r(m_b, m)``."""
    m_a, d_a, m_b, d_b = (np.asarray(v) for v in (m_a, d_a, m_b, d_b))
    m = np.maximum(m_a, m_b)  # NaN propagates
    with np.errstate(all="ignore"):
        d = d_a * rescale(m_a, m, temperature) + d_b * rescale(m_b, m, temperature)
    return m, d


def finish_softmax(x: ArrayLike, m: ArrayLike, d: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """The second pass: ``w(x_i, m) / d`` with the row's final partial broadcast."""
    with np.errstate(all="ignore"):
        return weights(x, m, temperature) / np.asarray(d)


def finish_log_softmax(x: ArrayLike, m: ArrayLike, d: ArrayLike, temperature: float = 1.0) -> FloatArray:
    """``(x - m) / T - log(d)``; an all ``-inf`` row gives NaN (``-inf - -inf``)."""
    _refuse_masked(x, "x")
    x = np.asarray(x)
    m = np.asarray(m, dtype=x.dtype)
    with np.errstate(all="ignore"):
        z = np.where(x == m, np.where(m == -np.inf, np.nan, 0.0).astype(x.dtype), _diff_over_t(x, m, temperature))
        return z - np.log(np.asarray(d, dtype=x.dtype))


def finish_logsumexp(m: ArrayLike, d: ArrayLike) -> FloatArray:
    """``m + log(d)`` (temperature 1): ``+inf`` rows give ``+inf``, all ``-inf`` rows ``-inf``."""
    m = np.asarray(m)
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(m), m + np.log(np.asarray(d, dtype=m.dtype)), m)


# --------------------------------------------------------------------------
# Traces: the algorithms written out step by step, for the Online-softmax view
# --------------------------------------------------------------------------
def _check_row(row: ArrayLike, block: int) -> tuple[FloatArray, int]:
    _refuse_masked(row, "the row")
    x = np.asarray(row)
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    if x.dtype.kind != "f":
        raise TypeError(f"the row must hold real numbers, got dtype {x.dtype}")
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"the row must be 1-D and not empty, got shape {x.shape}")
    return x, _check_whole(block, "block")


def _float(v: Any) -> float:
    return float(np.asarray(v))


@dataclass(frozen=True)
class OnlineStep:
    """One block of the sequential online softmax: the block read and the running partial.

    ``m_after, d_after = merge(m_before, d_before, m_block, d_block)``, so
    ``d_after == d_before * rescale + d_block * rescale_block`` with
    ``rescale = exp((m_before - m_after) / T)`` (the factor the old sum is
    multiplied by) and ``rescale_block = exp((m_block - m_after) / T)``.
    ``partial`` is the softmax of what has been read so far,
    ``w(x_j, m_after) / d_after`` for ``j < stop`` (computed when asked
    for, so a long trace stays O(n)): the final result once the last block
    is in.
    """

    index: int  # 0-based block number
    start: int
    stop: int  # the block is row[start:stop]
    m_before: float
    d_before: float
    m_block: float
    d_block: float
    m_after: float
    d_after: float
    rescale: float
    rescale_block: float
    temperature: float
    row: FloatArray = field(repr=False, compare=False)  # the whole row (shared, not copied)

    @property
    def partial(self) -> FloatArray:
        """The softmax of ``row[:stop]`` from the running partial (computed on demand)."""
        t = self.row.dtype.type
        return finish_softmax(self.row[:self.stop], t(self.m_after), t(self.d_after), self.temperature)

    @property
    def max_changed(self) -> bool:
        """Whether this block raised the running max (so the old sum was rescaled)."""
        return bool(self.m_after != self.m_before) and not math.isnan(self.m_after)


def online_softmax_trace(row: ArrayLike, block: int, temperature: float = 1.0) -> list[OnlineStep]:
    """The one-pass (m, d) loop over ``row`` in blocks of ``block`` scores, one step per block.

    This is what one thread (``block = 1``: Milakov & Gimelshein's loop
    over single elements) or one tile loop does: start from ``(-inf, 0)``,
    take each block's own partial and :func:`merge` it into the running one.
    The last block may be shorter.  The last step's ``partial`` is the
    online softmax of the whole row, which equals :func:`compute.softmax`
    up to rounding, with the same special values.
    """
    x, block = _check_row(row, block)
    m = np.asarray(-np.inf, dtype=x.dtype)
    d = np.asarray(0.0, dtype=x.dtype)
    steps = []
    for index, start in enumerate(range(0, x.size, block)):
        stop = min(start + block, x.size)
        m_b, d_b = block_partial(x[start:stop], temperature)
        m_new, d_new = merge(m, d, m_b, d_b, temperature)
        steps.append(OnlineStep(
            index=index, start=start, stop=stop,
            m_before=_float(m), d_before=_float(d), m_block=_float(m_b), d_block=_float(d_b),
            m_after=_float(m_new), d_after=_float(d_new),
            rescale=_float(rescale(m, m_new, temperature)),
            rescale_block=_float(rescale(m_b, m_new, temperature)),
            temperature=temperature, row=x,
        ))
        m, d = m_new, d_new
    return steps


@dataclass(frozen=True)
class TreeNode:
    """One partial of the parallel reduction: a leaf (one block) or the merge of two nodes.

    ``left`` and ``right`` index the level below (``None`` for a leaf; a
    node with no partner is carried up unchanged and has ``right = None``).
    ``rescale_left``/``rescale_right`` are the factors the children's sums
    were multiplied by (1 for a carried node).
    """

    level: int
    index: int
    start: int
    stop: int  # covers row[start:stop]
    m: float
    d: float
    left: int | None = None
    right: int | None = None
    rescale_left: float = 1.0
    rescale_right: float = math.nan

    @property
    def is_leaf(self) -> bool:
        return self.left is None


def tree_merge_trace(row: ArrayLike, block: int, temperature: float = 1.0) -> list[list[TreeNode]]:
    """Per-block ``(m, d)`` partials merged pairwise, level by level, up to one root.

    Level 0 holds one leaf per block (all computed at once, as parallel
    threads or warps would); level ``k + 1`` merges nodes ``2i`` and
    ``2i + 1`` of level ``k`` (an odd last node is carried up unchanged),
    the shape of a shared-memory block reduction.  ``merge`` is associative
    and commutative, so any such order gives the sequential result up to
    rounding; the root's ``(m, d)`` finishes the softmax.
    """
    x, block = _check_row(row, block)
    level: list[TreeNode] = []
    for index, start in enumerate(range(0, x.size, block)):
        stop = min(start + block, x.size)
        m, d = block_partial(x[start:stop], temperature)
        level.append(TreeNode(0, index, start, stop, _float(m), _float(d)))
    levels = [level]
    while len(level) > 1:
        up: list[TreeNode] = []
        for i in range(0, len(level), 2):
            a = level[i]
            if i + 1 == len(level):
                up.append(TreeNode(a.level + 1, i // 2, a.start, a.stop, a.m, a.d, left=i))
                continue
            b = level[i + 1]
            ma, da, mb, db = (np.asarray(v, dtype=x.dtype) for v in (a.m, a.d, b.m, b.d))
            m, d = merge(ma, da, mb, db, temperature)
            up.append(TreeNode(
                a.level + 1, i // 2, a.start, b.stop, _float(m), _float(d), left=i, right=i + 1,
                rescale_left=_float(rescale(ma, m, temperature)),
                rescale_right=_float(rescale(mb, m, temperature)),
            ))
        level = up
        levels.append(level)
    return levels


# --------------------------------------------------------------------------
# Passes over memory
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class MemoryTraffic:
    """How often a softmax method reads and writes a row of global memory."""

    method: str
    passes: int  # sweeps over the row in global memory
    reads: int  # full reads of the row
    writes: int  # full writes of the result

    def bytes(self, n: int, itemsize: int = 4) -> int:
        """Bytes moved for a row of ``n`` elements of ``itemsize`` bytes."""
        return (self.reads + self.writes) * int(n) * int(itemsize)


#: safe: a read for the max, a read for the sum, a read and a write to normalise;
#: online: a read for (m, d) in one go, then a read and a write;
#: fused: the row is read once into registers / shared memory and written once.
_TRAFFIC = {
    "safe": MemoryTraffic("safe", 3, 3, 1),
    "online": MemoryTraffic("online", 2, 2, 1),
    "fused": MemoryTraffic("fused", 1, 1, 1),
}
MEMORY_METHODS = tuple(_TRAFFIC)


def memory_passes(method: str) -> MemoryTraffic:
    """The memory traffic of ``method``: "safe" (3 passes), "online" (2) or "fused" (1)."""
    try:
        return _TRAFFIC[method]
    except KeyError:
        raise ValueError(f"method must be one of {', '.join(MEMORY_METHODS)}, got {method!r}") from None
