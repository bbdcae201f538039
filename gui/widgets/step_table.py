"""The softmax step table: one row per token (s, s/T, exponentials, weights) and a totals row.

The table keeps the raw numbers and writes a row's texts into its cells only
when the row can be seen (on an update, the rows on screen; when painting,
the rows painted; when a reader asks, the rows asked for; a short table
writes them all), so an update costs what is on screen, not rows x columns
texts.  The cells, fonts,
alignment and paint are the QTableWidget's own, as before.  A column is
sized to its contents when its own longest text changes length (until
December 2026 every column was, whenever one did: at n = 512 that measured
all seven columns on most steps of a dₖ drag); long tables measure each column's distinct texts on a hidden helper
view with Qt's own item delegate (see :meth:`StepTable.sizeHintForColumn`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QStyle,
    QStyleFactory,
    QStyleOptionViewItem,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
)

from gui.format import fmt
from gui.model.calculator import STEP_COLUMNS
from gui.model.texts import tr
from gui.theme import ThemedStyle
from gui.widgets.step_table_model import format_many, longest_texts

#: Columns whose total means something: the two exponentials and the weights.
SUMMED = {"e^(s/T)", "e^(s/T - max)", "alpha"}
HEADERS = {
    "s": "s", "s/T": "s/T", "e^(s/T)": "exp(s/T)", "s/T - max": "s/T − max",
    "e^(s/T - max)": "exp(s/T − max)", "alpha": "α", "log alpha": "log α",
}
#: Up to this many sampled rows a column is sized Qt's own way (its rows' texts written first);
#: up to DIRECT when the style is a C++ one (then Qt's way makes no Python call per cell).
SMALL = 16
DIRECT = 256

try:  # accessibility clients read every cell, not only the painted ones
    from PySide6.QtGui import QAccessible

    def _accessible() -> bool:
        return QAccessible.isActive()
except ImportError:  # pragma: no cover - a Qt without accessibility
    def _accessible() -> bool:
        return False


class StepTable(QTableWidget):
    """Read-only table: one row per token and a totals row."""

    def __init__(self, parent=None):
        super().__init__(0, len(STEP_COLUMNS), parent)
        self.setHorizontalHeaderLabels([HEADERS[c] for c in STEP_COLUMNS])
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setToolTip(tr("steps.tooltip"))
        self._labels: list[str] = []
        self._widths: tuple[int, ...] = ()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.verticalHeader().setDefaultSectionSize(22)
        self._values = np.zeros((0, len(STEP_COLUMNS)))
        self._stale = np.zeros(0, dtype=bool)  # body rows whose cells do not hold their texts yet
        self._ruler: _Ruler | None = None
        self._measured: dict[int, tuple] = {}  # column -> (what was measured, its width)
        #: cells formatted so far (tests read it: only what is seen or asked is formatted)
        self.formatted = 0

    def show_table(self, labels, table) -> None:
        values = np.array(table, dtype=float)
        n = len(labels)
        if values.shape != (n, len(STEP_COLUMNS)):
            raise ValueError(f"a table of {n} x {len(STEP_COLUMNS)} numbers, not {values.shape}")
        if self.rowCount() != n + 1:
            self.setRowCount(n + 1)
            for r in range(n + 1):
                for c in range(len(STEP_COLUMNS)):
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    if r == n:
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                    self.setItem(r, c, item)
            self._stale = np.ones(n, dtype=bool)
        else:
            old = self._values
            with np.errstate(invalid="ignore"):
                same = (values == old) | (np.isnan(values) & np.isnan(old))
            self._stale |= ~same.all(axis=1)
        self._values = values
        labels = [*labels, tr("steps.total")]
        if labels != self._labels:
            self._labels = labels
            self.setVerticalHeaderLabels(labels)
        totals = [fmt(values[:, c].sum()) if name in SUMMED else "" for c, name in enumerate(STEP_COLUMNS)]
        self._write(n, totals)
        if n <= SMALL:  # a short table: every row written now, as cheap as the bookkeeping
            cols = len(STEP_COLUMNS)
            texts = format_many(values)
            self._write_rows(np.arange(n), texts)
            longest = [max((len(t) for t in texts[c::cols]), default=0) for c in range(cols)]
        else:
            if _accessible():
                self.fill()
            else:
                self._fill_visible()
            longest = longest_texts(values)
        widths = tuple(max(b, len(t)) for b, t in zip(longest, totals))
        if widths != self._widths:  # measuring columns is the slow part: only the columns whose texts grew or shrank
            old, self._widths = self._widths, widths
            if len(old) != len(widths):
                self.resizeColumnsToContents()
            else:
                for c in (c for c, (a, b) in enumerate(zip(old, widths)) if a != b):
                    self.resizeColumnToContents(c)

    # -- writing the rows' texts -----------------------------------------------------------------
    def _write(self, row: int, texts) -> None:
        for c, text in enumerate(texts):
            item = self.item(row, c)
            if item.text() != text:
                item.setText(text)

    def fill(self, first: int = 0, last: int | None = None) -> None:
        """Write the texts of the body rows first..last (all by default) that do not hold them yet."""
        if not self._stale.any():
            return
        n = self._stale.size
        last = n - 1 if last is None else min(last, n - 1)
        first = max(first, 0)
        if first > last:
            return
        rows = first + np.flatnonzero(self._stale[first:last + 1])
        if rows.size:
            self._write_rows(rows, format_many(self._values[rows]))

    def _write_rows(self, rows: np.ndarray, texts: list[str]) -> None:
        """Write ``texts`` (row-major, a row of texts per entry of ``rows``) into those rows."""
        self.formatted += len(texts)
        cols = len(STEP_COLUMNS)
        for k, r in enumerate(rows.tolist()):
            for c in range(cols):
                item = QTableWidget.item(self, r, c)
                text = texts[k * cols + c]
                if item.text() != text:
                    item.setText(text)
        self._stale[rows] = False

    def _visible_rows(self, top: int, bottom: int) -> tuple[int, int]:
        header = self.verticalHeader()
        first = header.logicalIndexAt(top)
        if first < 0:  # below the last row
            return 0, -1
        last = header.logicalIndexAt(bottom)
        return first, (self.rowCount() - 1 if last < 0 else last)

    def _fill_visible(self) -> None:
        if self._stale.any():
            self.fill(*self._visible_rows(0, self.viewport().height()))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self._stale.any():
            rect = event.rect()
            model = self.model()
            blocked = model.blockSignals(True)  # being painted now: no repaint to ask for
            try:
                self.fill(*self._visible_rows(rect.top(), rect.bottom()))
            finally:
                model.blockSignals(blocked)
        super().paintEvent(event)

    # -- readers that may reach rows not seen yet --------------------------------------------
    def item(self, row: int, column: int):
        if 0 <= row < self._stale.size and self._stale[row]:
            self.fill(row, row)
        return super().item(row, column)

    def currentItem(self):  # noqa: N802 - Qt's name
        return self.item(self.currentRow(), self.currentColumn())

    def itemAt(self, *pos):  # noqa: N802 - Qt's name
        found = super().itemAt(*pos)
        return None if found is None else self.item(found.row(), found.column())

    def selectedItems(self):  # noqa: N802 - Qt's name
        for row in sorted({i.row() for i in self.selectedIndexes()}):
            self.fill(row, row)
        return super().selectedItems()

    def findItems(self, text: str, flags):  # noqa: N802 - Qt's name
        self.fill()
        return super().findItems(text, flags)

    def keyboardSearch(self, search: str) -> None:  # noqa: N802 - Qt's name
        self.fill()
        super().keyboardSearch(search)

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if event.matches(QKeySequence.StandardKey.Copy) and self.currentIndex().isValid():
            row = self.currentIndex().row()
            self.fill(row, row)
        super().keyPressEvent(event)

    def sizeHintForRow(self, row: int) -> int:  # noqa: N802 - Qt's name
        self.fill(row, row)
        return super().sizeHintForRow(row)

    def copy(self) -> None:
        indexes = self.selectedIndexes() or [
            self.model().index(r, c) for r in range(self.rowCount()) for c in range(self.columnCount())
        ]
        rows = sorted({i.row() for i in indexes})
        cols = sorted({i.column() for i in indexes})
        for r in rows:
            self.fill(r, r)
        lines = ["\t".join(self.item(r, c).text() for c in cols) for r in rows]
        QGuiApplication.clipboard().setText("\n".join(lines) + "\n")

    # -- sizing the columns --------------------------------------------------------------------
    def sizeHintForColumn(self, column: int) -> int:  # noqa: N802 - Qt's name
        """QTableView's answer, without writing every sampled row's texts first.

        Qt takes the widest item-delegate size hint over the rows it samples
        (all rows up to the header's resize precision, else the visible ones and
        then alternately above and below them), plus one for the grid.  A long
        table's body cells differ only by their text: their distinct texts are
        measured in one call on a hidden view of the same font and of the C++
        style the application's style defers item sizes to; the bold totals row
        with this view's own delegate.  A short table (or one of a few hundred
        rows in a C++ style), a style sheet, a custom style, hidden or moved
        rows: the rows are written and Qt measures them.
        """
        n = self._stale.size
        if n < SMALL:  # every row is sampled, and written already
            self.fill()
            return super().sizeHintForColumn(column)
        first, last = self._sampled_rows()
        style = self._measuring_style()
        header = self.verticalHeader()
        own = type(self.style()).__module__.split(".")[0] == "PySide6"  # Qt's way runs in C++ alone
        if (style is None or last - first + 1 <= (DIRECT if own else SMALL) or header.hiddenSectionCount()
                or header.sectionsMoved()):
            self.fill(first, last)
            return super().sizeHintForColumn(column)
        self.ensurePolished()
        stop = min(last + 1, n)
        texts = frozenset(format_many(self._values[first:stop, column])) if first < n else frozenset()
        self.formatted += max(0, stop - first)
        key = (texts, self.font().key(), style, self.wordWrap(), self.textElideMode(),
               self.iconSize().width(), self.iconSize().height(), self.logicalDpiX(), self.logicalDpiY())
        cached = self._measured.get(column)
        if cached is not None and cached[0] == key:
            hint = cached[1]
        else:
            hint = self._ruler_for(style).width(texts, self)
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
        return name if name and name.lower() in _style_keys() else None

    def _ruler_for(self, style: str) -> _Ruler:
        if self._ruler is None or self._ruler.style_name != style:
            self._ruler = _Ruler(style)
        return self._ruler

    def _sampled_rows(self) -> tuple[int, int]:
        """The rows QTableView.sizeHintForColumn samples: always one range, ``first..last``."""
        rows = self.rowCount()
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
        index = self.model().index(row, column)
        return self.itemDelegateForIndex(index).sizeHint(option, index).width()


_KEYS: set[str] = set()


def _style_keys() -> set[str]:
    if not _KEYS:
        _KEYS.update(k.lower() for k in QStyleFactory.keys())
    return _KEYS


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
        if view.wordWrap() != like.wordWrap():
            view.setWordWrap(like.wordWrap())
        if view.textElideMode() != like.textElideMode():
            view.setTextElideMode(like.textElideMode())
        if view.iconSize() != like.iconSize():
            view.setIconSize(like.iconSize())
        self.model.setStringList(list(texts))
        return view.sizeHintForColumn(0)
