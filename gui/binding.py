"""Connecting Qt widgets to psygnal state without dangling callbacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject


def connect_while_alive(owner: QObject, signal: Any, slot: Callable) -> None:
    """Connect a psygnal ``signal`` to ``slot`` until ``owner`` is destroyed.

    State objects outlive the widgets that show them (a test, a closed
    window); without this they would call into deleted C++ objects.
    """
    signal.connect(slot)
    owner.destroyed.connect(lambda *_: signal.disconnect(slot, missing_ok=True))
