"""The Attention view's core job, and the hand-over of its partial core (no Qt: threads only).

With one head shown, the job yields a partial core (that head, before the other heads' scores,
the histograms and the spreads) and waits until the view has drawn it, so the window's redraw and
the job's statistics do not share the two cores; :class:`PartialCores` is the view's side of it.
"""

from __future__ import annotations

import threading

from gui.model.attention import core as attention_core

#: The core job waits at most this long (seconds) for the view to draw its partial core.
PARTIAL_WAIT_S = 0.25


def core_job(request):
    """The core job: the core of ``inputs`` with the weights of the head shown (``head``, 1-based;
    0: the grid of every head); the inputs travel with the core, so the model can check it is
    still current.  With one head shown, a partial core comes first, as ``(fraction, (inputs,
    head, core, drawn))``, and the job goes on once the view has drawn it (it sets ``drawn``; at
    most PARTIAL_WAIT_S later).  The other heads' weights are computed when they are shown (or
    exported)."""
    inputs, head, drawn = request
    steps = attention_core.core_steps(inputs, head=max(head, 1) - 1, partial=head != 0)
    while True:
        try:
            step = next(steps)
        except StopIteration as stop:
            core = stop.value
            break
        if isinstance(step, tuple):
            yield step[0], (inputs, head, step[1], drawn)
            drawn.wait(PARTIAL_WAIT_S)
        else:
            yield step
    if head == 0:
        core.parts.whole()
    return inputs, core


class PartialCores:
    """The running job's partial core, and the event the newest job waits on after it."""

    def __init__(self) -> None:
        self._shown: tuple | None = None  # (head, core)
        self._waiting: tuple | None = None  # (key, threading.Event)

    def event_for(self, key) -> threading.Event:
        """The event a job for ``key`` waits on after its partial core; an older job's is set, so
        that it goes on to its next yield (where it stops) instead of waiting for a draw."""
        if self._waiting is not None and self._waiting[0] != key:
            self.release()
        if self._waiting is None:
            self._waiting = (key, threading.Event())
        return self._waiting[1]

    def release(self) -> None:
        """Let the newest job go on (it was cancelled, or the view shuts down)."""
        if self._waiting is not None:
            self._waiting[1].set()
            self._waiting = None

    def arrived(self, value) -> threading.Event:
        """Keep the partial core the job yielded; returns the event to set once it is drawn."""
        _inputs, head, core, drawn = value
        self._shown = (head, core)
        return drawn

    def forget(self) -> None:
        self._shown = None

    def to_draw(self, head: int):
        """The newest partial core when ``head`` (the head shown) is its head (only that head may
        be read), else None.  It stays until :meth:`forget` (a whole core is drawn)."""
        if self._shown is not None and self._shown[0] == head:
            return self._shown[1]
        return None
