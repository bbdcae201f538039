"""Two small Qt signal tools every view uses: a leading-edge throttle, and blocking signals in a block.

They were superqt's ``qthrottled`` and ``signals_blocked``; importing superqt
cost about 0.2 s of the window's start-up for these two, so they live here.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer

__all__ = ["Throttled", "signals_blocked"]


@contextlib.contextmanager
def signals_blocked(obj: QObject) -> Iterator[None]:
    """Block ``obj``'s signals inside the block, then restore what was set before."""
    previous = obj.blockSignals(True)
    try:
        yield
    finally:
        obj.blockSignals(previous)


class Throttled(QObject):
    """Calls ``func()`` at most once per ``timeout_ms``.

    A call while idle runs ``func`` at once (the leading edge) and opens a
    window of ``timeout_ms``; calls inside the window are folded into one run
    when it closes (the trailing edge), which opens the next window.  So a
    slider drag redraws at once, then at most once per window, and always
    ends on the last value.  ``func`` is held weakly when it is a bound
    method, so the throttle keeps no object alive.
    """

    def __init__(self, func: Callable[[], Any], timeout_ms: int, parent: QObject | None = None):
        super().__init__(parent)
        self._func: Callable[[], Callable[[], Any] | None]
        if getattr(func, "__self__", None) is not None:
            self._func = weakref.WeakMethod(func)  # type: ignore[arg-type]
        else:
            self._func = lambda: func
        self._pending = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(int(timeout_ms))
        self._timer.timeout.connect(self._window_closed)

    def __call__(self, *_args: Any) -> None:
        self._pending = True
        if not self._timer.isActive():
            self._run()

    @property
    def holding(self) -> bool:
        """Whether a window is open (a call now would wait for its end)."""
        return self._timer.isActive()

    def cancel(self) -> None:
        """Drop the call waiting for the window's end, if any."""
        self._pending = False

    def _run(self) -> None:
        self._pending = False
        func = self._func()
        if func is not None:
            func()
        self._timer.start()

    def _window_closed(self) -> None:
        if self._pending:
            self._run()
