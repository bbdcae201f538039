"""The masking panel: tick tokens, pick a mask value, see what each format makes of the row."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.binding import connect_while_alive
from gui.model.precision import DTYPES, MASK_NAMES, PrecisionModel, PrecisionResult
from gui.model.scores import ScoreRow
from gui.model.texts import tr
from gui.views.precision.cells import DETAIL_WEIGHTS, CellTable, cell_colour, weights_line, weights_tooltip
from gui.widgets.scroll_column import ScrollColumn
from gui.widgets.signals import signals_blocked
from gui.widgets.sliders import ParamChoice

#: Token check boxes per row in the masking panel, and the rows shown before they scroll
#: (so that a long row of scores neither widens nor lengthens the window).
MASK_BOXES_PER_ROW = 4
MASK_ROWS_SHOWN = 2


class MaskPanel(QGroupBox):
    """Check boxes over the tokens, the mask value, and a format × mask value table.

    A click on the table chooses the format and the mask value; the line
    under it lists the chosen cell's weights.
    """

    def __init__(self, scores: ScoreRow, model: PrecisionModel, parent=None):
        super().__init__(tr("precision.mask.title"), parent)
        self.scores, self.model = scores, model
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)  # as the grid's box: the column must fit 690 px in Chinese too
        lay.setSpacing(4)
        tokens = QHBoxLayout()  # the tokens on one line, the buttons and the value on the next: narrow
        tokens.addWidget(QLabel(tr("precision.mask.tokens")), 0, Qt.AlignmentFlag.AlignTop)
        holder = QWidget()
        self.box_grid = QGridLayout(holder)
        self.box_grid.setContentsMargins(0, 0, 0, 0)
        self.box_grid.setColumnStretch(MASK_BOXES_PER_ROW, 1)  # the boxes keep their width, packed left
        self.boxes: list[QCheckBox] = []
        self.box_scroll = ScrollColumn(holder)
        tokens.addWidget(self.box_scroll, 1)
        lay.addLayout(tokens)
        controls = QHBoxLayout()
        self.all_button = QPushButton(tr("precision.mask.all"))
        self.all_button.setToolTip(tr("precision.mask.all.tooltip"))
        self.all_button.clicked.connect(lambda: self._set_masked(range(len(self.scores))))
        self.clear_button = QPushButton(tr("precision.mask.clear"))
        self.clear_button.setToolTip(tr("precision.mask.clear.tooltip"))
        self.clear_button.clicked.connect(lambda: self._set_masked(()))
        self.value = ParamChoice(model, "mask_value")
        for w in (self.all_button, self.clear_button, self.value):
            controls.addWidget(w)
        controls.addStretch(1)
        lay.addLayout(controls)
        self.table = CellTable(list(DTYPES), [tr(f"param.mask_value.{v}") for v in MASK_NAMES],
                               tr("precision.mask.tooltip"))
        self.table.cellClicked.connect(self._clicked)
        lay.addWidget(self.table)
        self.detail = QLabel()
        self.detail.setObjectName("mask_detail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.detail)
        connect_while_alive(self, scores.events.entries, self._sync_boxes)
        connect_while_alive(self, model.events.masked, self._sync_boxes)
        self._sync_boxes()

    # -- user actions ------------------------------------------------------------
    def _clicked(self, row: int, col: int) -> None:
        self.model.set_param("dtype", DTYPES[row])
        self.model.set_param("mask_value", MASK_NAMES[col])

    def _set_masked(self, indices) -> None:
        self.model.masked = tuple(sorted(set(indices)))

    def _box_toggled(self, *_args) -> None:
        self._set_masked(i for i, box in enumerate(self.boxes) if box.isChecked())

    def _sync_boxes(self, *_args) -> None:
        labels = self.scores.labels
        if tuple(b.text() for b in self.boxes) != labels:
            for b in self.boxes:
                self.box_grid.removeWidget(b)
                b.deleteLater()
            self.boxes = []
            for i, label in enumerate(labels):
                b = QCheckBox(label)
                b.setToolTip(tr("precision.mask.token.tooltip"))
                b.toggled.connect(self._box_toggled)
                self.box_grid.addWidget(b, *divmod(i, MASK_BOXES_PER_ROW))
                self.boxes.append(b)
            self._cap_rows()
        masked = set(self.model.masked)
        for i, b in enumerate(self.boxes):
            with signals_blocked(b):
                b.setChecked(i in masked)

    def _cap_rows(self) -> None:
        """At most MASK_ROWS_SHOWN rows of boxes in sight, one where the window is short; the rest scroll."""
        if self.boxes:
            row, gap = self.boxes[0].sizeHint().height(), max(self.box_grid.verticalSpacing(), 0)
            frame = 2 * self.box_scroll.frameWidth()
            self.box_scroll.setMaximumHeight(MASK_ROWS_SHOWN * row + (MASK_ROWS_SHOWN - 1) * gap + frame)
            self.box_scroll.setMinimumHeight(row + frame)

    # -- drawing -----------------------------------------------------------------
    def show_result(self, r: PrecisionResult) -> None:
        method = tr(f"param.method.{self.model.method}")
        for i, d in enumerate(DTYPES):
            for k, v in enumerate(MASK_NAMES):
                w = r.mask_weights[i, k]
                nan, zero = int(r.mask_nan[i, k]), int(r.mask_zero[i, k])
                if nan:
                    status = tr("precision.mask.nan", count=nan)
                elif len(w) > 1 and np.all(w == w[0]):
                    status = tr("precision.mask.uniform")
                elif zero:
                    status = tr("precision.mask.zero", count=zero)
                else:
                    status = tr("precision.mask.ok")
                head = tr("precision.cell.tooltip_head", dtype=tr(f"param.dtype.{d}"),
                          method=f"{method}, {tr(f'param.mask_value.{v}')}")
                tip = weights_tooltip(head, r.labels, w, d)
                if not r.masked:
                    tip.append(tr("precision.mask.none"))
                colour = cell_colour(nan, int(np.isinf(w).sum()), zero)
                self.table.set_cell(i, k, status, colour, "\n".join(tip))
        self.table.fit_height()
        d, k = DTYPES.index(self.model.dtype), MASK_NAMES.index(self.model.mask_value)
        masked = ", ".join(r.labels[i] for i in r.masked) or tr("precision.mask.nothing")
        self.detail.setText(tr(
            "precision.mask.detail", dtype=tr(f"param.dtype.{DTYPES[d]}"),
            value=tr(f"param.mask_value.{MASK_NAMES[k]}"), tokens=masked,
            weights=weights_line(r.mask_weights[d, k], DETAIL_WEIGHTS)))
        self.table.set_selected(d, k)
