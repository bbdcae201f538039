"""Undo/redo for every state change, recorded from the state objects' events.

Widgets never build undo commands: the recorder watches the evented state
(the score row and each view model) and turns each field change into a
QUndoCommand.  Rapid changes of one field (a slider drag, a held arrow key)
merge into one step.  While a command is undone or redone, the events it
causes are not recorded again.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtGui import QUndoCommand, QUndoStack

MERGE_SECONDS = 0.75
_COMMAND_ID = 0x50F7


class FieldChange(QUndoCommand):
    def __init__(self, recorder: UndoRecorder, obj: Any, field: str, old: Any, new: Any, text: str):
        super().__init__(text)
        self.recorder, self.obj, self.field = recorder, obj, field
        self.old, self.new = old, new
        self.stamp = time.monotonic()
        self._done = True  # the change has already happened when it is pushed

    def id(self) -> int:
        return _COMMAND_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not (isinstance(other, FieldChange) and other.obj is self.obj and other.field == self.field):
            return False
        if other.stamp - self.stamp > MERGE_SECONDS:
            return False
        self.new, self.stamp = other.new, other.stamp
        return True

    def undo(self) -> None:
        self.recorder.apply(self.obj, self.field, self.old)

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        self.recorder.apply(self.obj, self.field, self.new)


class UndoRecorder:
    """Feeds a QUndoStack from psygnal evented dataclasses."""

    def __init__(self, stack: QUndoStack):
        self.stack = stack
        self._applying = False

    def watch(self, obj: Any, describe) -> None:
        """Record every field change of ``obj``; ``describe(field)`` names the step."""

        def on_event(info) -> None:
            if self._applying:
                return
            new, old = info.args
            field = info.signal.name
            self.stack.push(FieldChange(self, obj, field, old, new, describe(field)))

        obj.events.connect(on_event)

    def apply(self, obj: Any, field: str, value: Any) -> None:
        self._applying = True
        try:
            setattr(obj, field, value)
        finally:
            self._applying = False
