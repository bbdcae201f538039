"""The Attention view's results: the core (every head) for a snapshot of the inputs, and the d_k sweep.

Both are pure functions of immutable snapshots (:class:`CoreInputs`,
:class:`SweepInputs`), so they run in a worker thread as they run here; the
model caches what they return (see :mod:`gui.model.attention.model`).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import compute
from compute._pool import max_threads, run_chunks
from gui.model.attention.sources import (
    LoadedArrays,
    TableArrays,
    default_tables,
    distinct_labels,
    random_qkv,
    sentence_qkv,
    tokens_of,
)
from gui.model.texts import tr

#: At most this many score entries go into the histogram (a strided sample beyond).
HIST_SAMPLE = 1_000_000
HIST_BINS = 60
#: The key dimensions of the d_k sweep (4 to 1024, log-spaced).
SWEEP_DK = np.unique(np.round(np.geomspace(4, 1024, 17)).astype(int))
SWEEP_COLUMNS = ("d_k", "entropy_scaled", "entropy_unscaled", "max_weight_scaled", "max_weight_unscaled",
                 "std_qk", "sqrt_dk")


@dataclass(frozen=True, eq=False)
class CoreInputs:
    """An immutable snapshot of everything the core depends on (see AttentionModel.snapshot)."""

    source: str
    n: int
    d_k: int
    heads: int
    seed: int
    scaling: str
    temperature: float
    causal: str
    padding: int
    sentence: str
    loaded: LoadedArrays | None
    file_path: str = ""
    tables: TableArrays | None = None
    #: the model source: the real model's attention shown (an llm.AttentionResult), and the layer (1-based)
    llm: Any = None
    layer: int = 1

    @property
    def real(self) -> bool:
        """Whether the core is a real model's layer (the model source, with a result to show)."""
        return self.source == "model" and self.llm is not None

    @property
    def key(self) -> tuple:
        """Equal keys mean equal cores (a loaded file, the tables and a model's result by identity)."""
        return (self.source, self.n, self.d_k, self.heads, self.seed, self.scaling, self.temperature,
                self.causal, self.padding, self.sentence if self.source == "sentence" else None,
                id(self.loaded) if self.source == "file" else None,
                id(self.tables) if self.source == "tables" else None,
                (id(self.llm), self.layer) if self.real else None)

    def table_arrays(self) -> TableArrays:
        return self.tables if self.tables is not None else default_tables(None, None, None, self.d_k, self.seed)

    def shape(self) -> tuple[int, int, int, int, int]:
        """(heads, n_q, n_k, d_k, d_v)."""
        if self.real:
            a = self.llm
            d = int(a.q.shape[-1]) if a.q is not None else 0
            return a.n_heads, a.n_tokens, a.n_tokens, d, d
        if self.source == "file" and self.loaded is not None:
            h, n_q, d = self.loaded.q.shape
            return h, n_q, self.loaded.k.shape[1], d, self.loaded.v.shape[2]
        if self.source == "tables":
            t = self.table_arrays()
            return 1, t.q.shape[0], t.k.shape[0], t.q.shape[1], t.v.shape[1]
        n = len(tokens_of(self.sentence)) if self.source == "sentence" else self.n
        return self.heads, n, n, self.d_k, self.d_k

    def work(self) -> int:
        """About how many multiply-adds the core takes (both matrix products)."""
        h, n_q, n_k, d, d_v = self.shape()
        return h * n_q * n_k * (d + d_v)

    def scale_factor(self) -> float | None:
        """What compute.attention gets as ``scale`` (None: its own 1/sqrt(d_k))."""
        if self.scaling == "sqrt_dk":
            return None
        if self.scaling == "none":
            return 1.0
        return 1.0 / self.temperature


class HeadParts:
    """The weights and the output of every head, each head computed when first asked for.

    ``compute_head(h)`` returns head ``h``'s ``(weights, output)``; the core
    of a slider step computes the head shown (in the worker, for large
    inputs) and no other until one is shown, the grid of every head is shown
    or the whole arrays are exported (:attr:`weights`, :attr:`output`).
    :meth:`given` holds arrays computed whole (the model source's).
    Thread-safe: the worker computes the shown head, the view's thread the rest.
    """

    def __init__(self, heads: int, compute_head: Callable[[int], tuple[np.ndarray, np.ndarray]]):
        self._heads = heads
        self._compute = compute_head
        self._each: list[tuple[np.ndarray, np.ndarray] | None] = [None] * heads
        self._whole: tuple[np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()

    @classmethod
    def given(cls, weights: np.ndarray, output: np.ndarray) -> HeadParts:
        parts = cls(weights.shape[0], lambda h: (weights[h], output[h]))
        parts._whole = (weights, output)
        return parts

    def computed(self, h: int) -> bool:
        """Whether head ``h`` is computed already."""
        return self._whole is not None or self._each[h] is not None

    def head(self, h: int) -> tuple[np.ndarray, np.ndarray]:
        """Head ``h``'s (weights (n_q, n_k), output (n_q, d_v)), computed the first time."""
        if self._whole is not None:
            return self._whole[0][h], self._whole[1][h]
        with self._lock:
            got = self._each[h]
            if got is None:
                got = self._each[h] = self._compute(h)
            return got

    def whole(self) -> tuple[np.ndarray, np.ndarray]:
        """Every head's weights (H, n_q, n_k) and output (H, n_q, d_v)."""
        if self._whole is None:
            each = [self.head(h) for h in range(self._heads)]
            with self._lock:
                if self._whole is None:
                    self._whole = (np.stack([w for w, _ in each]), np.stack([o for _, o in each]))
                    self._each = [None] * self._heads  # the stacked arrays serve every head now
        return self._whole


@dataclass(frozen=True, eq=False)
class AttentionCore:
    """The expensive part, for all heads (cached on the inputs); each head's weights and
    output are computed when first needed (:class:`HeadParts`)."""

    q_labels: tuple[str, ...]
    k_labels: tuple[str, ...]
    q: np.ndarray  # (H, n_q, d)
    k: np.ndarray  # (H, n_k, d)
    v: np.ndarray  # (H, n_k, d_v)
    scale: float  # the factor the scores were multiplied by
    raw: np.ndarray  # (H, n_q, n_k) Q Kᵀ
    scores: np.ndarray  # (H, n_q, n_k) Q Kᵀ · scale
    parts: HeadParts  # the weights (H, n_q, n_k) and the output (H, n_q, d_v), head by head
    allowed: np.ndarray  # (H, n_q, n_k) bool
    empty_rows: np.ndarray  # (H, n_q) bool: rows with no allowed key
    memory: int
    hist_edges: np.ndarray
    hist_raw: np.ndarray
    hist_scaled: np.ndarray
    std_raw: float
    std_scaled: float
    note: str
    #: the model source: the layer shown (0-based) and the whole llm.AttentionResult (None otherwise)
    layer: int = 0
    real: Any = None

    @property
    def weights(self) -> np.ndarray:
        """Every head's weights (H, n_q, n_k): computes the heads not yet computed."""
        return self.parts.whole()[0]

    @property
    def output(self) -> np.ndarray:
        """Every head's output (H, n_q, d_v): computes the heads not yet computed."""
        return self.parts.whole()[1]

    def head_weights(self, h: int) -> np.ndarray:
        """Head ``h``'s weights (n_q, n_k), without computing the other heads."""
        return self.parts.head(h)[0]

    def head_output(self, h: int) -> np.ndarray:
        """Head ``h``'s output (n_q, d_v), without computing the other heads."""
        return self.parts.head(h)[1]

    @property
    def heads(self) -> int:
        return self.raw.shape[0]

    @property
    def n_q(self) -> int:
        return self.raw.shape[1]

    @property
    def n_k(self) -> int:
        return self.raw.shape[2]


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """One head and one query row of a core: what the view draws."""

    core: AttentionCore
    head: int  # 0-based (head 1 when all heads are shown)
    query: int  # 0-based
    steps: compute.SoftmaxSteps  # the selected query row of the selected head
    all_heads: bool = False  # ``head`` 0: every head is shown in a grid
    scaling: str = "sqrt_dk"  # how the scale was chosen (the model's ``scaling``)

    @property
    def row(self) -> np.ndarray:
        return self.core.head_weights(self.head)[self.query]

    @property
    def masked_row_indices(self) -> list[int]:
        """0-based query rows of the shown head that have no key to attend to."""
        return [int(i) for i in np.flatnonzero(self.core.empty_rows[self.head])]

    def table(self) -> np.ndarray:
        """The step table of the selected row, in calculator.STEP_COLUMNS order."""
        s = self.steps
        with np.errstate(over="ignore"):
            raw = np.exp(s.scaled)
        return np.column_stack([s.scores, s.scaled, raw, s.shifted, s.exps, s.probs, s.log_probs])


@functools.lru_cache(maxsize=16)
def number_labels(n: int) -> tuple[str, ...]:
    """The labels "1" to "n" (one tuple per n, made once: a d_k step does not make 512 strings again)."""
    return tuple(str(i + 1) for i in range(n))


def _inputs(inp: CoreInputs):
    """q, k, v (heads first), the file's mask, the labels and a note for ``inp``'s source."""
    if inp.source == "file" and inp.loaded is not None:
        a = inp.loaded
        labels = (number_labels(a.q.shape[1]), number_labels(a.k.shape[1]))
        return a.q, a.k, a.v, a.mask, labels, ""
    if inp.source == "tables":
        t = inp.table_arrays()
        labels = number_labels(t.q.shape[0])
        return t.q[None], t.k[None], t.v[None], None, (labels, labels), ""
    if inp.source == "sentence":
        tokens = tokens_of(inp.sentence)
        labels = distinct_labels(tokens)
        return (*sentence_qkv(tokens, inp.d_k, inp.heads, inp.seed), None, (labels, labels), "")
    note = {"file": tr("attention.note.no_file"), "model": tr("models.attention.note.no_model")}.get(inp.source, "")
    labels = number_labels(inp.n)
    return (*random_qkv(inp.n, inp.d_k, inp.heads, inp.seed), None, (labels, labels), note)


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


def compute_core(inp: CoreInputs, *, head: int | None = None) -> AttentionCore:
    """The core for ``inp``: a pure function of the snapshot (no model, no Qt; thread-safe).

    ``head`` (0-based): that head's weights and output are computed too (the
    view's worker passes the head shown, so the view's thread does not).

    One ``compute.attention_parts(..., weights=False)`` call gives every
    head's raw and scaled score matrices (``compute.attention_scores``'
    bits); each head's weights and output are ``attention_parts`` of that
    head's slices, computed when first needed (:class:`HeadParts`), which
    are ``compute.attention``'s bit for bit.
    """
    if inp.real:
        from gui.model.attention.real import model_core

        return model_core(inp)
    q, k, v, file_mask, (q_labels, k_labels), note = _inputs(inp)
    h, n_q, n_k = q.shape[0], q.shape[1], k.shape[1]
    m = min(inp.padding, n_k)
    mask = compute.padding_mask(n_k, m) if m else None
    if file_mask is not None:
        mask = file_mask if mask is None else (file_mask & mask)
    causal = inp.causal == "on"
    scale = inp.scale_factor()
    factor = 1.0 / math.sqrt(q.shape[2]) if scale is None else compute.check_temperature(scale)
    raw, scores, _, _ = compute.attention_parts(q, k, v, scale=scale, causal=causal, mask=mask, weights=False)
    head_mask = mask is not None and mask.ndim == 3  # a file's mask per head

    def compute_head(i: int) -> tuple[np.ndarray, np.ndarray]:
        """Head i's weights and output: attention_parts of head i's slices (with its slice of the
        product, not computed again), the full call's bits."""
        one = slice(i, i + 1)
        parts = compute.attention_parts(q[one], k[one], v[one], scale=scale, causal=causal,
                                        mask=mask[one] if head_mask else mask, raw=raw[one])
        return parts.weights[0], parts.output[0]

    allowed = np.ones((n_q, n_k), dtype=bool)
    if causal:
        allowed = allowed & compute.causal_mask(n_q, n_k)
    if mask is not None:
        allowed = allowed & mask
    allowed = np.broadcast_to(allowed, (h, n_q, n_k))
    empty = np.broadcast_to(np.asarray(compute.masked_rows(causal, mask, n_q, n_k)), (h, n_q))
    parts = HeadParts(h, compute_head)
    if head is not None:
        parts.head(min(max(head, 0), h - 1))
    sample_raw = raw.reshape(-1)[:: max(1, raw.size // HIST_SAMPLE)]
    sample_scaled = scores.reshape(-1)[:: max(1, scores.size // HIST_SAMPLE)]
    edges, counts_raw, counts_scaled = sample_histograms(sample_raw, sample_scaled)
    std_raw, std_scaled = spreads(raw, scores)
    return AttentionCore(
        q_labels=q_labels, k_labels=k_labels, q=q, k=k, v=v, scale=float(factor), raw=raw,
        scores=scores, parts=parts, allowed=allowed, empty_rows=empty,
        memory=int(compute.attention_memory(n_q, n_k, q.shape[2], v.shape[2], heads=h)),
        hist_edges=edges,
        hist_raw=counts_raw / sample_raw.size,
        hist_scaled=counts_scaled / sample_scaled.size,
        std_raw=std_raw, std_scaled=std_scaled, note=note,
    )


# -- the d_k sweep ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepInputs:
    """What the d_k sweep depends on: the number of keys shown and the seed."""

    n: int
    seed: int


def sweep_steps(inputs: SweepInputs):
    """The d_k sweep as a job: yields the fraction done after each d_k, returns compute.dk_sweep's dict."""
    steps = compute.dk_sweep_steps(inputs.n, SWEEP_DK, seed=inputs.seed, heads=1)
    while True:
        try:
            done, total = next(steps)
        except StopIteration as stop:
            return stop.value
        yield done / total


def sweep_table(sweep: dict) -> np.ndarray:
    """The sweep's columns (SWEEP_COLUMNS) side by side."""
    return np.column_stack([np.asarray(sweep[k], dtype=float) for k in SWEEP_COLUMNS])
