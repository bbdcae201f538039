"""The Benchmark view's sweep: what is timed at which shapes, the timing loop, and its result (no Qt).

A :class:`Plan` (from the view's parameters) lists the shapes: the N sweep
(row lengths N from ``n_min`` to ``n_max``, every power of two between and
the two ends, each with ``rows`` rows) and the rows sweep (1 to 4096 rows of
:data:`ROWS_N`), each shape held to at most ``max_elements`` elements
(fewer rows at a large N), so a sweep fits in memory and in seconds.
:func:`run_steps` is the view's background job: every implementation is
called ``warmup`` times, then timed ``repeats`` times on the very same
input, and the median kept; it yields ``(fraction, partial result)`` after
each measurement, so the curves grow while it runs, and stops there when
cancelled.

Throughput is ``2 * rows * N * itemsize / seconds`` (the input read once,
the output written once: what an ideal softmax moves) in GB/s (1e9 bytes);
the copy of the same bytes, timed the same way, is the ceiling.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field

import numpy as np

from gui.model.benchmark import backends
from gui.model.benchmark.backends import ALL, Implementation, Reason

N_LIMITS = (128, 1 << 20)
ROWS_LIMITS = (1, 4096)
#: Elements per shape at most (16 MiB of float32), and in a quick sweep.
MAX_ELEMENTS = 1 << 22
QUICK_ELEMENTS = 1 << 18
#: A quick sweep: every 4th power of two, a few row counts, one timed call after one untimed.
QUICK_STRIDE = 4
QUICK_REPEATS = 1
WARMUP = 1
#: The rows sweep: its row length and row counts.
ROWS_N = 1024
ROWS_GRID = (1, 4, 16, 64, 256, 1024, 4096)
QUICK_ROWS_GRID = (1, 64, 4096)
#: The fused attention against the reference path (GPU only): sequence lengths, heads, head size.
ATTENTION_N = (256, 512, 1024, 2048, 4096)
QUICK_ATTENTION_N = (512, 2048)
ATTENTION_HEADS = 8
ATTENTION_D = 64
SEED = 0


def n_grid(lo: int, hi: int, stride: int = 1) -> tuple[int, ...]:
    """The row lengths from ``lo`` to ``hi`` (either order): the two ends and every ``stride``-th power
    of two between them."""
    lo, hi = sorted((int(lo), int(hi)))
    first = (lo - 1).bit_length()  # the smallest k with 2**k >= lo
    last = hi.bit_length() - 1  # the largest k with 2**k <= hi
    return tuple(sorted({lo, hi} | {1 << k for k in range(first, last + 1, stride)}))


def rows_for(n: int, rows: int, max_elements: int) -> int:
    """The rows a shape of row length ``n`` gets: ``rows``, fewer where ``rows * n`` would pass the cap."""
    return max(1, min(int(rows), int(max_elements) // int(n)))


@dataclass(frozen=True)
class Plan:
    """Every shape of one sweep and how each is timed (a pure function of the parameters)."""

    dtype: str
    rows: int  # the rows asked for (the N sweep's shapes may have fewer: see max_elements)
    n_points: tuple[int, ...]
    n_rows: tuple[int, ...]
    rows_n: int
    rows_points: tuple[int, ...]
    repeats: int
    warmup: int
    max_elements: int
    quick: bool
    attention_n: tuple[int, ...]

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize

    @property
    def n_bytes(self) -> np.ndarray:
        """The bytes one softmax moves at each shape of the N sweep: 2 * rows * N * itemsize."""
        return 2.0 * np.asarray(self.n_rows, float) * np.asarray(self.n_points, float) * self.itemsize

    @property
    def rows_bytes(self) -> np.ndarray:
        return 2.0 * np.asarray(self.rows_points, float) * self.rows_n * self.itemsize


def make_plan(*, dtype: str, rows: int, n_min: int, n_max: int, repeats: int, quick: bool) -> Plan:
    cap = QUICK_ELEMENTS if quick else MAX_ELEMENTS
    ns = n_grid(n_min, n_max, QUICK_STRIDE if quick else 1)
    rows_n = min(max(ROWS_N, min(n_min, n_max)), max(n_min, n_max))
    rows_points = tuple(dict.fromkeys(rows_for(rows_n, r, cap) for r in (QUICK_ROWS_GRID if quick else ROWS_GRID)))
    return Plan(dtype=dtype, rows=int(rows), n_points=ns, n_rows=tuple(rows_for(n, rows, cap) for n in ns),
                rows_n=rows_n, rows_points=rows_points, repeats=QUICK_REPEATS if quick else int(repeats),
                warmup=WARMUP, max_elements=cap, quick=quick,
                attention_n=QUICK_ATTENTION_N if quick else ATTENTION_N)


# -- the result --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sweep:
    """One axis of a run: its shapes and each implementation's median seconds (NaN: not measured)."""

    n: np.ndarray  # row length of each shape
    rows: np.ndarray  # rows of each shape
    itemsize: int
    seconds: dict[str, np.ndarray]

    @property
    def bytes(self) -> np.ndarray:
        return 2.0 * self.rows.astype(float) * self.n.astype(float) * self.itemsize

    def gbps(self, name: str) -> np.ndarray:
        """GB/s of ``name`` at each shape: 2 * bytes / seconds, in 1e9 bytes per second (NaN unmeasured)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.bytes / self.seconds[name] / 1e9

    def measured(self, name: str) -> bool:
        return bool(np.isfinite(self.seconds[name]).any())

    def copy(self) -> Sweep:
        return Sweep(self.n, self.rows, self.itemsize, {k: v.copy() for k, v in self.seconds.items()})


@dataclass(frozen=True)
class BenchResult:
    """A run, finished or partial: its plan, what it timed, and what could not run and why."""

    plan: Plan
    names: tuple[str, ...]  # the implementations this run times
    by_n: Sweep
    by_rows: Sweep
    attention: dict[str, np.ndarray] | None  # median seconds at plan.attention_n, or None (no GPU)
    reasons: dict[str, Reason | None]  # availability when the run started
    failed: dict[str, str] = field(default_factory=dict)  # failed during the run: the one-line error
    done: int = 0
    total: int = 0
    elapsed: float = 0.0
    finished: bool = False

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


def _empty_sweep(n: Sequence[int], rows: Sequence[int], itemsize: int, names: Sequence[str]) -> Sweep:
    n_arr, rows_arr = np.asarray(n, dtype=np.int64), np.asarray(rows, dtype=np.int64)
    return Sweep(n_arr, rows_arr, itemsize, {name: np.full(len(n_arr), np.nan) for name in ALL
                                             if name in names})


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def median_seconds(call: Callable[[], object], measure: backends.Measure, repeats: int, warmup: int) -> float:
    """``call`` run ``warmup`` times untimed, then ``repeats`` times by ``measure``: the median."""
    for _ in range(warmup):
        call()
    return float(statistics.median(measure(call) for _ in range(repeats)))


def run_steps(plan: Plan, *, implementations: list[Implementation] | None = None,
              reasons: dict[str, Reason | None] | None = None, attention=None,
              clock: Callable[[], float] = time.perf_counter,
              ) -> Generator[tuple[float, BenchResult], None, BenchResult]:
    """Time every implementation at every shape of ``plan`` (a job: yields ``(fraction, partial)``).

    By default the implementations are those :func:`backends.probe` finds
    (imported here, in the caller's thread) and the host ones are timed by
    ``clock``; tests pass their own ``implementations``, ``reasons`` and
    ``attention`` (``(cupy-like module, {"fused": f, "reference": f}, measure)``).
    """
    started = time.perf_counter()
    if reasons is None:
        reasons = backends.probe()
    failed: dict[str, str] = {}
    if implementations is None:
        wanted = tuple(name for name in ALL if reasons.get(name) is None)
        implementations, failed = backends.implementations(wanted, clock)
        if attention is None and backends.device_possible(reasons) and "cupy" not in failed:
            try:
                attention = backends.attention_implementations()
            except Exception as exc:  # noqa: BLE001 - the softmax lines still run
                failed["attention"] = _one_line(exc)
    loaded = {i.name for i in implementations} | set(failed)
    names = tuple(name for name in ALL if name in loaded)
    by_n = _empty_sweep(plan.n_points, plan.n_rows, plan.itemsize, names)
    by_rows = _empty_sweep([plan.rows_n] * len(plan.rows_points), plan.rows_points, plan.itemsize, names)
    att = {k: np.full(len(plan.attention_n), np.nan) for k in backends.ATTENTION} if attention else None
    total = (len(plan.n_points) + len(plan.rows_points)) * len(implementations)
    total += 2 * len(plan.attention_n) if attention else 0
    done = 0

    def snapshot(finished: bool = False) -> BenchResult:
        return BenchResult(plan, names, by_n.copy(), by_rows.copy(),
                           None if att is None else {k: v.copy() for k, v in att.items()},
                           dict(reasons), dict(failed), done, total, time.perf_counter() - started, finished)

    yield 0.0, snapshot()
    largest = max([r * n for r, n in zip(plan.n_rows, plan.n_points)] + [r * plan.rows_n for r in plan.rows_points])
    rng = np.random.default_rng(SEED)
    base = (rng.standard_normal(largest, dtype=np.float32) * 3).astype(plan.dtype)
    for sweep in (by_n, by_rows):
        for i, (n, r) in enumerate(zip(sweep.n.tolist(), sweep.rows.tolist())):
            x = base[:r * n].reshape(r, n)
            shared: dict = {}
            for impl in implementations:
                if impl.name not in failed:
                    try:
                        sweep.seconds[impl.name][i] = median_seconds(impl.prepare(x, shared), impl.measure,
                                                                     plan.repeats, plan.warmup)
                    except Exception as exc:  # noqa: BLE001 - one failing implementation never loses the others
                        failed[impl.name] = _one_line(exc)
                done += 1
                yield done / total, snapshot()
            shared.clear()  # the device copy goes before the next shape's
    if attention:
        cupy, calls, measure = attention
        for i, n in enumerate(plan.attention_n):
            q, k, v = (cupy.asarray(rng.standard_normal((ATTENTION_HEADS, n, ATTENTION_D)).astype(plan.dtype))
                       for _ in range(3))
            for name in backends.ATTENTION:
                key = f"attention_{name}"
                if key not in failed:
                    try:
                        att[name][i] = median_seconds(functools.partial(calls[name], q, k, v), measure, plan.repeats,
                                                      plan.warmup)
                    except Exception as exc:  # noqa: BLE001
                        failed[key] = _one_line(exc)
                done += 1
                yield done / total, snapshot()
            del q, k, v
    if attention or any(i.name in backends.DEVICE for i in implementations):
        backends.free_device_memory()
    return snapshot(finished=True)


def attention_bytes(n: np.ndarray, itemsize: int) -> np.ndarray:
    """What the fused attention must move at least: q, k, v read and the output written."""
    return 4.0 * ATTENTION_HEADS * np.asarray(n, float) * ATTENTION_D * itemsize

