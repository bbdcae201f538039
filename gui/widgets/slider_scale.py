"""Labels painted under a slider's tick marks, thinned so that none is clipped or overlaps another.

A row of QLabels between stretches (what the log sliders had) is squeezed
when the column is narrow: "1000" showed as "100(".  :class:`SliderScale`
instead measures each label with the font, centres it under the slider
position it names (where the style draws the tick), keeps the first and the
last label inside the widget, and drops a label that would touch one already
placed.  The marked label (the bold "1") and the two ends are placed first;
the others follow in an order that thins them evenly (every other one, then
the ones between).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QSlider, QStyle, QStyleOptionSlider, QWidget

#: The least room between two labels, in pixels.
GAP = 6
#: The labels' font size relative to the widget's.
SCALE = 0.85


@dataclass(frozen=True)
class Mark:
    """One label: the slider position it names, its text, and whether it is the marked one (bold)."""

    position: int
    text: str
    bold: bool = False


def placement_order(count: int, pinned: Sequence[int]) -> list[int]:
    """The order in which labels ``0..count-1`` are tried: ``pinned`` first, then the rest thinned evenly.

    Among the rest, an index divisible by a larger power of two comes first,
    so a row that has room for half the labels shows every other one.

    >>> placement_order(7, [0, 6])
    [0, 6, 4, 2, 1, 3, 5]
    """
    first = [i for i in dict.fromkeys(pinned) if 0 <= i < count]
    rest = [i for i in range(count) if i not in first]
    return first + sorted(rest, key=lambda i: (-(i & -i) if i else 0, i))


class SliderScale(QWidget):
    """The labels of ``slider``'s marks, drawn where its ticks are (see the module docstring)."""

    def __init__(self, slider: QSlider, marks: Sequence[Mark], parent=None):
        super().__init__(parent)
        self.slider = slider
        self.marks = tuple(marks)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * SCALE)
        self.setFont(font)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        slider.installEventFilter(self)

    # -- geometry ------------------------------------------------------------------------------
    def _font(self, bold: bool) -> QFont:
        font = QFont(self.font())
        font.setBold(bold)
        return font

    def _width(self, mark: Mark) -> int:
        return QFontMetrics(self._font(mark.bold)).horizontalAdvance(mark.text)

    def sizeHint(self) -> QSize:
        widths = sum(self._width(m) + GAP for m in self.marks)
        return QSize(widths, QFontMetrics(self._font(True)).height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, self.sizeHint().height())

    def tick_x(self, position: int) -> int:
        """Where the slider draws the tick of ``position``, in this widget's coordinates."""
        option = QStyleOptionSlider()
        self.slider.initStyleOption(option)
        style = self.slider.style()
        length = style.pixelMetric(QStyle.PixelMetric.PM_SliderLength, option, self.slider)
        span = max(self.slider.width() - length, 0)
        x = length // 2 + QStyle.sliderPositionFromValue(option.minimum, option.maximum, position, span,
                                                         option.upsideDown)
        return self.mapFromGlobal(self.slider.mapToGlobal(QPoint(x, 0))).x()

    def shown(self) -> list[tuple[Mark, QRect]]:
        """The labels that fit, each with the rectangle it is drawn in, left to right."""
        if not self.marks:
            return []
        height = self.height()
        rects: dict[int, QRect] = {}
        pinned = [i for i, m in enumerate(self.marks) if m.bold] + [0, len(self.marks) - 1]
        for i in placement_order(len(self.marks), pinned):
            mark = self.marks[i]
            width = self._width(mark)
            left = self.tick_x(mark.position) - width // 2
            left = min(max(left, 0), self.width() - width)  # the end labels stay inside
            if left < 0:
                continue  # wider than the whole row
            rect = QRect(left, 0, width, height)
            room = rect.adjusted(-GAP, 0, GAP, 0)
            if all(not room.intersects(r) for r in rects.values()):
                rects[i] = rect
        return [(self.marks[i], rects[i]) for i in sorted(rects)]

    # -- drawing -------------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        style = self.style()
        align = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
        for mark, rect in self.shown():
            painter.setFont(self._font(mark.bold))
            style.drawItemText(painter, rect, align, self.palette(), self.isEnabled(), mark.text,
                               QPalette.ColorRole.WindowText)
        painter.end()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.slider and event.type() in (QEvent.Type.Resize, QEvent.Type.Move,
                                                   QEvent.Type.StyleChange, QEvent.Type.Show):
            self.update()
        return super().eventFilter(obj, event)
