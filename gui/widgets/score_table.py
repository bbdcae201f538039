"""The editable table of labelled scores, bound to the shared ScoreRow."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gui.binding import connect_while_alive
from gui.model.scores import MAX_SCORES, Score, ScoreRow, default_label, parse_score
from gui.model.texts import presets, tr
from gui.widgets.cell_table import ValidatedTableModel, paste_report, paste_text, split_tsv, strip_header

LABEL, VALUE = 0, 1


def _show(v: float) -> str:
    """The shortest text that reads back as the same float (2.0, -inf, nan)."""
    return repr(float(v))


class ScoreTableModel(ValidatedTableModel):
    """Two columns (label, score) over a ScoreRow; refused scores stay marked (see ValidatedTableModel).

    New rows that have no good value yet (a paste of junk past the end) are
    *pending*: they are shown under the row's entries (red, with the typed
    text) but are not in the ScoreRow, so no view computes with a made-up
    0.0.  ``pending`` holds ``[label, value or None]`` for the table rows
    after ``len(row)``; the leading ones that hold a good value join the row
    as soon as every row above them does.
    """

    def __init__(self, row: ScoreRow, parent=None):
        super().__init__(parent)
        self.row = row
        self._n = len(row)
        self.pending: list[list] = []  # [label, value | None] for table rows len(row)..
        self._own_change = False  # set while this model changes the row itself (it resets the view)
        connect_while_alive(self, row.events.entries, self._entries_changed)

    # -- Qt model API ----------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.row) + len(self.pending)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else 2

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return tr("scores.col.label") if section == LABEL else tr("scores.col.value")
        return str(section + 1)

    # -- the validated cells ------------------------------------------------------
    def is_number(self, col: int) -> bool:
        return col == VALUE

    def _cells(self, row: int) -> tuple[str, float | None]:
        """(label, value) of a table row; the value of a pending row may be None."""
        n = len(self.row)
        if row < n:
            e = self.row.entries[row]
            return e.label, e.value
        label, value = self.pending[row - n]
        return label, value

    def cell_text(self, row: int, col: int, *, edit: bool) -> str:
        label, value = self._cells(row)
        return label if col == LABEL else ("" if value is None else _show(value))

    def parse(self, text: str) -> tuple[float, str]:
        return parse_score(text)

    def commit(self, row: int, col: int, value: float) -> None:
        n = len(self.row)
        if row < n:
            self.row.set_value(row, value)
            return
        self.pending[row - n][1] = float(value)
        self._take_ready()

    def set_text(self, row: int, col: int, text: str) -> None:
        n = len(self.row)
        if row < n:
            self.row.set_label(row, text)
        else:
            self.pending[row - n][0] = str(text)
            self.cell_changed(row, col)

    def invalid_text(self, row: int, col: int, reason: str) -> str:
        value = self._cells(row)[1]
        if row >= len(self.row):
            return tr("scores.pending_invalid", reason=reason)
        return tr("scores.invalid", reason=reason, value=_show(value))

    def note_text(self, row: int, col: int, note: str) -> str:
        return f"{self._cells(row)[0]}: {note}"

    # -- pending rows ----------------------------------------------------------------
    def pending_note(self) -> str:
        """What the status bar says while rows wait for a good value ("" when none do)."""
        return tr("scores.pending", count=len(self.pending)) if self.pending else ""

    def _take_ready(self) -> None:
        """Move the leading pending rows that hold a good value into the row (table rows keep their place)."""
        ready = 0
        while ready < len(self.pending) and self.pending[ready][1] is not None:
            ready += 1
        if ready:
            moved, self.pending = self.pending[:ready], self.pending[ready:]
            self._own_change = True
            try:
                self.row.set_entries(self.row.entries + tuple(Score(lb, v) for lb, v in moved))
            finally:
                self._own_change = False
            self._n = len(self.row)
            self.refresh_all()
        if self.pending:
            self.message.emit(self.pending_note())

    def drop_pending(self, rows: list[int]) -> list[int]:
        """Remove the pending rows among table ``rows``; returns the other (row entry) indices."""
        n = len(self.row)
        drop = {r - n for r in rows if r >= n}
        if drop:
            self.beginResetModel()
            self.pending = [p for i, p in enumerate(self.pending) if i not in drop]
            self.invalid = {cell: v for cell, v in self.invalid.items() if cell[0] < n}
            self.endResetModel()
        return [r for r in rows if r < n]

    def _entries_changed(self, new: tuple[Score, ...], old: tuple[Score, ...]) -> None:
        if self._own_change:
            return
        if len(new) != self._n:
            # a new table; pending rows stay under it, with their marks
            shift = len(new) - self._n
            kept = {(r + shift, c): v for (r, c), v in self.invalid.items() if r >= self._n}
            self.reset_shape(lambda: setattr(self, "_n", len(new)))
            self.mark_invalid(kept)
            return
        for r, (a, b) in enumerate(zip(new, old)):
            if a.value != b.value:
                self.invalid.pop((r, VALUE), None)
        self.refresh_all()

    # -- clipboard -----------------------------------------------------------------
    def to_tsv(self, rows: list[int], cols: list[int]) -> str:
        lines = []
        for r in rows:
            cells = [self.cell_text(r, c, edit=True) for c in cols]
            lines.append("\t".join(cells))
        return "\n".join(lines) + "\n"

    def paste_tsv(self, text: str, start_row: int, start_col: int) -> tuple[int, int]:
        """Paste a column or a tab-separated block; returns (pasted, invalid).

        Lines of one cell fill the column the paste starts in; lines of two or
        more cells read as (label, score) from the label column or as scores
        from the score column.  A first line that is not a number, above lines
        that mostly are, is a header and is skipped.
        Rows are added as needed; the whole paste is one change (one undo).
        A new row whose score is refused stays pending (see the class), with
        every new row after it, and the status bar says so.
        """
        lines = split_tsv(text)
        if not lines:
            return 0, 0

        def value_cell(cells: list[str]) -> str | None:
            if start_col == LABEL and len(cells) >= 2:
                return cells[1]
            if start_col == VALUE:
                return cells[0]
            return None

        lines = strip_header(lines, self.parses, lambda cells: [] if value_cell(cells) is None else [value_cell(cells)])
        rows = max(start_row + len(lines), len(self.row) + len(self.pending))
        if rows > MAX_SCORES:  # refused whole, before anything changes
            raise ValueError(tr("scores.paste.too_many", rows=rows, limit=MAX_SCORES))

        items = [[e.label, e.value] for e in self.row.entries] + [list(p) for p in self.pending]
        bad: dict[tuple[int, int], tuple[str, str]] = {}
        for k, cells in enumerate(lines):
            r = start_row + k
            text = value_cell(cells)
            if r >= len(items):
                items.append([default_label(r + 1), 0.0 if text is None else None])
            if start_col == LABEL:
                items[r][0] = cells[0].strip()
            if text is not None:
                try:
                    items[r][1] = parse_score(text)[0]
                    self.invalid.pop((r, VALUE), None)
                except ValueError as exc:
                    bad[(r, VALUE)] = (text, str(exc))
        good = next((i for i, (_, v) in enumerate(items) if v is None), len(items))
        entries = tuple(Score(lb, v) for lb, v in items[:good])
        changed = {r for r, (a, b) in enumerate(zip(entries, self.row.entries)) if a.value != b.value}
        keep = {cell: v for cell, v in self.invalid.items() if cell[0] not in changed}
        self.beginResetModel()
        self._own_change = True
        try:
            self.row.set_entries(entries)
        finally:
            self._own_change = False
        self.pending = [list(p) for p in items[good:]]
        self._n = len(self.row)
        self.invalid = {**{c: v for c, v in keep.items() if c[0] < len(items)}, **bad}
        self.endResetModel()
        return len(lines), len(bad)


class ScoreEditor(QWidget):
    """The score table with its row buttons and the preset menu."""

    message = Signal(str)

    def __init__(self, row: ScoreRow, parent=None):
        super().__init__(parent)
        self.row = row
        self.model = ScoreTableModel(row, self)
        self.model.message.connect(self.message)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setToolTip(tr("scores.table.tooltip"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setDefaultSectionSize(24)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )

        self.presets = QComboBox()
        self.presets.setToolTip(tr("scores.preset.tooltip"))
        self.presets.addItem(tr("scores.preset.choose"))
        for name, values in presets():
            self.presets.addItem(name, values)
        self.presets.activated.connect(self._preset_chosen)

        self.buttons: dict[str, QPushButton] = {}
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for key, slot in (("add", self.add_row), ("remove", self.remove_rows),
                          ("up", lambda: self.move_row(-1)), ("down", lambda: self.move_row(+1))):
            b = QPushButton(tr(f"scores.{key}"))
            b.setToolTip(tr(f"scores.{key}.tooltip"))
            b.setMinimumWidth(b.fontMetrics().horizontalAdvance(b.text()) + 16)  # not the style's 80 px
            b.clicked.connect(slot)
            bar.addWidget(b)
            self.buttons[key] = b
        bar.addStretch(1)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel(tr("scores.preset")))
        top.addWidget(self.presets, 1)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        lay.addLayout(bar)
        connect_while_alive(self, row.events.entries, self._update_buttons)
        self._update_buttons()

    def _update_buttons(self, *_args) -> None:
        self.buttons["remove"].setEnabled(len(self.row) > 1)

    def _selected_rows(self) -> list[int]:
        rows = {i.row() for i in self.table.selectionModel().selectedIndexes()}
        if not rows and self.table.currentIndex().isValid():
            rows = {self.table.currentIndex().row()}
        return sorted(rows)

    def _preset_chosen(self, index: int) -> None:
        values = self.presets.itemData(index)
        if values is not None:
            self.row.set_values(values)
        self.presets.setCurrentIndex(0)

    def add_row(self) -> None:
        rows = self._selected_rows()
        at = min(rows[-1] + 1, len(self.row)) if rows else len(self.row)  # pending rows stay last
        if len(self.row) >= MAX_SCORES:
            self.message.emit(tr("scores.add.too_many", limit=MAX_SCORES))
            return
        self.row.insert(at, 0.0)
        self.table.setCurrentIndex(self.model.index(at, VALUE))

    def remove_rows(self) -> None:
        rows = self._selected_rows() or [self.model.rowCount() - 1]
        rows = self.model.drop_pending(rows)  # pending rows go first; they are not in the row
        if not rows:
            return
        try:
            self.row.remove(rows)
        except ValueError:
            self.message.emit(tr("scores.last_row"))

    def move_row(self, offset: int) -> None:
        rows = self._selected_rows()
        if len(rows) != 1 or rows[0] >= len(self.row):
            return  # a pending row has no place in the row to move to yet
        target = self.row.move(rows[0], offset)
        col = max(self.table.currentIndex().column(), 0)
        self.table.setCurrentIndex(self.model.index(target, col))

    # -- clipboard (the Edit menu calls these on the focused editor) -------------
    def copy(self) -> None:
        indexes = self.table.selectionModel().selectedIndexes()
        if indexes:
            rows = sorted({i.row() for i in indexes})
            cols = sorted({i.column() for i in indexes})
        else:
            rows, cols = list(range(len(self.row))), [LABEL, VALUE]
        QGuiApplication.clipboard().setText(self.model.to_tsv(rows, cols))

    def paste(self, text: str | None = None) -> None:
        cur = self.table.currentIndex()
        start_row = cur.row() if cur.isValid() else 0
        start_col = cur.column() if cur.isValid() else VALUE
        try:
            count, bad = self.model.paste_tsv(paste_text(text), start_row, start_col)
        except ValueError as exc:  # more rows than MAX_SCORES: nothing changed
            self.message.emit(str(exc))
            return
        self.message.emit(" ".join(filter(None, [paste_report("scores", count, bad), self.model.pending_note()])))
