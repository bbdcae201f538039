"""Tables of validated number cells, and the TSV block parser their paste shares.

A cell that does not parse keeps its last good value: it shows what was
typed, in the theme's "invalid" colour, with the reason as its tooltip,
until a good value replaces it (nothing is silently zeroed).  The score
table and the attention view's Q/K/V tables are both built on
:class:`ValidatedTableModel`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtGui import Qt as QtText

from gui import theme as themes
from gui.model.texts import tr

Cell = tuple[int, int]

#: The most characters of a typed text echoed back (status bar, tooltips, a red cell's text).
ECHO_LIMIT = 300


def shorten(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to ``limit`` characters with "…" (a pasted multi-megabyte cell must not be echoed whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally: Qt would render a label such as "<b>x</b>" as rich text."""
    if not QtText.mightBeRichText(text):
        return text
    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


def split_tsv(text: str) -> list[list[str]]:
    """The lines of a tab-separated paste (any line ending), blank lines dropped."""
    lines = [ln.split("\t") for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return [cells for cells in lines if any(c.strip() for c in cells)]


def strip_header(lines: list[list[str]], parses: Callable[[str | None], bool],
                 cells: Callable[[list[str]], Sequence[str | None]] = lambda line: line) -> list[list[str]]:
    """Drop a header line: a first line with no number in its ``cells``, above lines whose cells mostly are."""
    if len(lines) < 2:
        return lines
    first = cells(lines[0])
    if not first or any(parses(c) for c in first):
        return lines
    rest = [parses(c) for line in lines[1:] for c in (cells(line) or [None])]
    return lines[1:] if 2 * sum(rest) > len(rest) else lines


def paste_text(text: str | None) -> str:
    """What to paste: ``text``, or the clipboard's text when None (Edit ▸ Paste, Ctrl+V)."""
    return QGuiApplication.clipboard().text() if text is None else text


def paste_report(prefix: str, count: int, bad: int) -> str:
    """The status message after a paste of ``count`` cells, ``bad`` of them refused."""
    if not count:
        return tr(f"{prefix}.paste_empty")
    if bad:
        return tr(f"{prefix}.paste_bad", count=count, bad=bad)
    return tr(f"{prefix}.pasted", count=count)


class ValidatedTableModel(QAbstractTableModel):
    """A table model whose number cells are parsed, with refused text kept and marked.

    Subclasses give the shape (``rowCount``/``columnCount``/``headerData``),
    the text of a good cell (:meth:`cell_text`), what a typed text means
    (:meth:`parse`, raising ValueError with the reason) and where a good
    value goes (:meth:`commit`).  Columns for which :meth:`is_number`
    is false take any text through :meth:`set_text`.
    """

    message = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.invalid: dict[Cell, tuple[str, str]] = {}  # cell -> (typed text, reason)

    # -- for subclasses ------------------------------------------------------------------
    def cell_text(self, row: int, col: int, *, edit: bool) -> str:
        raise NotImplementedError

    def parse(self, text: str) -> tuple[float, str]:
        """(value, note) for a typed text; raise ValueError saying why it is refused."""
        raise NotImplementedError

    def commit(self, row: int, col: int, value: float) -> None:
        raise NotImplementedError

    def invalid_text(self, row: int, col: int, reason: str) -> str:
        """The tooltip and message of a refused cell."""
        return reason

    def note_text(self, row: int, col: int, note: str) -> str:
        """The message for a value taken with a note (``1e400`` read as inf)."""
        return note

    def good_tooltip(self, row: int, col: int) -> str | None:
        return None

    def is_number(self, col: int) -> bool:
        return True

    def set_text(self, row: int, col: int, text: str) -> None:
        """A text column's edit (labels)."""

    # -- Qt model API ---------------------------------------------------------------------
    def flags(self, index):
        return super().flags(index) | Qt.ItemFlag.ItemIsEditable

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, c = index.row(), index.column()
        bad = self.invalid.get((r, c))
        if role == Qt.ItemDataRole.DisplayRole:
            return shorten(bad[0]) if bad else self.cell_text(r, c, edit=False)
        if role == Qt.ItemDataRole.EditRole:
            return bad[0] if bad else self.cell_text(r, c, edit=True)
        if role == Qt.ItemDataRole.BackgroundRole and bad:
            return QBrush(QColor(themes.current().invalid))
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self.invalid_text(r, c, bad[1]) if bad else self.good_tooltip(r, c)
            return None if tip is None else plain_tooltip(shorten(tip))
        if role == Qt.ItemDataRole.TextAlignmentRole and self.is_number(c):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        r, c = index.row(), index.column()
        if self.is_number(c):
            self.set_cell_text(r, c, str(value))
        else:
            self.set_text(r, c, str(value))
        return True

    # -- editing ----------------------------------------------------------------------------
    def parses(self, text: str | None) -> bool:
        try:
            self.parse(text or "")
        except ValueError:
            return False
        return True

    def set_cell_text(self, r: int, c: int, text: str) -> bool:
        """Parse what the user typed into a cell; returns whether it was taken."""
        try:
            number, note = self.parse(text)
        except ValueError as exc:
            self.invalid[(r, c)] = (text, str(exc))
            self.cell_changed(r, c)
            self.message.emit(shorten(self.invalid_text(r, c, str(exc))))
            return False
        self.invalid.pop((r, c), None)
        self.commit(r, c, number)
        self.cell_changed(r, c)
        if note:
            self.message.emit(shorten(self.note_text(r, c, note)))
        return True

    def mark_invalid(self, bad: dict[Cell, tuple[str, str]]) -> None:
        """Mark the refused cells of a paste."""
        self.invalid.update(bad)
        for r, c in bad:
            self.cell_changed(r, c)

    def cell_changed(self, r: int, c: int) -> None:
        idx = self.index(r, c)
        self.dataChanged.emit(idx, idx)

    def refresh_all(self) -> None:
        rows, cols = self.rowCount(), self.columnCount()
        if rows and cols:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, cols - 1))

    def reset_shape(self, update: Callable[[], object] = lambda: None) -> None:
        """The data changes shape (``update`` records it): a new table, no red cells."""
        self.beginResetModel()
        update()
        self.invalid.clear()
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # pragma: no cover - subclasses
        raise NotImplementedError

    def columnCount(self, parent=QModelIndex()) -> int:  # pragma: no cover - subclasses
        raise NotImplementedError
