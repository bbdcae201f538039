"""Undo/redo for every state change, recorded from the state objects' events.

Widgets never build undo commands: the recorder watches the evented state
(the score row and each view model) and turns each field change into a
QUndoCommand.  Rapid changes of one field (a slider drag, a held arrow key)
merge into one step.  While a command is undone or redone, the events it
causes are not recorded again.

Memory stays bounded however long the session: the stack keeps the last
UNDO_LIMIT steps (older ones are dropped), and a change that merges into the
step on top only replaces that step's new value in place.  No command object
is made for it (PySide keeps the Python side of a command that Qt merged
away alive, so merging through QUndoStack.push grew by one command and its
values per slider move), and a merged step holds only its first old and its
last new value, never the values in between.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtGui import QUndoCommand, QUndoStack

from gui import registry
from gui.model.texts import tr

MERGE_SECONDS = 0.75
#: The undo stack keeps this many steps; older ones are dropped.
UNDO_LIMIT = 200
_COMMAND_ID = 0x50F7


class FieldChange(QUndoCommand):
    """One step: ``obj.field`` went from ``old`` to ``new`` (merged steps keep the first old, last new)."""

    def __init__(self, recorder: UndoRecorder, obj: Any, field: str, old: Any, new: Any, text: str):
        super().__init__(text)
        self.recorder, self.obj, self.field = recorder, obj, field
        self.old, self.new = old, new
        self.stamp = time.monotonic()
        self._done = True  # the change has already happened when it is pushed

    def id(self) -> int:
        return _COMMAND_ID

    def absorbs(self, obj: Any, field: str, now: float) -> bool:
        """Whether a change of ``obj.field`` at ``now`` merges into this step."""
        return obj is self.obj and field == self.field and now - self.stamp <= MERGE_SECONDS

    def mergeWith(self, other: QUndoCommand) -> bool:
        # merges happen in UndoRecorder.record, in place; a command Qt merged away would stay alive
        return False

    def undo(self) -> None:
        self.recorder.apply(self.obj, self.field, self.old)

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        self.recorder.apply(self.obj, self.field, self.new)


class UndoRecorder:
    """Feeds a QUndoStack from psygnal evented dataclasses; keeps at most ``limit`` steps."""

    def __init__(self, stack: QUndoStack, limit: int = UNDO_LIMIT):
        self.stack = stack
        if stack.count() == 0:  # Qt ignores a limit set on a stack that holds commands
            stack.setUndoLimit(limit)
        self._applying = False

    def watch(self, obj: Any, describe) -> None:
        """Record every field change of ``obj``; ``describe(field)`` names the step."""

        def on_event(info) -> None:
            if self._applying:
                return
            new, old = info.args
            self.record(obj, info.signal.name, old, new, describe)

        obj.events.connect(on_event)

    def _top(self) -> FieldChange | None:
        """The step a new change may merge into: the newest one, with nothing to redo above it."""
        index = self.stack.index()
        if index == 0 or index != self.stack.count() or index == self.stack.cleanIndex():
            return None
        top = self.stack.command(index - 1)
        return top if isinstance(top, FieldChange) else None

    def record(self, obj: Any, field: str, old: Any, new: Any, describe) -> None:
        """Merge the change into the step on top (in place) or push a new step."""
        now = time.monotonic()
        top = self._top()
        if top is not None and top.absorbs(obj, field, now):
            top.new, top.stamp = new, now  # the values in between are let go
            return
        self.stack.push(FieldChange(self, obj, field, old, new, describe(field)))

    def apply(self, obj: Any, field: str, value: Any) -> None:
        self._applying = True
        try:
            setattr(obj, field, value)
        finally:
            self._applying = False


def undo_text(view: str, field: str) -> str:
    """The Undo menu's words for a change of ``field`` in ``view`` ("change Temperature: Temperature T")."""
    try:
        what = tr(f"param.{field}.label")
    except KeyError:  # extra state (the attention sentence, the tables)
        what = field
    return tr("undo.change", view=registry.get(view).title, what=what)

