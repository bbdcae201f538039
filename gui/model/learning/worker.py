"""Training in a child process, so that the window's thread never waits for the GIL.

A training loop is thousands of small NumPy calls.  Run in a thread beside
the window, each call gives up the GIL and then waits for the GUI thread to
hand it back; while the window draws the growing curves, a 0.6 s run took
several seconds (``bench/learning_train.py``).  So the view's job runs the
loop in one persistent child process (started on first use with the
``spawn`` method, reused by later runs, a daemon that ends with the app) and
this side only rebuilds the run from what the child sends after each epoch:
the new rows of the curves and the new weights.  The child runs the same
:func:`compute.train_classifier_steps` as an export does in-process, so the
two give the same run bit for bit (a test checks it).

:func:`process_steps` is the job: a generator yielding ``(fraction, run so
far)`` and returning the finished run.  Closing it early (a cancelled job)
asks the child to stop after its current epoch and waits until it has, so
the next run starts clean.  If the child cannot be started or dies, the run
is done in this process instead and :data:`FALLBACK` says why.

The Distil tab's two students (1-10 s of the same small steps, restarted by
every move of their sliders) train the same way in a second child,
:func:`student_steps` (a distillation run: the inputs end with the
teacher's logits), so that they hold up neither the window's thread nor the
teacher's training.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from collections.abc import Generator

import numpy as np

from compute import TrainRun, train_classifier_steps

#: Why the last run fell back to this process (None while the child works).
FALLBACK: str | None = None


class TrainingFailed(RuntimeError):
    """The training itself raised (in the child): the same would happen in this process."""


def _child(conn, nice: int = 0) -> None:  # pragma: no cover - runs in the child process
    import compute

    if nice:
        try:
            os.nice(nice)  # yield the cores to the window (scheduling only: the same numbers)
        except (AttributeError, OSError):
            pass

    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        if not isinstance(message, tuple):  # a stop that arrived after its run had ended
            continue
        config, x_tr, y_tr, x_va, y_va, n_classes, *teacher = message
        sent = 0
        stopped = False
        try:
            steps = compute.train_classifier_steps(config, x_tr, y_tr, x_va, y_va, n_classes=n_classes,
                                                   teacher=teacher[0] if teacher else None)
            while True:
                try:
                    fraction, run = next(steps)
                except StopIteration:
                    break
                new = {name: values[sent:] for name, values in run.history.items()}
                conn.send(("epoch", fraction, new, run.params[sent:], run.class_weights if not sent else None))
                sent = len(run.params)
                if conn.poll() and conn.recv() == "stop":
                    stopped = True
                    break
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises it
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
            continue
        conn.send(("stopped",) if stopped else ("done",))


class _Worker:
    """The child process and its end of the pipe (one per process, used by one run at a time)."""

    def __init__(self, name: str = "softmax-lab-training", nice: int = 0) -> None:
        self._name = name
        self._nice = nice
        self._lock = threading.Lock()
        self._process = None
        self._conn = None

    def _ensure(self):
        if self._process is None or not self._process.is_alive():
            ctx = mp.get_context("spawn")
            parent, child = ctx.Pipe()
            process = ctx.Process(target=_child, args=(child, self._nice), daemon=True, name=self._name)
            process.start()
            child.close()
            self._process, self._conn = process, parent
        return self._conn

    def forget(self) -> None:
        """Drop a child that failed (the next run starts a new one)."""
        if self._process is not None and self._process.is_alive():
            self._process.kill()
        self._process = self._conn = None

    def stop(self) -> None:
        """End the child (for tests; the app simply exits and takes the daemon with it)."""
        with self._lock:
            if self._process is not None and self._process.is_alive():
                self._conn.send(None)
                self._process.join(5)
            self._process = self._conn = None

    def steps(self, inputs: tuple) -> Generator[tuple[float, TrainRun], None, TrainRun]:
        config = inputs[0]
        with self._lock:
            conn = self._ensure()
            conn.send(tuple(inputs))
            history: dict[str, list] = {}
            params: list = []
            weights = None
            finished = False
            try:
                while True:
                    message = conn.recv()
                    kind = message[0]
                    if kind == "error":
                        finished = True  # the child is back at its loop: nothing to drain
                        raise TrainingFailed(message[1])
                    if kind == "done":
                        finished = True
                        return self._run(config, history, params, weights)
                    _, fraction, new, new_params, new_weights = message
                    for name, values in new.items():
                        history.setdefault(name, []).extend(values.tolist())
                    params.extend(new_params)
                    if new_weights is not None:
                        weights = new_weights
                    yield fraction, self._run(config, history, params, weights)
            finally:
                if not finished:
                    self._drain(conn)

    @staticmethod
    def _run(config, history, params, weights) -> TrainRun:
        return TrainRun(config, {name: np.array(v) for name, v in history.items()}, tuple(params), weights)

    def _drain(self, conn) -> None:
        """After an early close: ask the child to stop and read until it has (the pipe is then clean)."""
        try:
            conn.send("stop")
            while True:
                if conn.recv()[0] in ("stopped", "done", "error"):
                    return
        except (EOFError, OSError, BrokenPipeError):
            self._process = self._conn = None


WORKER = _Worker()
#: The Distil tab's students train in a second child, so that they never hold up the teacher's training
#: (nor it them); like the first, it starts on first use and stays.  It runs at a lower priority: every
#: move of a Distil slider restarts it, and the redraw that the move asks for comes first.
STUDENTS_NICE = 10
STUDENTS_WORKER = _Worker("softmax-lab-students", nice=STUDENTS_NICE)


def process_steps(inputs: tuple, worker: _Worker | None = None) -> Generator[tuple[float, TrainRun], None, TrainRun]:
    """``(config, x_train, y_train, x_val, y_val, n_classes[, teacher])`` trained in a child process (see
    above): ``worker``'s (by default the training's); ``teacher``, the teacher's logits of the training rows,
    makes it a distillation run.  :data:`FALLBACK` tells about the training's child only."""
    global FALLBACK
    worker = WORKER if worker is None else worker
    try:
        run = yield from worker.steps(inputs)
    except TrainingFailed:
        raise
    except (OSError, EOFError, RuntimeError) as exc:  # no child could be started, or it died
        if worker is WORKER:
            FALLBACK = f"{type(exc).__name__}: {exc}".rstrip(": ")
        worker.forget()
        return (yield from local_steps(inputs))
    if worker is WORKER:
        FALLBACK = None
    return run


def student_steps(inputs: tuple) -> Generator[tuple[float, TrainRun], None, TrainRun]:
    """:func:`process_steps` in the students' child."""
    return (yield from process_steps(inputs, STUDENTS_WORKER))


def local_steps(inputs: tuple) -> Generator[tuple[float, TrainRun], None, TrainRun]:
    """The same run in this process (exports, tests, and the fallback)."""
    config, x_tr, y_tr, x_va, y_va, n_classes, *teacher = inputs
    return (yield from train_classifier_steps(config, x_tr, y_tr, x_va, y_va, n_classes=n_classes,
                                              teacher=teacher[0] if teacher else None))


def stop_worker() -> None:
    WORKER.stop()
    STUDENTS_WORKER.stop()


__all__ = ["FALLBACK", "TrainingFailed", "local_steps", "process_steps", "stop_worker", "student_steps"]
