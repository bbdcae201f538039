"""Window geometry that fits the screen: the first launch's size, and whether a saved one still fits."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication

#: The first launch takes this share of the screen's available width and height ...
FIRST_FRACTION = 0.9
#: ... but no more than this (a 4K screen gets a window, not a wall).
FIRST_MAX = QSize(1600, 1000)


def available_at(point=None) -> QRect:
    """The available geometry (less panels and docks) of the screen at ``point``, or the primary one."""
    screen = QGuiApplication.screenAt(point) if point is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def first_geometry(available: QRect) -> QRect:
    """A window rectangle for the first launch: a share of ``available``, capped, centred in it."""
    width = min(int(available.width() * FIRST_FRACTION), FIRST_MAX.width(), available.width())
    height = min(int(available.height() * FIRST_FRACTION), FIRST_MAX.height(), available.height())
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    return rect


def fitted(saved: QRect, available: QRect) -> QRect | None:
    """``saved`` moved inside ``available`` if its size fits there; None if it is too large (or empty)."""
    if saved.isEmpty() or saved.width() > available.width() or saved.height() > available.height():
        return None
    rect = QRect(saved)
    rect.moveLeft(min(max(rect.left(), available.left()), available.right() - rect.width() + 1))
    rect.moveTop(min(max(rect.top(), available.top()), available.bottom() - rect.height() + 1))
    return rect
