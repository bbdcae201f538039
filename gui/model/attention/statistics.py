"""The Attention core's statistics: the histograms of the raw and scaled score samples, and their spreads.

Each is NumPy's own result to the bit (``np.histogram``, ``np.abs(x).max()``, ``np.std``), worked
out block by block in cache-sized scratch on every usable core (``compute``'s pool); pure functions
of their arrays (no Qt; thread-safe). See tests/gui/test_attention_speed_dk.py and
tests/gui/test_attention_speed5_statistics.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from compute._pool import max_threads, run_chunks

#: The histograms have this many equal bins over +-the largest |entry| of both samples.
HIST_BINS = 60


def sorted_counts(ordered: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """``np.histogram(a, edges)[0]`` from ``ordered = np.sort(a)``: the same definition (each bin
    holds edges[i] <= x < edges[i + 1], the last one its right edge too; NaN in none)."""
    ends = np.concatenate([np.searchsorted(ordered, edges[:-1], side="left"),
                           np.searchsorted(ordered, edges[-1:], side="right")])
    return np.diff(ends)


def histograms(sample_raw: np.ndarray, sample_scaled: np.ndarray, scale: float,
               edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counts of ``np.histogram(sample_raw, edges)`` and ``np.histogram(sample_scaled, edges)``.

    One sort serves both when ``sample_scaled`` is ``sample_raw * scale`` entry for entry (checked
    here; compute scales the product so): x -> x * scale (scale > 0) is monotone in floating point
    too, so the sorted scaled sample is the sorted raw one times the scale, bit for bit.
    """
    ordered = np.sort(sample_raw)
    with np.errstate(all="ignore"):
        same = scale > 0 and np.array_equal(sample_raw * scale, sample_scaled)
        ordered_scaled = ordered * scale if same else np.sort(sample_scaled)
    return sorted_counts(ordered, edges), sorted_counts(ordered_scaled, edges)


#: binned_counts goes through a sample in blocks of this many entries (they stay in the cache).
COUNT_BLOCK = 1 << 16
#: A bin position (x - lo) * bins / (hi - lo) this close to a whole number is checked against the edges.
NEAR_EDGE = 1e-6
#: spreads sums a float64 array in blocks of at most this many entries (numpy's own pairwise blocks).
SPREAD_BLOCK = 1 << 16
#: Below this many entries in all, the passes of spreads and sample_histograms stay on one thread.
SPLIT_ENTRIES = 1 << 17


def _in_chunks(tasks: list[Callable[..., Any]], entries: int,
               scratch: Callable[[], Any] | None = None) -> list[Any]:
    """``task(own)`` of every task, ``own`` a scratch made once per thread by ``scratch()`` (or
    ``task()``), in order; on every usable core when the tasks hold ``entries >= SPLIT_ENTRIES``
    (``compute``'s pool: each task is the same single-thread code wherever it runs)."""
    results: list[Any] = [None] * len(tasks)

    def start() -> Callable[[int], None]:
        own = scratch() if scratch is not None else None

        def do(i: int) -> None:
            results[i] = tasks[i](own) if scratch is not None else tasks[i]()

        return do

    run_chunks(start, len(tasks), max_threads() if len(tasks) > 1 and entries >= SPLIT_ENTRIES else 1)
    return results


def _block_counts(x: np.ndarray, edges: np.ndarray, scratch: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """binned_counts of one block (at most COUNT_BLOCK entries), in the scratch arrays ``(f, i)``."""
    bins = edges.size - 1
    lo, factor = edges[0], bins / (edges[-1] - edges[0])
    f, i = scratch[0][:x.size], scratch[1][:x.size]
    np.subtract(x, lo, out=f)
    f *= factor
    i[...] = f  # truncates: f >= 0, and f < bins + 1 (x <= hi), so i <= bins: x == hi, or f rounded up
    counts = np.bincount(i, minlength=bins + 1)
    f -= np.rint(f)
    near = np.flatnonzero(np.abs(f, out=f) < NEAR_EDGE)  # every i == bins among them
    if near.size:
        exact = np.minimum(np.searchsorted(edges, x[near], side="right") - 1, bins - 1)
        counts[:bins] += np.bincount(exact, minlength=bins)
        counts -= np.bincount(i[near], minlength=counts.size)
    counts[bins - 1] += counts[bins:].sum()  # nothing is left there (near), unless NEAR_EDGE is patched
    return counts[:bins]


def _count_scratch() -> tuple[np.ndarray, np.ndarray]:
    return np.empty(COUNT_BLOCK), np.empty(COUNT_BLOCK, dtype=np.intp)


def binned_counts(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """``np.histogram(x, edges)[0]`` for ``edges = np.linspace(lo, hi, bins + 1)`` (finite, lo < hi, hi - lo
    finite) holding every entry of ``x`` (lo <= x <= hi, no NaN); O(n), no sort.

    Each entry's bin is its position f = (x - lo) * (bins / (hi - lo)) cut to a whole number. f and
    the edges' own positions are within 1e-12 of a bin of their exact values, so where f is at least
    NEAR_EDGE from a whole number the cut bin is the one whose edges hold x (edges[i] <= x <
    edges[i + 1]); the few entries nearer are put in their bin by the edges themselves (searchsorted,
    the last bin holding its right edge), which is np.histogram's definition. Blocks of COUNT_BLOCK
    entries are counted on every usable core (whole counts: their sum is the same in any order).
    """
    return many_binned_counts([x], edges)[0]


def many_binned_counts(samples: list[np.ndarray], edges: np.ndarray) -> list[np.ndarray]:
    """:func:`binned_counts` of each sample, the blocks of all of them shared out among the cores."""
    tasks, owner = [], []
    for j, x in enumerate(samples):
        for start in range(0, x.size, COUNT_BLOCK):
            block = x[start:start + COUNT_BLOCK]
            tasks.append(lambda scratch, block=block: _block_counts(block, edges, scratch))
            owner.append(j)
    out = [np.zeros(edges.size - 1, dtype=np.intp) for _ in samples]
    for j, counts in zip(owner, _in_chunks(tasks, sum(x.size for x in samples), _count_scratch)):
        out[j] += counts
    return out


def _largest_magnitudes(samples: list[np.ndarray]) -> list[np.float64]:
    """``np.abs(x).max()`` of each sample (NaN if it holds one; ValueError if empty), block by block
    in a scratch per thread that stays in the cache (no |x| as large as the sample), on every usable core."""
    tasks, owner = [], []
    for j, x in enumerate(samples):
        if not x.size:
            np.abs(x).max()  # numpy's own ValueError for an empty sample
        for start in range(0, x.size, COUNT_BLOCK):
            block = x[start:start + COUNT_BLOCK]
            tasks.append(lambda own, block=block: np.abs(block, out=own[:block.size]).max())  # NaN stays NaN
            owner.append(j)
    found = _in_chunks(tasks, sum(x.size for x in samples), lambda: np.empty(COUNT_BLOCK))
    return [np.maximum.reduce(np.array([v for o, v in zip(owner, found) if o == j])) for j in range(len(samples))]


def strided_sample(a: np.ndarray, most: int) -> np.ndarray:
    """At most about ``most`` entries of ``a``, every ``stride``-th in C order (all when they fit).

    The stride shares no factor with the last axis (the keys), so the sample goes through every
    key column instead of the few a stride dividing n_k would keep (a stride of 8 over rows of 512
    keys would see keys 0, 8, 16, ... only)."""
    flat = a.reshape(-1)
    stride = max(1, flat.size // max(most, 1))
    if stride > 1:  # then a has at least two entries, so an axis
        while math.gcd(stride, a.shape[-1]) != 1:
            stride += 1
    return flat[::stride]


def sample_histograms(sample_raw: np.ndarray,
                      sample_scaled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges (HIST_BINS equal bins over +-the largest |entry| of both samples, at least 1e-12) and
    the counts of ``np.histogram(sample, edges)`` of each sample: :func:`binned_counts` when those
    edges are finite (then they hold every entry), else :func:`histograms` (a NaN or an inf)."""
    top = float(max(*_largest_magnitudes([sample_raw, sample_scaled]), 1e-12))
    edges = np.linspace(-top, top, HIST_BINS + 1)
    if math.isfinite(2 * top):
        return edges, *many_binned_counts([sample_raw, sample_scaled], edges)
    with np.errstate(all="ignore"):
        return edges, *histograms(sample_raw, sample_scaled, 1.0, edges)


def _pairwise_split(m: int) -> int:
    """Where numpy's pairwise sum of ``m > 128`` entries splits them: half, less its remainder by 8."""
    half = m // 2
    return half - half % 8


def _pairwise_blocks(size: int, block: int) -> list[tuple[int, int]]:
    """(start, count) of the parts numpy's pairwise sum of ``size`` entries splits them into, in order,
    down to parts of at most ``block`` (or 128: numpy does not split those) entries."""
    out: list[tuple[int, int]] = []

    def split(lo: int, m: int) -> None:
        if m <= max(block, 128):
            out.append((lo, m))
            return
        half = _pairwise_split(m)
        split(lo, half)
        split(lo + half, m - half)

    split(0, size)
    return out


def _pairwise_total(sums: list[np.float64], size: int, block: int) -> np.float64:
    """The sums of :func:`_pairwise_blocks`' parts added up as numpy's pairwise sum adds them."""
    parts = iter(sums)

    def add(m: int) -> np.float64:
        if m <= max(block, 128):
            return next(parts)
        half = _pairwise_split(m)
        return add(half) + add(m - half)

    return add(size)


def spreads(*arrays: np.ndarray) -> tuple[float, ...]:
    """``float(a.std())`` of each array, to the bit.

    A C-contiguous float64 array takes NumPy's own steps (numpy's ``_var``: the sum by ``np.add.reduce``
    divided by the count, the deviations squared, their sum divided by the count, the root) in blocks:
    the parts numpy's pairwise sum splits the entries into, each summed by ``np.add.reduce`` (which
    sums a part exactly as the whole sum does) and added up in numpy's order, so the deviations are
    made in a small scratch per thread that stays in the cache, not in an array as large as ``a``, and
    the parts run on every usable core. Any other float64 layout: the same steps on a whole scratch
    of ``a``'s layout (as ``a - mean`` has: the sum runs in the same order); other dtypes: np.std.
    """
    out: list[float | None] = [None] * len(arrays)
    blocked = [j for j, a in enumerate(arrays) if a.dtype == np.float64 and a.size and a.flags.c_contiguous]
    scratch = None
    for j, a in enumerate(arrays):
        if j in blocked:
            continue
        if a.dtype != np.float64 or not a.size:
            out[j] = float(a.std())
            continue
        if scratch is None or scratch.shape != a.shape or not (a.flags.c_contiguous and scratch.flags.c_contiguous):
            scratch = np.empty_like(a)
        count = np.intp(a.size)
        mean = np.true_divide(np.add.reduce(a, axis=None, keepdims=True), count, casting="unsafe")
        np.square(np.subtract(a, mean, out=scratch), out=scratch)
        out[j] = float(np.sqrt(np.add.reduce(scratch, axis=None) / count))
    if blocked:
        flats = {j: arrays[j].reshape(-1) for j in blocked}
        parts = {j: _pairwise_blocks(flats[j].size, SPREAD_BLOCK) for j in blocked}
        order = [(j, lo, m) for j in blocked for lo, m in parts[j]]
        entries = sum(flats[j].size for j in blocked)
        sums = _in_chunks([lambda j=j, lo=lo, m=m: np.add.reduce(flats[j][lo:lo + m]) for j, lo, m in order], entries)
        means = {}
        for j in blocked:
            total = _pairwise_total([s for (o, _, _), s in zip(order, sums) if o == j], flats[j].size, SPREAD_BLOCK)
            means[j] = np.true_divide(total, np.intp(flats[j].size))

        def squares(own: np.ndarray, j: int, lo: int, m: int) -> np.float64:
            d = np.subtract(flats[j][lo:lo + m], means[j], out=own[:m])
            return np.add.reduce(np.square(d, out=d))

        deviations = _in_chunks([lambda own, j=j, lo=lo, m=m: squares(own, j, lo, m) for j, lo, m in order],
                                entries, lambda: np.empty(max(SPREAD_BLOCK, 128)))
        for j in blocked:
            size = flats[j].size
            total = _pairwise_total([s for (o, _, _), s in zip(order, deviations) if o == j], size, SPREAD_BLOCK)
            out[j] = float(np.sqrt(total / np.intp(size)))
    return tuple(out)
