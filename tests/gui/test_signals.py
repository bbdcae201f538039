"""gui.widgets.signals: the redraw throttle every view uses, and signals_blocked."""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, Signal

from gui.widgets.signals import Throttled, signals_blocked


def spin(qapp, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        qapp.processEvents()
        time.sleep(0.001)


def test_a_call_while_idle_runs_at_once_and_calls_in_the_window_fold_into_one(qapp):
    calls = []
    t = Throttled(lambda: calls.append(time.perf_counter()), 40)
    t()
    assert len(calls) == 1 and t.holding  # the leading edge, inside the call
    t()
    t()
    t()
    assert len(calls) == 1  # held back
    spin(qapp, 0.2)
    assert len(calls) == 2  # one trailing run for the three calls
    assert not t.holding
    t()
    assert len(calls) == 3  # idle again: at once


def test_cancel_drops_the_held_call(qapp):
    calls = []
    t = Throttled(lambda: calls.append(1), 30)
    t()
    t()
    t.cancel()
    spin(qapp, 0.15)
    assert calls == [1]


def test_a_bound_method_is_held_weakly(qapp):
    class Owner:
        def __init__(self):
            self.calls = 0

        def redraw(self):
            self.calls += 1

    owner = Owner()
    t = Throttled(owner.redraw, 20)
    t()
    assert owner.calls == 1
    del owner
    gc.collect()
    t()  # nothing to call any more, and no error
    spin(qapp, 0.08)


def test_signals_blocked_blocks_and_restores(qapp):
    class Emitter(QObject):
        fired = Signal()

    e = Emitter()
    seen = []
    e.fired.connect(lambda: seen.append(1))
    with signals_blocked(e):
        e.fired.emit()
        assert e.signalsBlocked()
    assert not e.signalsBlocked() and seen == []
    e.blockSignals(True)
    with signals_blocked(e):
        pass
    assert e.signalsBlocked()  # what was set before is restored, not cleared
