"""How narrow a table with stretched columns may get before its column titles are clipped."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget

#: Room beside a title: the header's margins and its section line.
TITLE_MARGIN = 14


def titles_min_width(table: QTableWidget, *, fitted: tuple[int, ...] = ()) -> int:
    """The width ``table`` needs so that no column title is clipped.

    Stretched columns share the width equally, so each gets as much as the
    widest title among them; the columns in ``fitted`` are sized to their own
    contents (ResizeToContents) and need only their own title.  A title may
    hold line breaks: its widest line counts.
    """
    fm = table.horizontalHeader().fontMetrics()

    def title(c: int) -> int:
        item = table.horizontalHeaderItem(c)
        text = item.text() if item is not None else ""
        return max((fm.horizontalAdvance(line) for line in text.splitlines()), default=0) + TITLE_MARGIN

    stretched = [title(c) for c in range(table.columnCount()) if c not in fitted]
    width = sum(title(c) for c in fitted) + len(stretched) * max(stretched, default=0)
    return table.verticalHeader().sizeHint().width() + width + 2 * table.frameWidth()
