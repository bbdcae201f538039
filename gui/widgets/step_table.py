"""The softmax step table: one row per token (s, s/T, exponentials, weights) and a totals row.

The numbers live in a :class:`StepTableModel`, which formats a cell when
Qt asks for it (the visible cells when painting), so an update costs what is
on screen, not rows x columns texts.  Columns are sized to their contents
when the longest text of a column changes, as before; the sizing measures
each column's distinct texts with Qt's own item delegate on a hidden
helper view (see :meth:`StepTable.sizeHintForColumn`).
"""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QStyle,
    QStyleFactory,
    QStyleOptionViewItem,
    QTableView,
)

from gui.model.calculator import STEP_COLUMNS
from gui.model.texts import tr
from gui.theme import ThemedStyle
from gui.widgets.step_table_model import StepTableModel

#: Columns whose total means something: the two exponentials and the weights.
SUMMED = {"e^(s/T)", "e^(s/T - max)", "alpha"}
HEADERS = {
    "s": "s", "s/T": "s/T", "e^(s/T)": "exp(s/T)", "s/T - max": "s/T − max",
    "e^(s/T - max)": "exp(s/T − max)", "alpha": "α", "log alpha": "log α",
}


class _Text:
    """What ``QTableWidget.item(...)`` / ``verticalHeaderItem(...)`` gave the callers: the text, the look."""

    def __init__(self, text: str, alignment: int = 0, font=None):
        self._text, self._alignment, self._font = text, alignment, font

    def text(self) -> str:
        return self._text

    def textAlignment(self) -> int:  # noqa: N802 - Qt's name
        return self._alignment

    def font(self):
        return self._font


class StepTable(QTableView):
    """Read-only table: one row per token and a totals row."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.table_model = StepTableModel([HEADERS[c] for c in STEP_COLUMNS],
                                          [i for i, c in enumerate(STEP_COLUMNS) if c in SUMMED], self)
        self.setModel(self.table_model)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setToolTip(tr("steps.tooltip"))
        self._widths: tuple[int, ...] = ()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.verticalHeader().setDefaultSectionSize(22)
        self._ruler: _Ruler | None = None
        self._measured: dict[int, tuple] = {}  # column -> (what was measured, its width)

    def show_table(self, labels, table) -> None:
        self.table_model.set_table(list(labels), table, tr("steps.total"))
        widths = self.table_model.text_lengths()
        if widths != self._widths:  # measuring columns is the slow part: only when text widths change
            self._widths = widths
            self.resizeColumnsToContents()

    # -- what QTableWidget offered its readers ---------------------------------------------------
    def rowCount(self) -> int:  # noqa: N802 - Qt's name
        return self.table_model.rowCount()

    def columnCount(self) -> int:  # noqa: N802 - Qt's name
        return self.table_model.columnCount()

    def item(self, row: int, column: int) -> _Text | None:
        m = self.table_model
        if not (0 <= row < m.rowCount() and 0 <= column < m.columnCount()):
            return None
        index = m.index(row, column)
        return _Text(m.text(row, column), m.data(index, Qt.ItemDataRole.TextAlignmentRole),
                     m.data(index, Qt.ItemDataRole.FontRole) or QFont())

    def verticalHeaderItem(self, row: int) -> _Text | None:  # noqa: N802 - Qt's name
        return _Text(self.table_model.label(row)) if 0 <= row < self.rowCount() else None

    def horizontalHeaderItem(self, column: int) -> _Text | None:  # noqa: N802 - Qt's name
        return _Text(HEADERS[STEP_COLUMNS[column]]) if 0 <= column < self.columnCount() else None

    def copy(self) -> None:
        m = self.table_model
        indexes = self.selectedIndexes() or [
            m.index(r, c) for r in range(m.rowCount()) for c in range(m.columnCount())
        ]
        rows = sorted({i.row() for i in indexes})
        cols = sorted({i.column() for i in indexes})
        lines = ["\t".join(m.text(r, c) for c in cols) for r in rows]
        QGuiApplication.clipboard().setText("\n".join(lines) + "\n")

    # -- sizing the columns --------------------------------------------------------------------
    def sizeHintForColumn(self, column: int) -> int:  # noqa: N802 - Qt's name
        """QTableView's answer, reached without a Python call per cell and role.

        Qt takes the widest item-delegate size hint over the rows it samples
        (all rows up to the header's resize precision, else the visible ones and
        then alternately above and below them), plus one for the grid.  The body
        cells differ only by their text: their distinct texts are measured in one
        call on a hidden view of the same font and of the base style the
        application's style defers item sizes to; the bold totals row with this
        view's own delegate.  Anything else (a style sheet, a custom style,
        hidden or moved rows) takes QTableView's own way.
        """
        style = self._measuring_style()
        m = self.table_model
        if style is None or self.verticalHeader().hiddenSectionCount() or self.verticalHeader().sectionsMoved():
            return super().sizeHintForColumn(column)
        self.ensurePolished()
        first, last = self._sampled_rows()
        n = m.body_rows
        texts = m.body_texts(column, first, min(last + 1, n)) if first < n else []
        key = (frozenset(texts), self.font().key(), style, self.wordWrap(), self.textElideMode(),
               self.iconSize().width(), self.iconSize().height(), self.logicalDpiX(), self.logicalDpiY())
        cached = self._measured.get(column)
        if cached is not None and cached[0] == key:
            hint = cached[1]
        else:
            hint = self._ruler_for(style).width(key[0], self)
            self._measured[column] = (key, hint)
        if first <= n <= last:
            hint = max(hint, self._delegate_width(n, column))
        return hint + 1 if self.showGrid() else hint

    def _measuring_style(self) -> str | None:
        """The name of the C++ style that sizes this view's items, or None when that is not known."""
        app = QApplication.instance()
        if app is None or app.styleSheet():
            return None
        widget = self
        while widget is not None:
            if widget.styleSheet():
                return None
            widget = widget.parentWidget()
        style = self.style()
        if isinstance(style, ThemedStyle):  # its item sizes are Fusion's except in list widgets
            style = style.baseStyle()
        if type(style).__module__.split(".")[0] != "PySide6" or not isinstance(style, QStyle):
            return None  # a Python style may size items its own way
        name = style.name()
        return name if name and name.lower() in {k.lower() for k in QStyleFactory.keys()} else None

    def _ruler_for(self, style: str) -> _Ruler:
        if self._ruler is None or self._ruler.style_name != style:
            self._ruler = _Ruler(style)
        return self._ruler

    def _sampled_rows(self) -> tuple[int, int]:
        """The rows QTableView.sizeHintForColumn samples: always one range, ``first..last``."""
        rows = self.table_model.rowCount()
        if not rows:
            return 0, -1
        precision = self.horizontalHeader().resizeContentsPrecision()
        header = self.verticalHeader()
        top = max(0, header.visualIndexAt(0))
        bottom = header.visualIndexAt(self.viewport().height())
        if not self.isVisible() or bottom == -1:
            bottom = rows - 1
        done = bottom - top + 1
        if precision > 0 and done >= precision:
            return top, top + precision - 1
        if precision == 0:
            return top, bottom
        last = rows - 1
        if precision < 0 or precision >= rows:  # the loop below would take every row
            return 0, last
        first, end = top, bottom
        while done != precision and (first > 0 or end < last):
            if (done % 2 and first > 0) or end == last:
                first -= 1
            else:
                end += 1
            done += 1
        return first, end

    def _delegate_width(self, row: int, column: int) -> int:
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        index = self.table_model.index(row, column)
        return self.itemDelegateForIndex(index).sizeHint(option, index).width()


class _Ruler:
    """A hidden one-column table of plain texts in a style of its own: the widest item size hint."""

    def __init__(self, style_name: str):
        self.style_name = style_name
        self.view = QTableView()
        self.style = QStyleFactory.create(style_name)
        self.style.setParent(self.view)
        self.view.setStyle(self.style)
        self.model = QStringListModel(self.view)
        self.view.setModel(self.model)
        self.view.setShowGrid(False)
        self.view.horizontalHeader().setResizeContentsPrecision(-1)  # every row

    def width(self, texts, like: QTableView) -> int:
        if not texts:
            return 0
        view = self.view
        if view.font() != like.font():
            view.setFont(like.font())
        view.setWordWrap(like.wordWrap())
        view.setTextElideMode(like.textElideMode())
        view.setIconSize(like.iconSize())
        self.model.setStringList(list(texts))
        return view.sizeHintForColumn(0)
