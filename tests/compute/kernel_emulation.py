"""NumPy replay of the CUDA kernels' decomposition, built from :mod:`compute._online`.

Each function runs the same decomposition as the kernel it names, taken
from the same :func:`compute.backends.kernels.launch_plan`: the same packets
per thread (lane ``l`` of the warp path holds elements ``(j*32 + l)*vec + k``;
thread ``t`` of a block path holds packets ``t, t + B, t + 2B, ...``), the
same per-thread partials in the same element order, the same warp butterfly
(xor 16, 8, 4, 2, 1) and block merge (each warp's result, then a butterfly
over the warp results padded with the identity), the same split-row chunks
and merge of their partials (lane ``l`` merges partials ``l, l + 32, ...``
in order, then the butterfly), and the same attention tiling (32 keys per
tile, query blocks of ``block_q`` rows, causal tiles skipped per block).

A butterfly step is commutative (``merge(a, b)`` and ``merge(b, a)`` round
the same), so every lane ends with lane 0's value, which is what a halving
tree over the lanes computes; that is how it is replayed here.

The arithmetic is that of :mod:`compute._online` (so it divides by ``T``
where a kernel multiplies by ``1/T``), in the input's working precision
(float16 in float32): the tests run it in float64 against
:func:`compute.softmax` and friends.  Speed is not a goal; use small rows or a
plan with small blocks (:meth:`Plan.with_threads`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from compute import _online as online
from compute._checks import check_temperature
from compute.backends import kernels

__all__ = ["KINDS", "emulate_flash_attention", "emulate_softmax"]

KINDS = ("softmax", "log_softmax", "logsumexp")


def _work(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# --------------------------------------------------------------------------
# reductions in the kernels' order
# --------------------------------------------------------------------------
def _tree(v, op, identity):
    """The butterfly over the last axis (32 lanes; shorter is padded with ``identity``)."""
    n = v.shape[-1]
    if n < 32:
        v = np.concatenate([v, np.full(v.shape[:-1] + (32 - n,), identity, v.dtype)], axis=-1)
    off = 16
    while off:
        v = op(v[..., :off], v[..., off : 2 * off])
        off //= 2
    return v[..., 0]


def _tree_merge(m, d, t):
    """Butterfly merge of partials along the last axis (32 entries or fewer)."""
    n = m.shape[-1]
    if n < 32:
        pad = m.shape[:-1] + (32 - n,)
        m = np.concatenate([m, np.full(pad, -np.inf, m.dtype)], axis=-1)
        d = np.concatenate([d, np.zeros(pad, d.dtype)], axis=-1)
    off = 16
    while off:
        m, d = online.merge(m[..., :off], d[..., :off], m[..., off : 2 * off], d[..., off : 2 * off], t)
        off //= 2
    return m[..., 0], d[..., 0]


def _block_max(v):
    """``v``: (rows, threads) per-thread values; warps first, then the warp results."""
    r, threads = v.shape
    per_warp = _tree(v.reshape(r, threads // 32, 32), np.maximum, -np.inf)
    return _tree(per_warp, np.maximum, -np.inf)


def _block_sum(v):
    r, threads = v.shape
    per_warp = _tree(v.reshape(r, threads // 32, 32), np.add, 0.0)
    return _tree(per_warp, np.add, 0.0)


def _block_merge(m, d, t):
    r, threads = m.shape
    wm, wd = _tree_merge(m.reshape(r, threads // 32, 32), d.reshape(r, threads // 32, 32), t)
    return _tree_merge(wm, wd, t)


def _packets(x, threads: int, vec: int, p0: int, p1: int):
    """Packets ``[p0, p1)`` of each row as (rows, J, threads, vec), thread-strided, -inf padded.

    ``-inf`` padding is the identity of every per-thread step (max, sum of
    weights, online update), so it stands in for "no element".
    """
    r, n = x.shape
    lo, hi = p0 * vec, min(p1 * vec, n)
    seg = x[:, lo:hi]
    span = threads * vec
    j = max(1, math.ceil(seg.shape[1] / span))
    pad = np.full((r, j * span - seg.shape[1]), -np.inf, x.dtype)
    return np.concatenate([seg, pad], axis=1).reshape(r, j, threads, vec)


def _sequential_sum(w):
    """Per-thread sums of (rows, J, threads, vec) in the kernel's element order (j, then k)."""
    acc = np.zeros(w.shape[0:1] + w.shape[2:3], w.dtype)
    for j in range(w.shape[1]):
        for k in range(w.shape[3]):
            acc = acc + w[:, j, :, k]
    return acc


def _online(p, t):
    """Per-thread online (m, d) of (rows, J, threads, vec): one ``merge`` per element, in order.

    The kernel's ``online_add`` is ``merge(m, d, x, w(x, x))`` with one exp.
    """
    m = np.full(p.shape[0:1] + p.shape[2:3], -np.inf, p.dtype)
    d = np.zeros_like(m)
    for j in range(p.shape[1]):
        for k in range(p.shape[3]):
            xm, xd = online.block_partial(p[:, j, :, k][..., None], t)
            m, d = online.merge(m, d, xm, xd, t)
    return m, d


def _finish(x, m, d, t, kind):
    if kind == "logsumexp":
        return online.finish_logsumexp(m, d)
    if kind == "log_softmax":
        return online.finish_log_softmax(x, m[:, None], d[:, None], t)
    return online.finish_softmax(x, m[:, None], d[:, None], t)


# --------------------------------------------------------------------------
# the four softmax paths
# --------------------------------------------------------------------------
def _warp(x, plan, t):
    r, n = x.shape
    vec, per = plan.vec, plan.per
    p = _packets(x, 32, vec, 0, per // vec * 32)  # (rows, per/vec, 32 lanes, vec)
    lane_max = p.max(axis=(1, 3))
    m = _tree(lane_max, np.maximum, -np.inf)
    w = online.weights(p, m[:, None, None, None], t)
    d = _tree(_sequential_sum(w), np.add, 0.0)
    return m, d


def _block(x, plan, t):
    r, n = x.shape
    p = _packets(x, plan.threads, plan.vec, 0, math.ceil(n / plan.vec))
    m = _block_max(p.max(axis=(1, 3)))
    w = online.weights(p, m[:, None, None, None], t)
    d = _block_sum(_sequential_sum(w))
    return m, d


def _stream(x, plan, t):
    r, n = x.shape
    p = _packets(x, plan.threads, plan.vec, 0, math.ceil(n / plan.vec))
    return _block_merge(*_online(p, t), t)


def split_partials(x, plan, t: float = 1.0):
    """Kernel 1 of the split path: the (rows, splits) partials ``(m, d)``."""
    r, n = x.shape
    ms, ds = [], []
    for s in range(plan.splits):
        start, stop = s * plan.chunk, min(n, (s + 1) * plan.chunk)
        p = _packets(x, plan.threads, plan.vec, start // plan.vec, math.ceil(stop / plan.vec))
        m, d = _block_merge(*_online(p, t), t)
        ms.append(m)
        ds.append(d)
    return np.stack(ms, axis=1), np.stack(ds, axis=1)


def _split(x, plan, t):
    pm, pd = split_partials(x, plan, t)
    r, splits = pm.shape
    lanes = 32
    m = np.full((r, lanes), -np.inf, pm.dtype)
    d = np.zeros_like(m)
    for first in range(0, splits, lanes):  # lane l: partials l, l + 32, ... in order
        chunk_m = pm[:, first : first + lanes]
        chunk_d = pd[:, first : first + lanes]
        w = chunk_m.shape[1]
        m[:, :w], d[:, :w] = online.merge(m[:, :w], d[:, :w], chunk_m, chunk_d, t)
    return _tree_merge(m, d, t)


_PATHS = {"warp": _warp, "block": _block, "stream": _stream, "split": _split}


def emulate_softmax(
    x: ArrayLike,
    temperature: float = 1.0,
    kind: str = "softmax",
    plan: kernels.Plan | None = None,
):
    """Replay the softmax kernels on the rows of ``x`` (last axis).

    Args:
        x: float16/32/64 scores, rows along the last axis (any leading shape).
        temperature: as :func:`compute.softmax` (``logsumexp`` takes none: 1).
        kind: ``"softmax"``, ``"log_softmax"`` or ``"logsumexp"``.
        plan: the decomposition; ``None`` takes :func:`kernels.launch_plan`
            for these rows with its defaults (an H100/H200).

    Returns:
        ``x``'s shape (``logsumexp``: the last axis removed) in ``x``'s
        dtype, float16 computed in float32.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    t = check_temperature(temperature)
    if kind == "logsumexp":
        t = 1.0
    a = np.asarray(x)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    out_dtype = a.dtype
    a = np.atleast_1d(a)
    lead, n = a.shape[:-1], a.shape[-1]
    rows = math.prod(lead)
    if rows == 0 or n == 0:
        if kind == "logsumexp":
            return np.full(lead, -np.inf, out_dtype)
        return np.empty(a.shape, out_dtype)
    xw = np.ascontiguousarray(a.reshape(rows, n), dtype=_work(out_dtype))
    if plan is None:
        plan = kernels.launch_plan(rows, n, out_dtype)
    if (plan.rows, plan.n) != (rows, n):
        raise ValueError(f"the plan is for {plan.rows} x {plan.n} rows, the input is {rows} x {n}")
    if plan.vec > 1 and n % plan.vec:
        raise ValueError(f"a plan with vec={plan.vec} needs n % {plan.vec} == 0, got n={n}")
    if plan.path != "warp" and plan.threads % 32:
        raise ValueError(f"the block size must be a multiple of 32, got {plan.threads}")
    with np.errstate(all="ignore"):
        m, d = _PATHS[plan.path](xw, plan, t)
        out = _finish(xw, m, d, t, kind)
    if kind == "logsumexp":
        return out.reshape(lead).astype(out_dtype)
    return out.reshape(a.shape).astype(out_dtype)


# --------------------------------------------------------------------------
# fused attention
# --------------------------------------------------------------------------
def emulate_flash_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    scale: float | None = None,
    causal: bool = False,
    tile: int = kernels.ATTENTION_BLOCK_KEYS,
    block_q: int | None = None,
):
    """Replay the fused attention kernel: ``(out, lse)``.

    ``q``: (..., n_q, d), ``k``: (..., n_k, d), ``v``: (..., n_k, d_v); the
    leading axes broadcast.  Keys come in tiles of ``tile`` (the kernel's 32); query
    rows in blocks of ``block_q`` (the kernel's plan when ``None``), which
    only matters for the causal tile skipping.  Per query row: the running
    max ``m``, sum ``l`` and output accumulator, rescaled by
    ``rescale(m_old, m_new)`` at each tile.  ``lse`` is the logsumexp of the
    row's scaled, masked scores; a row with no allowed key gives output 0
    and lse ``-inf``.  Returns arrays in the inputs' result dtype (lse in the
    working precision: float32 for float16).
    """
    qa, ka, va = (np.asarray(a) for a in (q, k, v))
    out_dtype = np.result_type(qa, ka, va)
    if out_dtype.kind != "f":
        out_dtype = np.dtype(np.float64)
    work = _work(out_dtype)
    lead = np.broadcast_shapes(qa.shape[:-2], ka.shape[:-2], va.shape[:-2])
    qa, ka, va = (np.broadcast_to(a.astype(work), lead + a.shape[-2:]) for a in (qa, ka, va))
    n_q, d = qa.shape[-2:]
    n_k, d_v = va.shape[-2:]
    if ka.shape[-2:] != (n_k, d):
        raise ValueError(f"k must be (..., {n_k}, {d}), got {ka.shape}")
    s = 1.0 / math.sqrt(d) if scale is None else check_temperature(scale)
    if block_q is None:
        block_q = kernels.attention_plan(1, n_q, d, d_v, out_dtype).block_q if d_v <= 128 and d <= 128 else 16
    m = np.full(lead + (n_q,), -np.inf, work)
    lsum = np.zeros(lead + (n_q,), work)
    acc = np.zeros(lead + (n_q, d_v), work)
    qi = np.arange(n_q)
    q_last = np.minimum((qi // block_q + 1) * block_q, n_q) - 1  # each row's block's last query
    with np.errstate(all="ignore"):
        for k0 in range(0, n_k, tile):
            keys = np.arange(k0, k0 + tile)
            kt = ka[..., k0 : k0 + tile, :]
            vt = va[..., k0 : k0 + tile, :]
            short = tile - kt.shape[-2]
            if short:  # the kernel zero-fills keys past n_k and masks them
                kt = np.concatenate([kt, np.zeros(kt.shape[:-2] + (short, d), work)], axis=-2)
                vt = np.concatenate([vt, np.zeros(vt.shape[:-2] + (short, d_v), work)], axis=-2)
            scores = (qa @ np.swapaxes(kt, -1, -2)) * work.type(s)
            allowed = keys[None, :] < n_k
            if causal:
                allowed = allowed & (keys[None, :] <= qi[:, None])
            scores = np.where(allowed, scores, work.type(-np.inf))
            m_new = np.maximum(m, _tree(scores, np.maximum, -np.inf) if tile == 32 else scores.max(axis=-1))
            r = online.rescale(m, m_new)
            p = online.weights(scores, m_new[..., None])
            psum = _tree(p, np.add, 0.0) if tile == 32 else p.sum(axis=-1)
            new_l = lsum * r + psum
            new_acc = acc * r[..., None] + p @ vt
            live = ~(causal & (k0 > q_last))  # tiles right of a causal block are skipped
            m = np.where(live, m_new, m)
            lsum = np.where(live, new_l, lsum)
            acc = np.where(live[:, None], new_acc, acc)
        empty = m == -np.inf
        out = np.where(empty[..., None], work.type(0), acc / lsum[..., None])
        lse = online.finish_logsumexp(m, lsum)
    return out.astype(out_dtype), lse.astype(work)
