"""The format × formula grid: every weight row in every format and formula, the chosen one outlined."""

from __future__ import annotations

from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout

from gui.format import fmt
from gui.model.precision import DTYPES, METHODS, PrecisionModel, PrecisionResult
from gui.model.texts import tr
from gui.views.precision.cells import CellTable, cell_colour, weights_line, weights_tooltip


class FormatGrid(CellTable):
    """Formats down, formulas across; a click chooses the format and the formula."""

    def __init__(self, model: PrecisionModel, parent=None):
        # row headers are the plain format names: "(emulated)" would cost the cells 50 px
        super().__init__(list(DTYPES), [tr(f"param.method.{m}") for m in METHODS],
                         tr("precision.grid.tooltip"), parent)
        self.view_model = model  # not "model": QTableWidget.model() is the item model
        self.cellClicked.connect(self._clicked)

    def _clicked(self, row: int, col: int) -> None:
        self.view_model.set_param("dtype", DTYPES[row])
        self.view_model.set_param("method", METHODS[col])

    def show_result(self, r: PrecisionResult) -> None:
        for i, d in enumerate(DTYPES):
            for j, m in enumerate(METHODS):
                w = r.weights[i, j]
                err, total = fmt(r.max_error[i, j], 1), fmt(r.sum_error[i, j], 1)
                nan, inf, zero = int(r.nan_count[i, j]), int(r.inf_count[i, j]), int(r.zero_count[i, j])
                text = "\n".join((weights_line(w), tr("precision.cell.errors", error=err, sum=total),
                                  tr("precision.cell.counts", nan=nan, inf=inf, zero=zero)))
                tip = weights_tooltip(
                    tr("precision.cell.tooltip_head", dtype=tr(f"param.dtype.{d}"), method=tr(f"param.method.{m}")),
                    r.labels, w, d)
                tip += [tr("precision.cell.tooltip_error", error=fmt(r.max_error[i, j], 3)),
                        tr("precision.cell.tooltip_sum", sum=fmt(r.sum_error[i, j], 3))]
                self.set_cell(i, j, text, cell_colour(nan, inf, zero), "\n".join(tip))
        self.fit_height()
        self.set_selected(DTYPES.index(self.view_model.dtype), METHODS.index(self.view_model.method))


def grid_box(grid: FormatGrid) -> QGroupBox:
    """The grid under its title, with the colour legend below it."""
    legend = QLabel(tr("precision.grid.legend"))
    legend.setWordWrap(True)
    font = legend.font()
    font.setPointSizeF(font.pointSizeF() * 0.9)
    legend.setFont(font)
    box = QGroupBox(tr("precision.grid.title"))
    lay = QVBoxLayout(box)
    lay.setContentsMargins(4, 4, 4, 4)
    lay.addWidget(grid)
    lay.addWidget(legend)
    return box
