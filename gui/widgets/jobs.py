"""Background work for views: one job kind, keyed by its inputs, on Qt's global thread pool.

A :class:`Job` runs one pure function of an immutable input snapshot off the
GUI thread.  The function may be a plain function or a generator: a
generator *yields* its progress as a fraction in 0..1 (or a pair
``(fraction, partial)``: a partial result, such as the curves of a training
run so far, delivered by :attr:`Job.partial`) and *returns* its result, and is where a cancel takes effect (it stops at its next ``yield``).  NumPy cannot be interrupted inside a
product, so a plain function always runs to its end; its result is simply
dropped when it is no longer wanted.

Rules (the same for every view):

- ``request(key, inputs)``: work for ``key`` unless it is already running or
  waiting.  At most one worker runs at a time; a newer request replaces the
  waiting one and asks the running one to stop (a generator stops at its
  next ``yield``), so a slider drag never piles up work.
- ``delivered(key, result)`` and ``failed(key, message)`` fire on the GUI
  thread, and only for the newest key requested (stale work is never
  delivered).  ``progressed(fraction)`` and ``partial(key, value)`` are for
  the newest key too.
- ``cancel()`` stops the newest work and remembers its key: the same key is
  not started again until another one has been requested (a user who
  cancelled a huge draw doesn't want it restarted by a repaint).
- ``wait()`` blocks until the newest work is delivered (exports and tests);
  ``shutdown()`` cancels everything for good and waits for the threads.

Signals from the worker threads reach the GUI thread through this object's
own queued signals, so slots run on the GUI thread whatever the caller
connects.
"""

from __future__ import annotations

import collections
import inspect
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from gui.model.texts import tr

#: How long :meth:`Job.wait` and :meth:`Job.shutdown` wait for a worker by default (seconds).
WAIT_S = 600.0


class _Cancelled(Exception):
    """Raised inside a plain function's wrapper when it was cancelled before it started."""


@dataclass(eq=False)
class _Run:
    """One piece of work: its key, its inputs and, once done, its outcome."""

    key: Hashable
    inputs: Any
    result: Any = None
    error: str | None = None
    aborted: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    handled: bool = False  # _finish has run for it (on the GUI thread)


class Job(QObject):
    """Runs ``function(inputs)`` in a worker thread for the newest key requested.

    ``function`` is a pure function (thread-safe, no Qt) or a generator
    function yielding progress fractions and returning its result.
    """

    progressed = Signal(float)
    partial = Signal(object, object)  # key, the partial result a generator yielded
    delivered = Signal(object, object)  # key, result
    failed = Signal(object, str)  # key, message
    busy_changed = Signal(bool)

    _progress_from_worker = Signal(object, float)
    _partial_from_worker = Signal(object, object)
    _done_from_worker = Signal(object)

    def __init__(self, function: Callable[[Any], Any], parent: QObject | None = None):
        super().__init__(parent)
        self._function = function
        self._running: _Run | None = None  # the worker now alive (wanted or not)
        self._waiting: _Run | None = None  # the newest request, started when the running one ends
        self._wanted: Hashable | None = None  # the newest key requested
        self._cancelled_key: Hashable | None = None
        self._shut_down = False
        self._progress_from_worker.connect(self._on_progress)
        self._partial_from_worker.connect(self._on_partial)
        self._done_from_worker.connect(self._finish)

    # -- state -------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Whether wanted work is running or waiting to run."""
        return (self._waiting is not None
                or (self._running is not None and not self._running.aborted and self._running.key == self._wanted))

    @property
    def running(self) -> bool:
        """Whether any worker thread (wanted or cancelled) is still alive."""
        return self._running is not None

    @property
    def wanted_key(self) -> Hashable | None:
        """The newest key requested (None after cancel or before any request)."""
        return self._wanted

    @property
    def cancelled_key(self) -> Hashable | None:
        return self._cancelled_key

    # -- requests ------------------------------------------------------------------------
    def request(self, key: Hashable, inputs: Any, *, again: bool = False) -> bool:
        """Want the result for ``key``; returns whether work for it is (now) running or waiting.

        ``again`` starts a key that was cancelled (the user asked for it explicitly).
        """
        if self._shut_down or (key == self._cancelled_key and not again):
            return False
        if key == self._wanted and self.busy:
            return True
        was_busy = self.busy
        self._wanted = key
        self._cancelled_key = None
        run = _Run(key, inputs)
        if self._running is None:
            self._start(run)
        elif self._running.key == key and not self._running.aborted:
            self._waiting = None
        else:
            self._running.aborted = True  # a generator stops at its next yield
            self._waiting = run
        if not was_busy:
            self.busy_changed.emit(True)
        return True

    def cancel(self) -> Hashable | None:
        """Stop the newest work (it is never delivered); returns its key, or None if there was none."""
        key = self._wanted if self.busy else None
        was_busy = self.busy
        self._waiting = None
        if self._running is not None:
            self._running.aborted = True
        self._cancelled_key = key
        self._wanted = None
        if was_busy:
            self.busy_changed.emit(False)
        return key

    def wait(self, timeout_s: float = WAIT_S) -> bool:
        """Block until the newest work has been delivered (or failed); True if nothing is left."""
        while self._running is not None:
            run = self._running
            if not run.done.wait(timeout_s):
                return False
            self._finish(run)  # deliver now; the queued signal finds it handled
        return not self.busy

    def shutdown(self, timeout_s: float = WAIT_S) -> None:
        """Cancel everything for good (no request is taken afterwards) and wait for the threads."""
        self._shut_down = True
        self.cancel()
        run = self._running
        if run is not None and run.done.wait(timeout_s):
            self._finish(run)

    # -- the worker ----------------------------------------------------------------------
    def _start(self, run: _Run) -> None:
        self._running = run
        work = self._work(run)  # a generator: each step is one yield of the function
        # Into the pool at once (not from a timer), so that a wait() that blocks right away sees it run.
        QThreadPool.globalInstance().start(lambda: collections.deque(work, maxlen=0))

    def _work(self, run: _Run):
        """The worker's generator (in the worker thread): relays progress, records the outcome."""
        try:
            if run.aborted:
                raise _Cancelled
            out = self._function(run.inputs)
            if inspect.isgenerator(out):
                while True:
                    try:
                        fraction = next(out)
                    except StopIteration as stop:
                        out = stop.value
                        break
                    if isinstance(fraction, tuple):
                        fraction, partial = fraction
                        self._partial_from_worker.emit(run.key, partial)
                    self._progress_from_worker.emit(run.key, float(fraction))
                    yield  # one step (the runnable drains this generator)
                    if run.aborted:  # checked here, not by worker.quit(), so that this
                        raise _Cancelled  # generator always ends (and says so) in its thread
            run.result = out
        except _Cancelled:
            run.aborted = True
        except Exception as exc:  # noqa: BLE001 - reported through `failed`, never raised into Qt
            run.error = tr("error.job.unexpected", type=type(exc).__name__, message=exc)
        finally:
            run.done.set()
            self._done_from_worker.emit(run)

    # -- on the GUI thread ---------------------------------------------------------------------
    def _on_progress(self, key: Hashable, fraction: float) -> None:
        if key == self._wanted and not self._shut_down:
            self.progressed.emit(fraction)

    def _on_partial(self, key: Hashable, value: Any) -> None:
        if key == self._wanted and not self._shut_down:
            self.partial.emit(key, value)

    def _finish(self, run: _Run) -> None:
        if run.handled:
            return
        run.handled = True
        if run is self._running:
            self._running = None
        current = run.key == self._wanted and not run.aborted and not self._shut_down
        if current and self._waiting is None:
            self._wanted_done()
            if run.error is not None:
                self.failed.emit(run.key, run.error)
            else:
                self.delivered.emit(run.key, run.result)
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not self._shut_down:
            self._start(waiting)

    def _wanted_done(self) -> None:
        self.busy_changed.emit(False)
