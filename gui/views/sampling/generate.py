"""The generate strip of the Sampling view: tokens drawn from a real model, one at a time or several at once.

A row of cells: the prompt's end, then each generated token with its
probability and rank.  The strip only shows and asks; the view's model
owns the tokens (``SamplingModel.strip``) and its job draws them:

- ``next_requested`` (Next token), ``generate_requested(n)`` (Generate n),
  ``clear_requested`` (Clear);
- ``rewind_requested(cursor)`` when a cell is clicked: the prompt's cell
  is cursor 0, token ``i``'s cell cursor ``i + 1`` (that token becomes the
  last of the context; the ones after it stay, dimmed, until replaced).

:meth:`show_cells` draws what the view hands it: :class:`Cell` per token
and the cursor.  The list scrolls sideways inside itself (never the
control column) and keeps the cursor's cell in sight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QListView,
    QPushButton,
    QSpinBox,
    QWidget,
)

from gui import theme as themes
from gui.model import llm
from gui.model.texts import tr

#: The tokens Generate draws by default.
DEFAULT_COUNT = 8
#: The prompt's cell shows at most this many of its last characters.
PROMPT_TAIL = 14


@dataclass(frozen=True)
class Cell:
    """One generated token as the strip shows it."""

    token: str  # readable (llm.readable)
    probability: float
    rank: int
    tooltip: str
    chosen: bool = False


def short_number(p: float) -> str:
    """A probability in three significant digits (0.0312, 1.2e-05)."""
    return f"{p:.3g}" if p >= 1e-3 or p == 0 else f"{p:.1e}"


class GenerateStrip(QWidget):
    """Next token / Generate n / Clear beside the list of generated tokens."""

    next_requested = Signal()
    generate_requested = Signal(int)
    clear_requested = Signal()
    rewind_requested = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("sampling.generate")
        self.next_button = QPushButton(tr("sampling_model.strip.next"))
        self.next_button.setObjectName("sampling.generate.next")
        self.next_button.setToolTip(tr("sampling_model.strip.next.tooltip"))
        self.next_button.clicked.connect(self.next_requested)
        self.all_button = QPushButton(tr("sampling_model.strip.all"))
        self.all_button.setObjectName("sampling.generate.all")
        self.all_button.setToolTip(tr("sampling_model.strip.all.tooltip"))
        self.count = QSpinBox()
        self.count.setObjectName("sampling.generate.count")
        self.count.setRange(1, llm.MAX_GENERATE_TOKENS)
        self.count.setValue(DEFAULT_COUNT)
        self.count.setToolTip(tr("sampling_model.strip.count.tooltip", limit=llm.MAX_GENERATE_TOKENS))
        self.all_button.clicked.connect(lambda: self.generate_requested.emit(self.count.value()))
        self.clear_button = QPushButton(tr("sampling_model.strip.clear"))
        self.clear_button.setToolTip(tr("sampling_model.strip.clear.tooltip"))
        self.clear_button.clicked.connect(self.clear_requested)

        self.cells = QStandardItemModel(self)
        self.list = QListView()
        self.list.setModel(self.cells)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setObjectName("sampling.generate.list")
        self.list.setToolTip(tr("sampling_model.strip.list.tooltip"))
        self.list.setFlow(QListView.Flow.LeftToRight)
        self.list.setWrapping(False)
        self.list.setSpacing(1)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.clicked.connect(lambda index: self.rewind_requested.emit(index.row()))
        line = self.list.fontMetrics().lineSpacing()
        scrollbar = self.list.style().pixelMetric(self.list.style().PixelMetric.PM_ScrollBarExtent)
        self.list.setFixedHeight(2 * line + scrollbar + 14)
        self.list.setMinimumWidth(160)

        buttons = QGridLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(3)
        buttons.addWidget(self.next_button, 0, 0)
        buttons.addWidget(self.clear_button, 0, 1)
        buttons.addWidget(self.all_button, 1, 0)
        buttons.addWidget(self.count, 1, 1)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        lay.addLayout(buttons)
        lay.addWidget(self.list, 1)
        self._cells: tuple[Cell, ...] = ()
        self._cursor = 0

    @property
    def buttons(self) -> tuple[QPushButton, ...]:
        return (self.next_button, self.all_button, self.clear_button)

    def set_enabled(self, enabled: bool) -> None:
        """The buttons work only with a model to draw from (the list still rewinds)."""
        for w in (*self.buttons, self.count):
            w.setEnabled(enabled)

    def show_cells(self, prompt: str, cells: Sequence[Cell], cursor: int) -> None:
        """The prompt's end, then one cell per token; the cells after ``cursor`` dimmed, the cursor's selected."""
        theme = themes.current()
        self._cells, self._cursor = tuple(cells), cursor
        self.cells.clear()
        tail = prompt.replace("\n", " ")
        tail = tail if len(tail) <= PROMPT_TAIL else "…" + tail[-PROMPT_TAIL + 1:]
        first = QStandardItem(f"{tr('sampling_model.strip.prompt')}\n{tail}")
        first.setToolTip(tr("sampling_model.strip.prompt.tooltip", prompt=prompt))
        self._style(first, QColor(theme.muted), italic=True)
        self.cells.appendRow(first)
        for i, cell in enumerate(cells):
            item = QStandardItem(f"{cell.token}\n"
                                   + tr("sampling_model.strip.cell", p=short_number(cell.probability), rank=cell.rank))
            item.setToolTip(cell.tooltip)
            after = i + 1 > cursor
            colour = theme.muted if after else (theme.highlight if cell.chosen else theme.foreground)
            self._style(item, QColor(colour), italic=after)
            self.cells.appendRow(item)
        current = self.cells.index(min(cursor, len(cells)), 0)
        self.list.setCurrentIndex(current)
        self.list.scrollTo(current)

    @staticmethod
    def _style(item: QStandardItem, colour: QColor, *, italic: bool) -> None:
        item.setForeground(QBrush(colour))
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        if italic:
            font = QFont(item.font())
            font.setItalic(True)
            item.setFont(font)

    # -- for tests ------------------------------------------------------------------------------
    def texts(self) -> list[str]:
        """The token of every cell (without the prompt's)."""
        return [c.token for c in self._cells]

    @property
    def cursor(self) -> int:
        return self._cursor

    def cell_rect(self, row: int):
        """Where cell ``row`` (0: the prompt's) is drawn, in the list's viewport, scrolled into sight."""
        index = self.cells.index(row, 0)
        self.list.scrollTo(index)
        return self.list.visualRect(index)
