"""The editable table of labelled scores, bound to the shared ScoreRow."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
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

from gui import theme as themes
from gui.binding import connect_while_alive
from gui.model.scores import Score, ScoreRow, parse_score
from gui.model.texts import presets, tr

LABEL, VALUE = 0, 1


def _show(v: float) -> str:
    """The shortest text that reads back as the same float (2.0, -inf, nan)."""
    return repr(float(v))


class ScoreTableModel(QAbstractTableModel):
    """Two columns (label, score) over a ScoreRow.

    A cell that does not parse keeps the row's last good value; the cell
    shows what was typed, in red, with the reason as its tooltip, until a
    good value replaces it.
    """

    message = Signal(str)

    def __init__(self, row: ScoreRow, parent=None):
        super().__init__(parent)
        self.row = row
        self._n = len(row)
        self.invalid: dict[int, tuple[str, str]] = {}  # row -> (typed text, reason)
        connect_while_alive(self, row.events.entries, self._entries_changed)

    # -- Qt model API ----------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.row)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else 2

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return tr("scores.col.label") if section == LABEL else tr("scores.col.value")
        return str(section + 1)

    def flags(self, index):
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        entry = self.row.entries[r]
        bad = self.invalid.get(r) if c == VALUE else None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if c == LABEL:
                return entry.label
            return bad[0] if bad else _show(entry.value)
        if role == Qt.ItemDataRole.BackgroundRole and bad:
            return QBrush(QColor(themes.current().invalid))
        if role == Qt.ItemDataRole.ToolTipRole and bad:
            return tr("scores.invalid", reason=bad[1], value=_show(entry.value))
        if role == Qt.ItemDataRole.TextAlignmentRole and c == VALUE:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        r, c = index.row(), index.column()
        if c == LABEL:
            self.row.set_label(r, str(value))
            return True
        self.set_cell_text(r, str(value))
        return True

    # -- editing -------------------------------------------------------------------
    def set_cell_text(self, r: int, text: str) -> bool:
        """Parse what the user typed into row ``r``; returns whether it was a number."""
        try:
            number, note = parse_score(text)
        except ValueError as exc:
            self.invalid[r] = (text, str(exc))
            self._cell_changed(r)
            self.message.emit(tr("scores.invalid", reason=exc, value=_show(self.row.entries[r].value)))
            return False
        self.invalid.pop(r, None)
        self.row.set_value(r, number)
        self._cell_changed(r)
        if note:
            self.message.emit(f"{self.row.entries[r].label}: {note}")
        return True

    def _cell_changed(self, r: int) -> None:
        idx = self.index(r, VALUE)
        self.dataChanged.emit(idx, idx)

    def _entries_changed(self, new: tuple[Score, ...], old: tuple[Score, ...]) -> None:
        if len(new) != self._n:
            self.beginResetModel()
            self._n = len(new)
            self.invalid.clear()
            self.endResetModel()
            return
        for r, (a, b) in enumerate(zip(new, old)):
            if a.value != b.value:
                self.invalid.pop(r, None)
        self.dataChanged.emit(self.index(0, 0), self.index(self._n - 1, 1))

    # -- clipboard -----------------------------------------------------------------
    def to_tsv(self, rows: list[int], cols: list[int]) -> str:
        lines = []
        for r in rows:
            e = self.row.entries[r]
            cells = [e.label if c == LABEL else _show(e.value) for c in cols]
            lines.append("\t".join(cells))
        return "\n".join(lines) + "\n"

    def paste_tsv(self, text: str, start_row: int, start_col: int) -> tuple[int, int]:
        """Paste a column or a tab-separated block; returns (pasted, invalid).

        Lines of one cell fill the column the paste starts in; lines of two or
        more cells read as (label, score) from the label column or as scores
        from the score column.  A first line that is not a number, above lines
        that mostly are, is a header and is skipped.
        Rows are added as needed; the whole paste is one change (one undo).
        """
        lines = [ln.split("\t") for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        lines = [cells for cells in lines if any(c.strip() for c in cells)]
        if not lines:
            return 0, 0

        def value_cell(cells: list[str]) -> str | None:
            if start_col == LABEL and len(cells) >= 2:
                return cells[1]
            if start_col == VALUE:
                return cells[0]
            return None

        def parses(cell: str | None) -> bool:
            try:
                parse_score(cell or "")
            except ValueError:
                return False
            return True

        if len(lines) > 1 and value_cell(lines[0]) is not None and not parses(value_cell(lines[0])):
            if 2 * sum(parses(value_cell(c)) for c in lines[1:]) > len(lines) - 1:
                lines = lines[1:]  # a header row: the first line alone is not numbers

        entries = list(self.row.entries)
        bad: dict[int, tuple[str, str]] = {}
        for k, cells in enumerate(lines):
            r = start_row + k
            if r >= len(entries):
                entries.append(Score(f"Token {r + 1}", 0.0))
            e = entries[r]
            if start_col == LABEL:
                e = Score(cells[0].strip(), e.value)
            text = value_cell(cells)
            if text is not None:
                try:
                    e = Score(e.label, parse_score(text)[0])
                except ValueError as exc:
                    bad[r] = (text, str(exc))
            entries[r] = e
        self.row.set_entries(entries)
        self.invalid.update(bad)
        for r in bad:
            self._cell_changed(r)
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
        at = rows[-1] + 1 if rows else len(self.row)
        self.row.insert(at, 0.0)
        self.table.setCurrentIndex(self.model.index(at, VALUE))

    def remove_rows(self) -> None:
        rows = self._selected_rows() or [len(self.row) - 1]
        try:
            self.row.remove(rows)
        except ValueError:
            self.message.emit(tr("scores.last_row"))

    def move_row(self, offset: int) -> None:
        rows = self._selected_rows()
        if len(rows) != 1:
            return
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
        if text is None:
            text = QGuiApplication.clipboard().text()
        cur = self.table.currentIndex()
        start_row = cur.row() if cur.isValid() else 0
        start_col = cur.column() if cur.isValid() else VALUE
        count, bad = self.model.paste_tsv(text, start_row, start_col)
        if not count:
            self.message.emit(tr("scores.paste_empty"))
        elif bad:
            self.message.emit(tr("scores.paste_bad", count=count, bad=bad))
        else:
            self.message.emit(tr("scores.pasted", count=count))
