"""The tables source's editable Q, K and V tables (validated cells, TSV paste)."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QTableView, QTabWidget

from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.attention import AttentionModel
from gui.model.scores import parse_score
from gui.model.texts import tr
from gui.widgets.cell_table import ValidatedTableModel, paste_report, paste_text, split_tsv, strip_header


def parse_entry(text: str) -> tuple[float, str]:
    """A table entry: a finite number (Q, K and V must be finite, as in a loaded file).

    Reading the text is the score table's :func:`parse_score`; only the
    finiteness rule is the tables' own.
    """
    value, _note = parse_score(text)
    if not math.isfinite(value):
        raise ValueError(tr("attention.table.not_finite", text=text.strip()))
    return value, ""


class MatrixTableModel(ValidatedTableModel):
    """One of the tables source's arrays (rows = tokens, columns = d) over the view model."""

    def __init__(self, model: AttentionModel, which: str, parent=None):
        super().__init__(parent)
        self.model, self.which = model, which
        self._shape = self.array().shape

    def array(self) -> np.ndarray:
        tables = self.model.tables
        return np.zeros((0, 0)) if tables is None else getattr(tables, self.which)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shape[0]

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shape[1]

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return f"d{section + 1}" if orientation == Qt.Orientation.Horizontal else str(section + 1)

    # -- the validated cells ------------------------------------------------------------
    def cell_text(self, row: int, col: int, *, edit: bool) -> str:
        value = float(self.array()[row, col])
        return repr(value) if edit else fmt(value, 3)

    def parse(self, text: str) -> tuple[float, str]:
        return parse_entry(text)

    def commit(self, row: int, col: int, value: float) -> None:
        self.model.tables = self.model.start_tables().with_value(self.which, row, col, value)

    def invalid_text(self, row: int, col: int, reason: str) -> str:
        return tr("attention.table.invalid", reason=reason, value=repr(float(self.array()[row, col])))

    def good_tooltip(self, row: int, col: int) -> str:
        return repr(float(self.array()[row, col]))

    def paste_tsv(self, text: str, row: int, col: int) -> tuple[int, int]:
        """Paste a tab-separated block (a spreadsheet's copy) at (row, col); cells beyond the
        table are dropped; a header line is skipped (see strip_header).  One change.
        Returns (cells pasted, invalid cells)."""
        lines = strip_header(split_tsv(text), self.parses)
        if not lines:
            return 0, 0
        n, m = self._shape
        width = max(len(cells) for cells in lines)
        block = np.zeros((len(lines), width))
        good = np.zeros(block.shape, dtype=bool)
        bad: dict[tuple[int, int], tuple[str, str]] = {}
        count = 0
        for i, cells in enumerate(lines):
            for j, cell in enumerate(cells):
                if row + i >= n or col + j >= m:
                    continue
                count += 1
                try:
                    block[i, j] = parse_entry(cell)[0]
                    good[i, j] = True
                    self.invalid.pop((row + i, col + j), None)
                except ValueError as exc:
                    bad[(row + i, col + j)] = (cell, str(exc))
        self.invalid.update(bad)
        self.model.tables = self.model.start_tables().with_block(self.which, row, col, block, good)
        self.refresh()
        return count, len(bad)

    def refresh(self) -> None:
        """Follow the model's arrays (a new shape resets the table and its red cells)."""
        shape = self.array().shape
        if shape != self._shape:
            self.reset_shape(lambda: setattr(self, "_shape", shape))
        else:
            self.refresh_all()


class MatrixTable(QTableView):
    """An editable Q, K or V table; paste() (Edit ▸ Paste, Ctrl+V) takes a TSV block."""

    message = Signal(str)

    def __init__(self, model: AttentionModel, which: str):
        super().__init__()
        self.setObjectName(f"attention.table.{which}")
        self.table_model = MatrixTableModel(model, which, self)
        self.table_model.message.connect(self.message)
        self.setModel(self.table_model)
        self.horizontalHeader().setDefaultSectionSize(52)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setToolTip(tr("attention.table.tooltip"))

    def paste(self, text: str | None = None) -> None:
        cur = self.currentIndex()
        row, col = (cur.row(), cur.column()) if cur.isValid() else (0, 0)
        count, bad = self.table_model.paste_tsv(paste_text(text), row, col)
        self.message.emit(paste_report("attention.table", count, bad))

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Paste):
            self.paste()
            event.accept()
            return
        super().keyPressEvent(event)


class QkvTables(QTabWidget):
    """The Q, K and V tables in tabs, following the model's tables."""

    message = Signal(str)

    def __init__(self, model: AttentionModel):
        super().__init__()
        self.setObjectName("attention.tables")
        self.tables: dict[str, MatrixTable] = {}
        for which in ("q", "k", "v"):
            table = MatrixTable(model, which)
            table.message.connect(self.message)
            self.tables[which] = table
            self.addTab(table, which.upper())
        self.setMinimumHeight(180)
        connect_while_alive(self, model.events.tables, self._tables_changed)

    def _tables_changed(self, *_args) -> None:
        for table in self.tables.values():
            table.table_model.refresh()
