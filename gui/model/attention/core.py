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
from gui.model.attention.sources import (
    LoadedArrays,
    TableArrays,
    default_tables,
    distinct_labels,
    random_qkv,
    sentence_qkv,
    tokens_of,
)
from gui.model.attention.statistics import sample_histograms, spreads, strided_sample
from gui.model.texts import tr

#: At most about this many score entries go into the histogram (a strided sample beyond: statistics.strided_sample).
HIST_SAMPLE = 1 << 16
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
    #: False on the partial core of :func:`core_steps`: the histograms and spreads (None, NaN) and the
    #: heads but the shown one (undefined scores: not to be read) are still to come
    statistics: bool = True
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


def compute_core(inp: CoreInputs, *, head: int | None = None) -> AttentionCore:
    """The core for ``inp``: a pure function of the snapshot (no model, no Qt; thread-safe).

    ``head`` (0-based): that head's weights and output are computed too (the
    view's worker passes the head shown, so the view's thread does not).
    :func:`core_steps` run to its end.
    """
    steps = core_steps(inp, head=head)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def core_steps(inp: CoreInputs, *, head: int | None = None, partial: bool = False):
    """:func:`compute_core` as a job's steps: yields its progress (0..1) after each head's product
    and each statistic, and returns the core.

    Each head's raw and scaled scores are ``compute.attention_parts(..., weights=False)`` of that
    head's slices (the batched call's bits: each leading index is its own product); each head's
    weights and output are ``attention_parts`` of its slices with its product (:class:`HeadParts`),
    which are ``compute.attention``'s bit for bit.  ``head`` (0-based) goes first, and its weights
    and output are computed too.  With ``partial`` (and ``head``), the first step yields
    ``(fraction, core)``: a core whose ``head`` is complete, whose other heads' scores are not
    computed yet (undefined entries: only ``head`` may be read) and whose histograms and spreads
    are still to come (``statistics`` False), so a view can draw the shown head before the rest;
    the returned core shares its arrays and heads.
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
    head_mask = mask is not None and mask.ndim == 3  # a file's mask per head

    def head_scores(i: int, out: tuple[np.ndarray, np.ndarray] | None = None) -> compute.AttentionParts:
        one = slice(i, i + 1)
        return compute.attention_parts(q[one], k[one], v[one], scale=scale, causal=causal,
                                       mask=mask[one] if head_mask else mask, weights=False, out=out)

    shown = None if head is None else min(max(head, 0), h - 1)
    order = list(range(h)) if shown is None else [shown] + [i for i in range(h) if i != shown]
    first = head_scores(order[0])  # its dtype is the working one
    raw = np.empty((h, n_q, n_k), dtype=first.raw.dtype)  # filled head by head below
    scores = np.empty_like(raw)
    raw[order[0]], scores[order[0]] = first.raw[0], first.scores[0]

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
    common = dict(q_labels=q_labels, k_labels=k_labels, q=q, k=k, v=v, scale=float(factor), raw=raw,
                  scores=scores, parts=parts, allowed=allowed, empty_rows=empty, note=note,
                  memory=int(compute.attention_memory(n_q, n_k, q.shape[2], v.shape[2], heads=h)))
    if shown is not None:
        parts.head(shown)
    steps = h + 2  # each head's product, the histograms, the spreads
    for done, i in enumerate(order):
        if done:
            head_scores(i, out=(raw[i:i + 1], scores[i:i + 1]))
        fraction = (done + 1) / steps
        if not done and partial and shown is not None:
            yield fraction, AttentionCore(**common, hist_edges=None, hist_raw=None, hist_scaled=None,
                                          std_raw=math.nan, std_scaled=math.nan, statistics=False)
        else:
            yield fraction
    sample_raw, sample_scaled = strided_sample(raw, HIST_SAMPLE), strided_sample(scores, HIST_SAMPLE)
    edges, counts_raw, counts_scaled = sample_histograms(sample_raw, sample_scaled)
    yield (h + 1) / steps
    std_raw, std_scaled = spreads(raw, scores)
    return AttentionCore(**common, hist_edges=edges, hist_raw=counts_raw / sample_raw.size,
                         hist_scaled=counts_scaled / sample_scaled.size, std_raw=std_raw, std_scaled=std_scaled)


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
