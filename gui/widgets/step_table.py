"""The softmax step table: one row per token (s, s/T, exponentials, weights) and a totals row."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from gui.format import fmt
from gui.model.calculator import STEP_COLUMNS
from gui.model.texts import tr

#: Columns whose total means something: the two exponentials and the weights.
SUMMED = {"e^(s/T)", "e^(s/T - max)", "alpha"}
HEADERS = {
    "s": "s", "s/T": "s/T", "e^(s/T)": "exp(s/T)", "s/T - max": "s/T − max",
    "e^(s/T - max)": "exp(s/T − max)", "alpha": "α", "log alpha": "log α",
}


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

    def show_table(self, labels, table) -> None:
        n = len(labels)
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
        labels = [*labels, tr("steps.total")]
        if labels != self._labels:
            self._labels = labels
            self.setVerticalHeaderLabels(labels)
        texts = [[fmt(v) for v in row] for row in table]
        texts.append([fmt(table[:, c].sum()) if name in SUMMED else ""
                      for c, name in enumerate(STEP_COLUMNS)])
        for r, row in enumerate(texts):
            for c, text in enumerate(row):
                item = self.item(r, c)
                if item.text() != text:
                    item.setText(text)
        widths = tuple(max(len(row[c]) for row in texts) for c in range(len(STEP_COLUMNS)))
        if widths != self._widths:  # measuring columns is the slow part: only when text widths change
            self._widths = widths
            self.resizeColumnsToContents()

    def copy(self) -> None:
        indexes = self.selectedIndexes() or [
            self.model().index(r, c) for r in range(self.rowCount()) for c in range(self.columnCount())
        ]
        rows = sorted({i.row() for i in indexes})
        cols = sorted({i.column() for i in indexes})
        lines = ["\t".join(self.item(r, c).text() for c in cols) for r in rows]
        QGuiApplication.clipboard().setText("\n".join(lines) + "\n")
