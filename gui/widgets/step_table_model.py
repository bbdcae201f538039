"""The step table's numbers, formatted only when Qt asks for a cell.

:class:`StepTableModel` keeps the raw table (one row per token) and the
totals row's texts.  A cell's text is :func:`gui.format.fmt` of its value,
made when a view first asks for it (a visible cell being painted, a copy,
a column being sized) and kept until the value changes.  An update compares
the new numbers with the old ones and signals only the cells that changed.

It answers what the step table's former ``QTableWidgetItem`` cells answered:
the text (display and edit roles), right and vertically centred alignment,
a bold font on the totals row, the same item flags, and the header labels.

:func:`format_many` and :func:`longest_texts` are ``fmt`` for many values
at once: the same texts, the same lengths, without a Python call per cell.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QFont

from gui.format import fmt

_R = Qt.ItemDataRole
DISPLAY, EDIT, ALIGNMENT, FONT = (int(r) for r in (_R.DisplayRole, _R.EditRole, _R.TextAlignmentRole, _R.FontRole))
#: The cells' alignment, as QTableWidgetItem.textAlignment() gave it.
RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
_F = Qt.ItemFlag
#: A QTableWidgetItem's default flags (the view's edit triggers are off: nothing is edited).
FLAGS = (_F.ItemIsSelectable | _F.ItemIsEditable | _F.ItemIsDragEnabled | _F.ItemIsDropEnabled
         | _F.ItemIsUserCheckable | _F.ItemIsEnabled)

#: ``fmt(v)`` (3 digits) is fixed-point for LOW <= |v| < HIGH, else scientific (or NaN, inf, 0).
DIGITS = 3
LOW, HIGH = 10.0 ** (-DIGITS), 1e6
_FIXED, _SCI = f"%.{DIGITS}f", f"%.{DIGITS}e"


def format_many(values) -> list[str]:
    """``[fmt(v) for v in values]``, one format per kind of value rather than a call per value."""
    v = np.asarray(values, dtype=float).ravel()
    out: list[str] = [""] * v.size
    if not v.size:
        return out
    a = np.abs(v)
    with np.errstate(invalid="ignore"):
        fixed = (a >= LOW) & (a < HIGH)
        sci = np.isfinite(v) & (v != 0) & ~fixed
    rest = ~(fixed | sci)
    for mask, form in ((fixed, _FIXED), (sci, _SCI)):
        idx = np.flatnonzero(mask)
        for i, x in zip(idx.tolist(), v[idx].tolist()):
            out[i] = form % x
    for i in np.flatnonzero(rest).tolist():
        out[i] = fmt(v[i], DIGITS)
    return out


def longest_texts(table) -> tuple[int, ...]:
    """Per column of ``table``, the most characters of ``fmt(v)`` over its values (0 for no rows).

    Within one kind of text the length only grows with |v| (fixed-point and
    large scientific) or with 1/|v| (small scientific: a longer exponent), and
    a minus sign adds one; so it is enough to format each column's extreme
    value of each kind and sign, plus one of each of NaN, inf, -inf and 0.
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2:
        raise ValueError("a 2-d table")
    rows, cols = t.shape
    longest = np.zeros(cols, dtype=int)
    if not rows:
        return tuple(longest.tolist())
    a = np.abs(t)
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(t)
        zero = t == 0
        neg = t < 0
        fixed = (a >= LOW) & (a < HIGH)
        small = finite & ~zero & (a < LOW)
        large = finite & (a >= HIGH)
    for mask, length in ((np.isnan(t), 3), (np.isposinf(t), 3), (np.isneginf(t), 4), (zero, len(fmt(0.0)))):
        np.maximum(longest, np.where(mask.any(axis=0), length, 0), out=longest)
    for kind, smallest in ((small, True), (fixed, False), (large, False)):
        for sign, side in ((1.0, ~neg), (-1.0, neg)):
            m = kind & side
            has = m.any(axis=0)
            if not has.any():
                continue
            pick = np.where(m, a, np.inf).min(axis=0) if smallest else np.where(m, a, -np.inf).max(axis=0)
            for c in np.flatnonzero(has).tolist():
                longest[c] = max(longest[c], len(fmt(sign * float(pick[c]), DIGITS)))
    return tuple(longest.tolist())


class StepTableModel(QAbstractTableModel):
    """Rows of numbers and a totals row; texts made on demand (see the module's docstring)."""

    def __init__(self, headers: Sequence[str], summed: Sequence[int], parent=None):
        super().__init__(parent)
        self._headers = list(headers)
        self._summed = frozenset(summed)
        self._values = np.zeros((0, len(self._headers)))
        self._texts = np.empty(self._values.shape, dtype=object)  # None: not formatted yet
        self._totals: list[str] = []
        self._labels: list[str] = []
        self._bold = QFont()  # what QTableWidgetItem().font() with setBold(True) held
        self._bold.setBold(True)
        #: cells formatted so far (tests read it: only what is asked is formatted)
        self.formatted = 0

    # -- the model -----------------------------------------------------------------------
    @property
    def body_rows(self) -> int:
        return self._values.shape[0]

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt's name
        return 0 if parent.isValid() or not self._totals else self._values.shape[0] + 1

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt's name
        return 0 if parent.isValid() else len(self._headers)

    def flags(self, index):
        return FLAGS if index.isValid() else _F.NoItemFlags

    def data(self, index, role=DISPLAY):
        if role == DISPLAY or role == EDIT:
            return self.cell(index.row(), index.column())
        if role == ALIGNMENT:
            return RIGHT
        if role == FONT:
            return self._bold if index.row() == self._values.shape[0] else None
        return None

    def headerData(self, section, orientation, role=DISPLAY):  # noqa: N802 - Qt's name
        names = self._headers if orientation == Qt.Orientation.Horizontal else self._labels
        if (role == DISPLAY or role == EDIT) and 0 <= section < len(names):
            return names[section]
        return None

    # -- texts -----------------------------------------------------------------------------
    def cell(self, row: int, column: int) -> str | None:
        """The cell's text (None for an empty totals cell, as an item never given a text)."""
        n = self._values.shape[0]
        if row == n:
            text = self._totals[column]
            return text or None
        text = self._texts[row, column]
        if text is None:
            text = fmt(self._values[row, column], DIGITS)
            self._texts[row, column] = text
            self.formatted += 1
        return text

    def text(self, row: int, column: int) -> str:
        return self.cell(row, column) or ""

    def body_texts(self, column: int, start: int, stop: int) -> list[str]:
        """The texts of body rows start..stop-1 of ``column`` (formatting those not made yet)."""
        cached = self._texts[start:stop, column]
        missing = np.flatnonzero(np.equal(cached, None))
        if missing.size:
            cached[missing] = format_many(self._values[start:stop, column][missing])
            self.formatted += int(missing.size)
        return cached.tolist()

    def text_lengths(self) -> tuple[int, ...]:
        """Per column, the most characters of any of its texts, the totals row's included."""
        body = longest_texts(self._values)
        return tuple(max(b, len(t)) for b, t in zip(body, self._totals))

    def label(self, row: int) -> str:
        return self._labels[row]

    # -- updates ---------------------------------------------------------------------------
    def set_table(self, labels: Sequence[str], table, total_label: str) -> None:
        """Show ``table`` (one row per label), its totals row labelled ``total_label``."""
        values = np.array(table, dtype=float)
        cols = len(self._headers)
        if values.ndim != 2 or values.shape != (len(labels), cols):
            raise ValueError(f"a table of {len(labels)} x {cols} numbers, not {values.shape}")
        labels = [*labels, total_label]
        totals = [fmt(values[:, c].sum(), DIGITS) if c in self._summed else "" for c in range(cols)]
        before, rows = self.rowCount(), len(labels)
        if rows != before:
            grow = rows > before
            if grow:
                self.beginInsertRows(QModelIndex(), before, rows - 1)
            else:
                self.beginRemoveRows(QModelIndex(), rows, before - 1)
            self._values, self._totals, self._labels = values, totals, labels
            self._texts = np.empty(values.shape, dtype=object)
            if grow:
                self.endInsertRows()
            else:
                self.endRemoveRows()
            self.headerDataChanged.emit(Qt.Orientation.Vertical, 0, rows - 1)
            self._changed(0, 0, rows - 1, cols - 1)
            return
        old_labels, self._labels = self._labels, labels
        differ = [i for i, (a, b) in enumerate(zip(old_labels, labels)) if a != b]
        if differ:
            self.headerDataChanged.emit(Qt.Orientation.Vertical, differ[0], differ[-1])
        old = self._values
        with np.errstate(invalid="ignore"):
            changed = ~((values == old) | (np.isnan(values) & np.isnan(old)))
        self._values = values
        if changed.any():
            self._texts[changed] = None
            rows_changed = np.flatnonzero(changed.any(axis=1))
            cols_changed = np.flatnonzero(changed.any(axis=0))
            self._changed(int(rows_changed[0]), int(cols_changed[0]), int(rows_changed[-1]), int(cols_changed[-1]))
        old_totals, self._totals = self._totals, totals
        moved = [c for c in range(cols) if old_totals[c] != totals[c]]
        if moved:
            n = values.shape[0]
            self._changed(n, moved[0], n, moved[-1])

    def _changed(self, top: int, left: int, bottom: int, right: int) -> None:
        self.dataChanged.emit(self.index(top, left), self.index(bottom, right), [DISPLAY, EDIT])
