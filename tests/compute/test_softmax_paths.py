"""compute.softmax / log_softmax / logsumexp's fast NumPy paths against the old single-thread loop.

The NumPy paths cut the rows into blocks (small blocks when the array is
split over threads, whole rows of the vocabulary as one block each) and run
the blocks on compute._pool's threads.  None of that may change a bit: each
result is compared, by its raw bits (signed zeros and NaNs included), with
``_old_*`` below, a copy of the single-thread block loop the package had
before (blocks of 512 KiB, ``np.max`` for the row maximum, one thread), for
every dtype, axis, layout, temperature and special value (``±inf``, NaN, the
overflowing shift, the extreme temperatures).  The thresholds are patched
small so that small arrays cross every path; a few arrays of the real sizes
check the real thresholds.  No test here times anything.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute import _pool, log_softmax, logsumexp, softmax
from compute import _softmax as impl
from compute._rows import _divide_into, _halves, _overflow_floor
from compute._softmax import _lse_finish, _max_and_rest

REPO_ROOT = Path(__file__).resolve().parents[2]
DTYPES = [np.float16, np.float32, np.float64]
TEMPERATURES = [1.0, 0.37, 2.5, 1e-50, 1e50, 1e-300, 1e300, 3.0e38]


# --------------------------------------------------------------------------
# the reference: the single-thread loop as it was (compute/_softmax.py and
# _rows._shift_into before the thread pool), written out here
# --------------------------------------------------------------------------
_OLD_BLOCK_BYTES = 1 << 19


def _old_shift_into(a, out, t):
    m = np.max(a, axis=-1, keepdims=True)
    mend = None
    if t > 1.0 and m.size and not m.max() < _overflow_floor(a.dtype):
        risky = ((m >= _overflow_floor(a.dtype)) & (m < np.inf))[..., 0]
        if risky.any():
            src = a[risky]
            mend = risky, src, _halves(src, m[risky], t)
    finite = np.isfinite(m)
    if finite.all():
        np.subtract(a, m, out=out)
        _divide_into(out, t)
    else:
        pos_rows = (m == np.inf)[..., 0]
        nan_rows = np.isnan(m)[..., 0]
        limit = np.where(a[pos_rows] == np.inf, 0.0, -np.inf) if pos_rows.any() else None
        np.subtract(a, np.where(finite, m, 0), out=out)
        _divide_into(out, t)
        if limit is not None:
            out[pos_rows] = limit
        if nan_rows.any():
            out[nan_rows] = np.nan
    if mend is not None:
        risky, src, halves = mend
        got = out[risky]
        out[risky] = np.where(np.isneginf(got) & np.isfinite(src), halves, got)


def _old_block_rows(rows):
    return max(1, _OLD_BLOCK_BYTES // max(1, rows.shape[-1] * rows.dtype.itemsize))


def _old_softmax_rows(rows, out, t):
    step = _old_block_rows(rows)
    for i in range(0, rows.shape[0], step):
        w = out[i : i + step]
        _old_shift_into(rows[i : i + step], w, t)
        np.exp(w, out=w)
        np.divide(w, w.sum(axis=-1, keepdims=True), out=w)


def _old_log_softmax_rows(rows, out, t):
    step = _old_block_rows(rows)
    scratch = np.empty((min(step, rows.shape[0]), rows.shape[1]), dtype=rows.dtype)
    for i in range(0, rows.shape[0], step):
        w = out[i : i + step]
        _old_shift_into(rows[i : i + step], w, t)
        e = np.exp(w, out=scratch[: w.shape[0]])
        total = e.sum(axis=-1, keepdims=True)
        np.subtract(w, np.log(total, out=total), out=w)


def _working(x):
    x = np.asarray(x)
    return x.astype(np.float32 if x.dtype == np.float16 else x.dtype)


def _old(op, x, axis=-1, t=1.0):
    """The old single-thread result of ``op`` ("softmax", "log_softmax", "logsumexp")."""
    x = np.asarray(x)
    a = _working(x)
    if a.ndim == 0:
        a = a.reshape(1)
    ax = axis % a.ndim
    with np.errstate(all="ignore"):
        if op == "logsumexp":  # the unblocked path (the blocked one gave its bits)
            return np.squeeze(_lse_finish(*_max_and_rest(a, ax)), axis=ax).astype(x.dtype)
        moved = np.ascontiguousarray(np.moveaxis(a, ax, -1))
        rows = moved.reshape(-1, moved.shape[-1])
        out = np.empty_like(rows)
        {"softmax": _old_softmax_rows, "log_softmax": _old_log_softmax_rows}[op](rows, out, t)
        back = np.moveaxis(out.reshape(moved.shape), -1, ax).astype(x.dtype)
        return np.ascontiguousarray(back).reshape(x.shape)


def _new(op, x, axis=-1, t=1.0):
    if op == "logsumexp":
        return logsumexp(x, axis=axis)
    return {"softmax": softmax, "log_softmax": log_softmax}[op](x, axis=axis, temperature=t)


def _assert_same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    g = np.ascontiguousarray(got).view(uint)
    w = np.ascontiguousarray(want).view(uint)
    if not np.array_equal(g, w):
        bad = np.flatnonzero(g.reshape(-1) != w.reshape(-1))
        raise AssertionError(
            f"{bad.size} of {g.size} entries differ, first at flat index {bad[0]}: "
            f"{got.reshape(-1)[bad[0]]!r} != {want.reshape(-1)[bad[0]]!r}"
        )


def _check_all(x, axis, t):
    for op in ("softmax", "log_softmax", "logsumexp"):
        _assert_same_bits(_new(op, x, axis, t), _old(op, x, axis, t))


@contextlib.contextmanager
def _small_thresholds(split=256, block=512, min_block=64, per_thread=2, threads=3):
    """Thresholds of a few hundred bytes and ``threads`` threads (more than the cores
    allow, so that the split is exercised on a one-core machine too)."""
    with mock.patch.multiple(impl, _SPLIT_BYTES=split, _BLOCK_BYTES=block,
                             _MIN_BLOCK_BYTES=min_block, _BLOCKS_PER_THREAD=per_thread), \
            mock.patch.object(impl, "max_threads", lambda: threads):
        yield


# --------------------------------------------------------------------------
# inputs: random scores with special values planted in them
# --------------------------------------------------------------------------
def _specials(dtype):
    """Entries that exercise compute's special-value rules in ``dtype``'s working precision."""
    fi = np.finfo(dtype)
    big = float(fi.max)
    return [np.inf, -np.inf, np.nan, big, -big, big / 3, -big / 3, 0.0, -0.0,
            float(fi.tiny), float(fi.smallest_subnormal), -float(fi.eps)]


@st.composite
def _cases(draw, max_rows=40, max_cols=40):
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, max_rows if i < ndim - 1 else max_cols)) for i in range(ndim))
    axis = draw(st.integers(-ndim, ndim - 1))
    t = draw(st.sampled_from(TEMPERATURES) | st.floats(0.05, 50.0))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scale = draw(st.sampled_from([1.0, 30.0, 1e4]))
    x = (rng.standard_normal(shape) * scale).astype(dtype)
    flat = x.reshape(-1)
    specials = _specials(dtype)
    for _ in range(draw(st.integers(0, 6))):
        flat[draw(st.integers(0, flat.size - 1))] = specials[draw(st.integers(0, len(specials) - 1))]
    if ndim >= 2 and draw(st.booleans()):  # whole special rows along the axis
        moved = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])
        r = draw(st.integers(0, moved.shape[0] - 1))
        kind = draw(st.sampled_from(["-inf", "+inf pair", "nan", "huge pair", "zeros"]))
        row = moved[r].copy()
        if kind == "-inf":
            row[:] = -np.inf
        elif kind == "+inf pair":
            row[:: max(1, row.size // 2)] = np.inf
        elif kind == "nan":
            row[-1] = np.nan
        elif kind == "huge pair":  # the overflowing shift for T > 1
            row[0], row[-1] = specials[3], specials[4]
        else:
            row[:] = 0.0
            row[::2] = -0.0
        moved[r] = row
        x = np.moveaxis(moved.reshape(np.moveaxis(x, axis, -1).shape), -1, axis).copy()
    layout = draw(st.sampled_from(["c", "f", "strided"]))
    if layout == "f":
        x = np.asfortranarray(x)
    elif layout == "strided":
        x = np.repeat(x, 2, axis=-1)[..., ::2]  # same values, not contiguous
    return x, axis, t


# --------------------------------------------------------------------------
# every path, small thresholds
# --------------------------------------------------------------------------
@settings(max_examples=120, deadline=None)
@given(_cases())
def test_split_blocks_match_the_old_loop_bit_for_bit(case):
    x, axis, t = case
    with _small_thresholds():
        _check_all(x, axis, t)


@settings(max_examples=40, deadline=None)
@given(_cases(max_rows=6, max_cols=200), st.sampled_from([(64, 2), (512, 1), (1 << 20, 4)]))
def test_long_rows_one_block_each_match_the_old_loop(case, blocks):
    """Rows longer than a block (the vocabulary path: one block per row) and blocks of many rows."""
    x, axis, t = case
    block, threads = blocks
    with _small_thresholds(block=block, min_block=block, threads=threads):
        _check_all(x, axis, t)


@settings(max_examples=40, deadline=None)
@given(_cases(max_rows=300, max_cols=4))
def test_short_rows_many_per_block_match_the_old_loop(case):
    """Rows of one to four entries: blocks of hundreds of rows (the attention-row path)."""
    x, axis, t = case
    with _small_thresholds(split=64, block=2048, min_block=128, threads=2):
        _check_all(x, axis, t)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_result_does_not_depend_on_the_thread_count(threads):
    rng = np.random.default_rng(threads)
    x = (rng.standard_normal((97, 13)) * 20).astype(np.float32)
    x[5, 3] = np.inf
    x[9] = -np.inf
    x[11, 0] = np.nan
    with _small_thresholds(threads=threads):
        _check_all(x, -1, 1.0)
        _check_all(x, 0, 2.5)


def test_the_small_thresholds_really_split(monkeypatch):
    """The tests above go through the pool: several blocks on several threads."""
    seen = []
    real = impl.run_chunks
    monkeypatch.setattr(impl, "run_chunks", lambda start, n, k: (seen.append((n, k)), real(start, n, k)))
    with _small_thresholds():
        softmax(np.zeros((40, 8), np.float32))
    assert seen and seen[-1][0] >= 4 and seen[-1][1] == 3


# --------------------------------------------------------------------------
# the real thresholds, on arrays of the real sizes
# --------------------------------------------------------------------------
def _planted(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 8).astype(dtype)
    r, c = shape
    x[0, c // 2] = np.inf
    x[r // 3] = -np.inf
    x[r // 2, 0] = np.nan
    x[r - 1, 0], x[r - 1, c - 1] = np.finfo(dtype).max, -np.finfo(dtype).max
    x[r - 2, :: 2] = -0.0
    return x


def _real_sizes():
    split = impl._SPLIT_BYTES
    block = impl._BLOCK_BYTES
    out = []
    for dtype in (np.float32, np.float64):
        size = np.dtype(dtype).itemsize
        for cols in (3, 128, 1000):
            for total in (split - cols * size, split + cols * size, 3 * block + 1):
                out.append(((max(4, total // (cols * size)), cols), dtype))
        out.append(((4, block // size + 17), dtype))  # rows longer than a block
    return out


@pytest.mark.parametrize(("shape", "dtype"), _real_sizes(), ids=lambda v: str(v))
@pytest.mark.parametrize("t", [1.0, 2.5])
def test_real_thresholds_match_the_old_loop(shape, dtype, t):
    x = _planted(shape, dtype, seed=shape[0] * shape[1])
    _check_all(x, -1, t)
    with _pool.threads(1):
        _check_all(x, -1, t)


def test_real_sizes_transposed_and_float16():
    x = _planted((300, 250), np.float32, seed=7)
    _check_all(x.T, 0, 1.0)
    _check_all(x.T, -1, 0.5)
    _check_all(_planted((300, 250), np.float16, seed=8), -1, 3.0)


# --------------------------------------------------------------------------
# the pool itself
# --------------------------------------------------------------------------
def test_run_chunks_runs_every_chunk_once_and_starts_once_per_thread():
    done = []
    starts = []
    lock = threading.Lock()

    def start():
        with lock:
            starts.append(threading.get_ident())
        return lambda i: done.append(i)

    _pool.run_chunks(start, 50, 2)
    assert sorted(done) == list(range(50))
    assert len(starts) == len(set(starts)) and 1 <= len(starts) <= 2
    done.clear()
    _pool.run_chunks(start, 0, 2)
    _pool.run_chunks(start, 1, 4)
    assert done == [0]


def test_run_chunks_reraises_and_stops_handing_out_chunks():
    done = []

    def start():
        def do(i):
            if i == 3:
                raise KeyError("chunk 3")
            done.append(i)
        return do

    with pytest.raises(KeyError, match="chunk 3"):
        _pool.run_chunks(start, 1000, 2)
    assert 3 not in done and len(done) < 999
    _pool.run_chunks(lambda: done.append, 5, 2)  # the pool still works afterwards


def test_pool_threads_follow_the_callers_errstate():
    zero = np.zeros(4)

    def start():
        return lambda i: np.log(zero)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="ignore"):
            _pool.run_chunks(start, 20, 2)  # no warning on any thread
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            _pool.run_chunks(start, 20, 2)


def test_thread_count_is_capped():
    assert 1 <= _pool.max_threads() <= (os.cpu_count() or 1)
    with _pool.threads(1):
        assert _pool.max_threads() == 1
        with _pool.threads(10_000):
            assert _pool.max_threads() <= (os.cpu_count() or 1)
        assert _pool.max_threads() == 1
    with pytest.raises(ValueError, match="n >= 1"), _pool.threads(0):
        pass


def _python(code):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


def test_pool_is_lazy_and_the_interpreter_exits():
    """Importing compute starts no thread; a big softmax does; exit joins it (no hang)."""
    res = _python("""
        import threading
        import numpy as np
        import compute
        from compute import _pool
        names = lambda: sorted(t.name for t in threading.enumerate() if t.name.startswith("compute-rows"))
        assert _pool._executor is None and not names(), names()
        compute.softmax(np.zeros((4, 4)))
        assert _pool._executor is None
        from compute import _softmax
        compute.softmax(np.ones((2 * _softmax._SPLIT_BYTES // 4096, 1024), np.float32))
        split = _pool.max_threads() > 1  # one core: never split, never a pool
        print("pool", (_pool._executor is not None) == split, len(names()) <= max(0, _pool._usable_cpus() - 1))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["pool", "True", "True"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_forked_child_gets_a_pool_of_its_own():
    res = _python("""
        import os, sys
        import numpy as np
        import compute
        from compute import _pool
        from compute import _softmax
        x = np.random.default_rng(0).standard_normal((2 * _softmax._SPLIT_BYTES // 4096, 1024))
        x = x.astype(np.float32)
        want = compute.softmax(x)  # creates the pool in the parent (with two cores or more)
        had = _pool._executor is not None
        pid = os.fork()
        if pid == 0:
            ok = _pool._executor is None and np.array_equal(compute.softmax(x), want)
            ok = ok and (_pool._executor is not None) == had  # its own, made on demand
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["child", "0"]


def test_bench_shapes_are_the_issue_s():
    """bench/cpu_softmax.py covers the shapes the speed issue names (in float32 and float64)."""
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    try:
        import cpu_softmax
    finally:
        sys.path.remove(str(REPO_ROOT / "bench"))
    shapes = {(r, c, d) for _, r, c, d, _ in cpu_softmax.CASES}
    for r, c in [(4096, 8192), (64, 32000), (16384, 128), (8, 200000)]:
        assert {(r, c, "float32"), (r, c, "float64")} <= shapes
