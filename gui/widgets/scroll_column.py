"""A column of controls that scrolls up and down when the window is short, never sideways."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget

#: The height the column asks for at least: a few controls stay in sight, the rest scroll.
MIN_VISIBLE_HEIGHT = 120


def min_width(widget: QWidget) -> int:
    """The narrowest ``widget`` can be without clipping: its hint, or its minimum if that is larger."""
    return max(widget.minimumWidth(), widget.minimumSizeHint().width())


class ScrollColumn(QScrollArea):
    """Holds ``column`` at the viewport's width and scrolls it vertically when it is taller.

    Its minimum width is the column's own plus the scroll bar's, so nothing is
    clipped sideways whether or not the bar shows; its minimum height is small,
    so a tall column no longer sets the window's minimum height.  The column is
    measured again whenever its layout changes (a mode that shows other controls).
    """

    def __init__(self, column: QWidget, parent=None):
        super().__init__(parent)
        self.setObjectName("controls")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setWidget(column)
        column.setAutoFillBackground(False)  # the window's background, in both themes
        column.installEventFilter(self)

    def _bar_width(self) -> int:
        return self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth()

    def minimumSizeHint(self) -> QSize:
        column = self.widget()
        height = min(MIN_VISIBLE_HEIGHT, column.minimumSizeHint().height())
        return QSize(min_width(column) + self._bar_width(), height)

    def sizeHint(self) -> QSize:
        hint = self.widget().sizeHint()
        return QSize(max(hint.width(), min_width(self.widget())) + self._bar_width(), hint.height())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # the column's size changed: the window lays out again
        return super().eventFilter(watched, event)

    def ensure_visible(self, widget: QWidget) -> None:
        """Scroll so that ``widget`` (inside the column) is in sight."""
        self.ensureWidgetVisible(widget, 0, 0)
