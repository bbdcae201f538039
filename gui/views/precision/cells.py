"""Cell texts and colours, and the small multi-line table both precision grids are drawn in."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
)

from gui import theme as themes
from gui.widgets.signals import signals_blocked

#: A grid cell shows this many weights, the masking panel's detail line more; tooltips list them all.
SHOWN_WEIGHTS = 4
DETAIL_WEIGHTS = 12


def compact(v: float) -> str:
    """A weight in a few characters: 0 only when exactly 0, NaN and inf spelled out."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "0" if v == 0 else f"{v:.3g}"


def exact(v: float, dtype: str) -> str:
    """The shortest text that reads back as the same number of the format's storage type."""
    if not math.isfinite(v):
        return compact(v)
    storage = {"float16": np.float16, "bfloat16": np.float32, "float32": np.float32}.get(dtype)
    return repr(float(v)) if storage is None else str(storage(v))


def weights_line(w: np.ndarray, limit: int = SHOWN_WEIGHTS) -> str:
    shown = " ".join(compact(v) for v in w[:limit])
    return shown + (" …" if len(w) > limit else "")


def weights_tooltip(head: str, labels, w: np.ndarray, dtype: str) -> list[str]:
    return [head, *(f"{label}: {exact(v, dtype)}" for label, v in zip(labels, w))]


def cell_colour(nan: int, inf: int, zero: int) -> QColor | None:
    """The invalid colour for NaN/inf, the caution (amber) colour for exact zeros, nothing otherwise."""
    theme = themes.current()
    if nan or inf:
        return QColor(theme.invalid)
    if zero:
        return QColor(theme.caution)
    return None


def line_pitch(font: QFont) -> int:
    """The line height of ``font``'s first (Latin) family.

    A line holding a Chinese character takes the CJK font's taller line
    (Noto Sans CJK: 1.45 em against DejaVu's 1.17 em), which made the
    grid 90 px taller in Chinese; its glyphs fit the Latin pitch.
    """
    latin = QFont(font)
    if font.families():
        latin.setFamilies(font.families()[:1])
    return QFontMetrics(latin).height()


class _FrameDelegate(QStyledItemDelegate):
    """Paints the cell's lines at the Latin font's pitch, then outlines the table's selected cell."""

    MARGIN = 3

    def __init__(self, table: CellTable):
        super().__init__(table)
        self.table = table

    def sizeHint(self, option, index):  # noqa: N802 - Qt's name
        lines = str(index.data() or "").split("\n")
        fm = option.fontMetrics
        width = max(fm.horizontalAdvance(line) for line in lines) + 4 * self.MARGIN
        return QSize(width, len(lines) * line_pitch(option.font) + 2)

    def paint(self, painter, option, index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        lines, opt.text = opt.text.replace("\u2028", "\n").split("\n"), ""  # Qt shows "\n" as U+2028
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)  # background
        pitch = line_pitch(opt.font)
        rect = opt.rect.adjusted(self.MARGIN, 0, -self.MARGIN, 0)
        top = rect.top() + (rect.height() - len(lines) * pitch) // 2
        painter.save()
        painter.setFont(opt.font)
        painter.setPen(opt.palette.color(QPalette.ColorRole.Text))
        for i, line in enumerate(lines):
            shown = opt.fontMetrics.elidedText(line, Qt.TextElideMode.ElideRight, rect.width())
            painter.drawText(QRect(rect.left(), top + i * pitch, rect.width(), pitch), Qt.AlignmentFlag.AlignCenter,
                             shown)
        painter.restore()
        if (index.row(), index.column()) == self.table.selected:
            painter.save()
            pen = QPen(QColor(themes.current().accent))
            pen.setWidth(3)
            painter.setPen(pen)
            painter.drawRect(option.rect.adjusted(1, 1, -2, -2))
            painter.restore()


class CellTable(QTableWidget):
    """A small read-only table of multi-line cells with colour-coded backgrounds.

    One cell is "selected" (outlined by a delegate, not Qt's selection, so
    the background colours stay visible); ``cellClicked`` picks a cell.
    """

    def __init__(self, rows: list[str], cols: list[str], tooltip: str, parent=None):
        super().__init__(len(rows), len(cols), parent)
        self.selected: tuple[int, int] = (-1, -1)
        self._fitted = False
        self.setVerticalHeaderLabels(rows)
        self.setHorizontalHeaderLabels(cols)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setToolTip(tooltip)
        self.setItemDelegate(_FrameDelegate(self))
        for r in range(len(rows)):
            for c in range(len(cols)):
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.setItem(r, c, item)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # the titles at the Latin pitch too (a Chinese title would make the header 5 px taller)
        self.horizontalHeader().setFixedHeight(line_pitch(self.font()) + 8)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def set_cell(self, r: int, c: int, text: str, colour: QColor | None, tooltip: str) -> None:
        """The cell's text, background and tooltip (Qt leaves a role set to the value it holds alone)."""
        item = self.item(r, c)
        item.setText(text)
        item.setBackground(QBrush(colour) if colour is not None else QBrush())
        if item.toolTip() != tooltip:
            # Not drawn: a tooltip's change must not repaint the cell (the item model's dataChanged
            # would), so the view is not told; it reads the tooltip afresh on every hover.
            with signals_blocked(self.model()):
                item.setToolTip(tooltip)

    def set_selected(self, r: int, c: int) -> None:
        if (r, c) != self.selected:
            self.selected = (r, c)
            self.viewport().update()

    def fit_height(self) -> None:
        """As tall as its rows (no scrolling, no empty space); only the first call measures."""
        if self._fitted:
            return
        self._fitted = True
        self.resizeRowsToContents()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no re-measuring per redraw
        height = self.verticalHeader().length() + self.horizontalHeader().height() + 2 * self.frameWidth()
        self.setFixedHeight(height)

    def texts(self) -> list[list[str]]:
        return [[self.item(r, c).text() for c in range(self.columnCount())] for r in range(self.rowCount())]

    def colours(self) -> list[list[str | None]]:
        """Each cell's background colour name (None for none), for tests."""
        out = []
        for r in range(self.rowCount()):
            row = []
            for c in range(self.columnCount()):
                brush = self.item(r, c).background()
                row.append(None if brush.style() == Qt.BrushStyle.NoBrush else brush.color().name())
            out.append(row)
        return out

    def click_cell(self, r: int, c: int):
        """The viewport position of a cell's centre (for tests that click it)."""
        return self.visualRect(self.model().index(r, c)).center()
