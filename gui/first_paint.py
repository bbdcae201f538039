"""Run something once a window has first painted: the CuPy probe, and the start-up bench's exit.

``SOFTMAX_LAB_EXIT_AFTER_PAINT=1`` makes ``python main.py`` print one JSON line on stdout and quit
once its window first painted (``bench/startup.py``): ``painted_at`` (``time.time()`` at the first
paint event of the main window or a widget in it), ``elapsed`` (seconds since the process started,
where the platform says), ``cpu_s`` (the CPU seconds it has used, ``time.process_time()``) and
``modules`` (the names in ``sys.modules`` then, which ``tests/gui/test_startup.py`` checks).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

EXIT_AFTER_PAINT = "SOFTMAX_LAB_EXIT_AFTER_PAINT"


class _FirstPaint(QObject):
    """Watches ``window`` until it is shown, then every widget's events until one in ``window`` paints.

    (Watching the whole application only from the show on keeps the filter off the thousands of
    events that building the window sends.)
    """

    def __init__(self, window: QWidget, callback: Callable[[], None], at_once: bool):
        super().__init__(window)  # goes with the window, if that never paints
        self.window, self.callback, self.at_once = window, callback, at_once
        if window.isVisible():
            QApplication.instance().installEventFilter(self)
        else:
            window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind == QEvent.Type.Show and watched is self.window:
            self.window.removeEventFilter(self)
            QApplication.instance().installEventFilter(self)
        elif (kind == QEvent.Type.Paint and isinstance(watched, QWidget)
              and watched.window() is self.window):
            self.window.removeEventFilter(self)
            QApplication.instance().removeEventFilter(self)
            if self.at_once:
                self.callback()
            else:
                QTimer.singleShot(0, self, self.callback)  # once this paint is done; not if the window went
        return False


def after_first_paint(window: QWidget, callback: Callable[[], None], *, at_once: bool = False) -> None:
    """Call ``callback()`` once ``window`` has first painted (``at_once``: at its first paint event)."""
    _FirstPaint(window, callback, at_once)


def process_age() -> float | None:
    """Seconds since this process started (Linux: /proc/self/stat), else None."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def exit_after_first_paint(window: QWidget) -> None:
    """With ``SOFTMAX_LAB_EXIT_AFTER_PAINT`` set: report ``window``'s first paint on stdout, then quit."""
    if not os.environ.get(EXIT_AFTER_PAINT):
        return

    def stamp() -> None:
        record = {"painted_at": time.time(), "elapsed": process_age(), "cpu_s": time.process_time(),
                  "modules": sorted(sys.modules)}
        print(json.dumps(record), flush=True)
        QApplication.instance().exit(0)  # leaves the event loop once this paint is done

    after_first_paint(window, stamp, at_once=True)
