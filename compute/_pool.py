"""A small thread pool for independent blocks of rows (private).

NumPy releases the GIL inside its ufunc loops and reductions, so blocks of
rows that share nothing can run on several cores at once from plain Python
threads.  :func:`run_chunks` hands numbered chunks (blocks of rows) to
whichever thread is free, the calling thread being one of them, and returns
when all are done.  Every chunk is computed by the very same single-thread
code, so the result does not depend on the number of threads or on which
thread ran which chunk.

* **How many threads.**  :func:`max_threads`: the cores this process may run
  on (``os.sched_getaffinity``), never more than ``os.cpu_count()``;
  :func:`threads` lowers it for the calling thread (``threads(1)`` is the
  single-thread path).  The callers decide below which size a split is not
  worth it.
* **Busy machines.**  Chunks are taken one at a time, so a thread that
  starts late (its core busy) simply takes fewer, and one that has not
  started when the chunks run out is cancelled rather than waited for.
  More threads cannot buy more than the scheduler grants, though: where
  other processes keep every core busy (Linux shares the CPU per session),
  a split only adds its own cost.
* **Lazy, and nothing left behind.**  The pool is created on the first split
  (importing compute starts no thread) as a
  :class:`concurrent.futures.ThreadPoolExecutor`, whose workers the
  interpreter joins at exit; a worker only ever runs chunks (it waits on
  nothing else), so exit cannot hang.  A forked child drops its parent's
  pool and makes its own on demand; where no new thread can be scheduled
  (interpreter shutdown) the calling thread does all the chunks.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

__all__: list[str] = []

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_local = threading.local()


def _usable_cpus() -> int:
    total = os.cpu_count() or 1
    try:
        return max(1, min(total, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):  # pragma: no cover - no affinity API (macOS, Windows)
        return total


def max_threads() -> int:
    """The threads a split may use on the calling thread: every usable core, or :func:`threads`' cap."""
    cap = getattr(_local, "cap", None)
    cores = _usable_cpus()
    return cores if cap is None else min(cap, cores)


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Use at most ``n >= 1`` threads for the splits made on the calling thread, inside the block."""
    if int(n) < 1:
        raise ValueError(f"threads(n) needs n >= 1, got {n}")
    old = getattr(_local, "cap", None)
    _local.cap = int(n)
    try:
        yield
    finally:
        _local.cap = old


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=max(1, _usable_cpus() - 1),
                                           thread_name_prefix="compute-rows")
        return _executor


def _forget_after_fork() -> None:  # the parent's workers do not exist in a forked child
    global _executor, _lock
    _executor = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def run_chunks(start: Callable[[], Callable[[int], None]], n: int, k: int) -> None:
    """Run chunks ``0 .. n-1`` on up to ``k`` threads, the calling thread one of them.

    Each thread that gets a chunk calls ``start()`` once for its own worker
    ``do`` (a place for per-thread scratch buffers), then ``do(i)`` for every
    chunk ``i`` it takes.  Chunks are handed out in order to whichever thread
    is free, so a thread that starts late (a busy machine) takes fewer, and a
    pool thread that has not started when the chunks run out is cancelled,
    not waited for.  Every thread runs in a copy of the caller's
    :mod:`contextvars` context (so ``np.errstate`` holds on the pool's
    threads too).  Returns when every chunk is done; if one raised, no new
    chunk is started and the first exception is re-raised.  ``k <= 1`` runs
    everything on the calling thread.
    """
    if n <= 0:
        return
    if k <= 1 or n == 1:
        do = start()
        for i in range(n):
            do(i)
        return
    lock = threading.Lock()
    chunks = iter(range(n))
    failed: list[BaseException] = []

    def take() -> int | None:
        with lock:
            return None if failed else next(chunks, None)

    def participant() -> None:
        i = take()
        if i is None:
            return
        try:
            do = start()
            while i is not None:
                do(i)
                i = take()
        except BaseException as e:
            with lock:
                failed.append(e)
            raise

    pool = _pool()
    futures: list[Future[None]] = []
    try:
        for _ in range(min(k, n) - 1):
            futures.append(pool.submit(contextvars.copy_context().run, participant))
    except RuntimeError:  # "cannot schedule new futures after (interpreter) shutdown"
        pass
    try:
        participant()  # its own exception, if any, propagates once the others are done
    finally:
        for f in futures:
            if not f.cancel():
                f.exception()  # wait for its current chunk; its exception is in ``failed``
    if failed:
        raise failed[0]
