"""The Online-softmax view's model: the kernels' algorithm, one step at a time.

Three modes, all driven by compute's NumPy emulation of the kernels:

* ``sequential``: the row is read in blocks of ``block_size`` scores; each step
  merges one block's (m, d) into the running (m, d)
  (:func:`compute.online_softmax_trace`);
* ``tree``: every block's (m, d) at once, then merged pairwise, level by
  level, up to one root (:func:`compute.tree_merge_trace`);
* ``attention``: FlashAttention's loop over K/V tiles for random seeded
  Q, K, V: a running max m, sum l and output accumulator per query row,
  rescaled at every tile (:func:`compute.flash_attention_trace`).

The row is the shared score row (``row = scores``) or a seeded random row of
``length`` scores (``row = random``).  ``step`` is how many steps are done:
0 is the start, the number of steps the end; larger values are clamped (the
maximum shows the finished run).  The default is 1: the view opens at its
first step, one block (or level, or tile) done, and the user steps on.

:meth:`OnlineModel.applies` says which parameters the current mode uses and
:meth:`OnlineModel.bounds` the range a control offers now: the block size at
most the row's length, the tile at most ``n``, the step ``0 .. n_steps``.
For the shared row those need its length: :meth:`OnlineModel.attach` gives
the model the row it reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from compute import (
    MEMORY_METHODS,
    FlashTrace,
    OnlineStep,
    TreeNode,
    finish_softmax,
    flash_attention_trace,
    memory_passes,
    online_softmax_trace,
    tree_merge_trace,
)
from gui.model.base import ExportArray, ViewModel, choice, param
from gui.model.scores import ScoreRow

MODES = ("sequential", "tree", "attention")
ROWS = ("scores", "random")
SWITCH = ("off", "on")
MAX_LENGTH = 4096
MAX_BLOCK = 1024
MAX_STEP = 10_000
MAX_TOKENS = 64
MAX_DIM = 64
#: The random row: seeded normal scores with this standard deviation.
RANDOM_STD = 2.0
#: The pass counter's byte counts are for float32 rows.
ITEMSIZE = 4

STEP_COLUMNS = ("block", "start", "stop", "m_before", "d_before", "m_block", "d_block", "m_after", "d_after",
                "rescale_old", "rescale_block")
TREE_COLUMNS = ("level", "index", "start", "stop", "m", "d", "left", "right", "rescale_left", "rescale_right")
RESULT_COLUMNS = ("score", "block", "online", "softmax", "abs_difference")
PASS_COLUMNS = ("passes", "reads", "writes", "bytes_float32")
ROW_SUMMARY_COLUMNS = ("temperature", "block", "length", "steps", "step", "m", "d", "max_abs_difference")
TILE_COLUMNS = ("tile", "query", "key_start", "key_stop", "m_before", "l_before", "m_tile", "m_after", "l_after",
                "rescale")
ATTENTION_SUMMARY_COLUMNS = ("n", "d_k", "tile", "causal", "scale", "steps", "step", "max_abs_difference",
                             "max_lse_difference")


def random_row(length: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, RANDOM_STD, length)


def random_qkv(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(n, d))


def max_abs_difference(a: np.ndarray, b: np.ndarray) -> float:
    """The largest |a − b| over the entries where it is a number (0 where both are the same
    infinity; NaN when no entry gives a number)."""
    with np.errstate(all="ignore"):
        diff = np.where(a == b, 0.0, np.abs(a - b))
    ok = ~np.isnan(diff)
    return float(diff[ok].max()) if ok.any() else math.nan


@dataclass(frozen=True)
class RowResult:
    """The sequential or tree run over one row, at step ``step`` of ``n_steps``."""

    mode: str
    labels: tuple[str, ...]
    values: np.ndarray
    temperature: float
    block: int
    steps: list[OnlineStep]  # sequential: one per block
    levels: list[list[TreeNode]]  # tree: leaves first, the root last
    n_steps: int
    step: int  # 0 .. n_steps
    softmax: np.ndarray  # compute.softmax(values, T)
    online: np.ndarray  # the finished online result
    partial: np.ndarray  # length n: the result so far at this step (NaN where nothing is known yet)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def done(self) -> bool:
        return self.step == self.n_steps

    @property
    def current(self) -> OnlineStep | None:
        """Sequential: the block read at this step (None at step 0)."""
        return self.steps[self.step - 1] if self.mode == "sequential" and self.step else None

    @property
    def current_level(self) -> list[TreeNode]:
        """Tree: the level computed at this step (empty at step 0)."""
        return self.levels[self.step - 1] if self.mode == "tree" and self.step else []

    @property
    def final_m(self) -> float:
        return self.steps[-1].m_after if self.mode == "sequential" else self.levels[-1][0].m

    @property
    def final_d(self) -> float:
        return self.steps[-1].d_after if self.mode == "sequential" else self.levels[-1][0].d

    @property
    def max_abs_difference(self) -> float:
        return max_abs_difference(self.online, self.softmax)

    @property
    def partial_difference(self) -> float:
        """max |partial − softmax| at this step (large until the last block is in)."""
        return max_abs_difference(self.partial, self.softmax)

    def block_of(self) -> np.ndarray:
        """The 0-based block of each score."""
        return np.arange(self.n) // self.block

    def running(self) -> tuple[np.ndarray, np.ndarray]:
        """Sequential: m and d after each step, step 0 (−inf, 0) included."""
        m = np.array([-np.inf] + [s.m_after for s in self.steps])
        d = np.array([0.0] + [s.d_after for s in self.steps])
        return m, d


@dataclass(frozen=True)
class AttentionRun:
    """The tiled attention run for random Q, K, V, at step ``step`` of ``n_steps`` tiles."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    causal: bool
    tile: int
    trace: FlashTrace
    scores: np.ndarray  # the scaled, masked n x n scores, for display only (the loop never forms them)
    reference: np.ndarray  # compute.attention's output
    lse_reference: np.ndarray  # compute.logsumexp of the scaled, masked scores
    n_steps: int
    step: int

    @property
    def n(self) -> int:
        return self.q.shape[0]

    @property
    def done(self) -> bool:
        return self.step == self.n_steps

    @property
    def current(self):
        return self.trace.steps[self.step - 1] if self.step else None

    @property
    def partial_output(self) -> np.ndarray:
        """acc / l after this step (zeros at step 0)."""
        return self.current.out_partial if self.step else np.zeros_like(self.reference)

    @property
    def max_abs_difference(self) -> float:
        return max_abs_difference(self.trace.output, self.reference)

    @property
    def max_lse_difference(self) -> float:
        return max_abs_difference(self.trace.lse, self.lse_reference)

    def running(self) -> tuple[np.ndarray, np.ndarray]:
        """m and l of every query row after each step: arrays (n_steps + 1, n)."""
        first = self.trace.steps[0]
        m = np.stack([first.m_before] + [s.m_after for s in self.trace.steps])
        l_run = np.stack([first.l_before] + [s.l_after for s in self.trace.steps])
        return m, l_run

    def accumulators(self) -> np.ndarray:
        """The raw accumulator after each step, (n_steps + 1, n, d_v)."""
        first = self.trace.steps[0]
        return np.stack([first.acc_before] + [s.acc_after for s in self.trace.steps])


def row_steps(mode: str, length: int, block: int) -> int:
    """How many steps a row run takes: one per block (sequential), one per tree level (tree).

    The same count as the traces' lengths, without computing them.
    """
    blocks = -(-length // block)
    if mode == "sequential":
        return blocks
    levels = 1
    while blocks > 1:  # pairs merged, an odd last node carried up
        blocks = -(-blocks // 2)
        levels += 1
    return levels


def _nan_if_none(v: int | None) -> float:
    return math.nan if v is None else float(v)


def passes_table(n: int) -> ExportArray:
    rows = []
    for method in MEMORY_METHODS:
        t = memory_passes(method)
        rows.append([t.passes, t.reads, t.writes, t.bytes(n, ITEMSIZE)])
    return ExportArray(np.array(rows, dtype=np.float64), PASS_COLUMNS, MEMORY_METHODS)


@evented
@dataclass
class OnlineModel(ViewModel):
    name: ClassVar[str] = "online"
    mode: str = choice("sequential", MODES)
    row: str = choice("random", ROWS)
    row_length: int = param(16, minimum=2, maximum=MAX_LENGTH, integer=True, control="spin")
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True, control="spin")
    block_size: int = param(4, minimum=1, maximum=MAX_BLOCK, integer=True)
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    step: int = param(1, minimum=0, maximum=MAX_STEP, integer=True)
    n: int = param(8, minimum=2, maximum=MAX_TOKENS, integer=True)
    d_k: int = param(4, minimum=1, maximum=MAX_DIM, integer=True)
    tile: int = param(3, minimum=1, maximum=MAX_TOKENS, integer=True)
    causal: str = choice("off", SWITCH)

    def __post_init__(self) -> None:
        self._trace_key: tuple | None = None
        self._trace: list | None = None
        self._attention_key: tuple | None = None
        self._attention: tuple | None = None
        self._scores: ScoreRow | None = None

    def attach(self, scores: ScoreRow) -> None:
        """Read ``scores`` (the shared row) for :meth:`bounds` and :meth:`n_steps` without an argument."""
        self._scores = scores

    # -- which parameters apply, and their ranges now ----------------------------------------
    @property
    def reads_scores(self) -> bool:
        """Whether the run is over the shared score row (its table is shown)."""
        return self.mode != "attention" and self.row == "scores"

    def applies(self, name: str) -> bool:
        attention = self.mode == "attention"
        if name in ("n", "d_k", "tile", "causal"):
            return attention
        if name in ("row", "block_size", "temperature"):
            return not attention
        if name == "row_length":
            return not attention and self.row == "random"
        if name == "seed":
            return attention or self.row == "random"
        return True  # mode, step

    def row_size(self) -> int | None:
        """How many scores the row holds (None for the shared row when none is attached)."""
        if self.row == "random":
            return self.row_length
        return None if self._scores is None else len(self._scores.values)

    def bounds(self, name: str) -> tuple[float, float]:
        lo, hi = super().bounds(name)
        if name == "block_size":
            size = self.row_size()
            return lo, hi if size is None else max(lo, min(hi, size))
        if name == "tile":
            return lo, max(lo, min(hi, self.n))
        if name == "step":
            return 0, self.n_steps()
        return lo, hi

    def clamped_step(self, n_steps: int) -> int:
        """``step`` within 0 .. n_steps (larger values mean the end)."""
        return min(max(self.step, 0), n_steps)

    # -- the row --------------------------------------------------------------------------
    def values(self, scores: ScoreRow) -> tuple[np.ndarray, tuple[str, ...]]:
        if self.row == "scores":
            return scores.values, scores.labels
        x = random_row(self.row_length, self.seed)
        return x, tuple(str(i + 1) for i in range(len(x)))

    def trace(self, x: np.ndarray) -> list:
        """The sequential steps or the tree levels of ``x``; cached (a step changes only the index)."""
        key = (self.mode, x.tobytes(), self.block_size, self.temperature)
        if key != self._trace_key or self._trace is None:
            run = online_softmax_trace if self.mode == "sequential" else tree_merge_trace
            self._trace = run(x, self.block_size, self.temperature)
            self._trace_key = key
        return self._trace

    def n_steps(self, scores: ScoreRow | None = None) -> int:
        """How many steps the current mode takes (the step slider's end); no trace is computed.

        ``scores`` defaults to the attached row (or, without one, the default row).
        """
        if self.mode == "attention":
            return math.ceil(self.n / self.tile)
        if scores is None:
            scores = self._scores if self._scores is not None else ScoreRow()
        length = self.row_length if self.row == "random" else len(scores.values)
        return row_steps(self.mode, length, self.block_size)

    def row_result(self, scores: ScoreRow) -> RowResult:
        x, labels = self.values(scores)
        t = self.temperature
        trace = self.trace(x)
        n_steps = len(trace)
        step = self.clamped_step(n_steps)
        partial = np.full(len(x), np.nan)
        steps: list[OnlineStep] = trace if self.mode == "sequential" else []
        levels: list[list[TreeNode]] = trace if self.mode == "tree" else []
        if steps:
            if step:
                s = steps[step - 1]
                partial[:s.stop] = s.partial
            online = steps[-1].partial
        else:
            if step:
                for node in levels[step - 1]:
                    span = x[node.start:node.stop]
                    partial[node.start:node.stop] = finish_softmax(span, node.m, node.d, t)
            root = levels[-1][0]
            online = finish_softmax(x, root.m, root.d, t)
        return RowResult(self.mode, labels, x, t, self.block_size, steps, levels, n_steps, step,
                         compute.softmax(x, temperature=t), online, partial)

    # -- attention ---------------------------------------------------------------------------
    def attention_run(self) -> AttentionRun:
        key = (self.n, self.d_k, self.seed, self.tile, self.causal)
        if key != self._attention_key or self._attention is None:
            q, k, v = random_qkv(self.n, self.d_k, self.seed)
            causal = self.causal == "on"
            trace = flash_attention_trace(q, k, v, self.tile, causal=causal)
            scores = compute.attention_scores(q, k)
            if causal:
                scores = np.where(compute.causal_mask(self.n, self.n), scores, -np.inf)
            _w, reference = compute.attention(q, k, v, causal=causal)
            self._attention = (q, k, v, causal, trace, scores, reference, compute.logsumexp(scores, axis=-1))
            self._attention_key = key
        q, k, v, causal, trace, scores, reference, lse = self._attention
        n_steps = len(trace.steps)
        return AttentionRun(q, k, v, causal, self.tile, trace, scores, reference, lse, n_steps,
                            self.clamped_step(n_steps))

    def result(self, scores: ScoreRow) -> RowResult | AttentionRun:
        return self.attention_run() if self.mode == "attention" else self.row_result(scores)

    # -- export --------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        if isinstance(r, AttentionRun):
            return self._attention_arrays(r)
        out: dict[str, ExportArray] = {}
        if r.mode == "sequential":
            out["steps"] = ExportArray(np.array([
                [s.index, s.start, s.stop, s.m_before, s.d_before, s.m_block, s.d_block, s.m_after, s.d_after,
                 s.rescale, s.rescale_block] for s in r.steps], dtype=np.float64), STEP_COLUMNS)
        else:
            out["tree"] = ExportArray(np.array([
                [node.level, node.index, node.start, node.stop, node.m, node.d, _nan_if_none(node.left),
                 _nan_if_none(node.right), node.rescale_left, node.rescale_right]
                for level in r.levels for node in level], dtype=np.float64), TREE_COLUMNS)
        with np.errstate(all="ignore"):
            diff = np.where(r.online == r.softmax, 0.0, np.abs(r.online - r.softmax))
        out["result"] = ExportArray(np.column_stack([r.values, r.block_of(), r.online, r.softmax, diff]),
                                    RESULT_COLUMNS, r.labels)
        out["passes"] = passes_table(r.n)
        out["summary"] = ExportArray(np.array([[
            r.temperature, r.block, r.n, r.n_steps, r.step, r.final_m, r.final_d, r.max_abs_difference,
        ]], dtype=np.float64), ROW_SUMMARY_COLUMNS)
        return out

    def _attention_arrays(self, r: AttentionRun) -> dict[str, ExportArray]:
        tiles = []
        for s in r.trace.steps:
            for i in range(r.n):
                tiles.append([s.index, i, s.start, s.stop, s.m_before[i], s.l_before[i], s.m_tile[i],
                              s.m_after[i], s.l_after[i], s.rescale[i]])
        rows = tuple(f"q{i + 1}" for i in range(r.n))
        cols = tuple(f"o{j + 1}" for j in range(r.v.shape[1]))
        acc = r.accumulators()
        return {
            "tiles": ExportArray(np.array(tiles, dtype=np.float64), TILE_COLUMNS),
            "output": ExportArray(r.trace.output, cols, rows),
            "reference": ExportArray(r.reference, cols, rows),
            "lse": ExportArray(np.column_stack([r.trace.lse, r.lse_reference]), ("lse", "lse_reference"), rows),
            "accumulator": ExportArray(acc[-1], cols, rows, npz_data=acc),
            "summary": ExportArray(np.array([[
                r.n, r.v.shape[1], r.tile, float(r.causal), r.trace.scale, r.n_steps, r.step,
                r.max_abs_difference, r.max_lse_difference,
            ]], dtype=np.float64), ATTENTION_SUMMARY_COLUMNS),
        }
