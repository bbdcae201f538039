"""Normalizers: the same scores through softmax and six other ways of making weights."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui import theme as themes
from gui.format import fmt
from gui.model.normalizers import METHODS, PROPERTIES, NormalizersModel, NormalizersResult
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.widgets.plot import BarChart
from gui.widgets.sliders import ParamSlider

YES, NO = "✓", "✗"


def method_name(method: str, alpha: float) -> str:
    return tr(f"normalizers.method.{method}", alpha=f"{alpha:.2f}")


class PropertyTable(QTableWidget):
    """Methods down, properties across: ✓ holds at these scores, ✗ fails."""

    def __init__(self, parent=None):
        super().__init__(len(METHODS), len(PROPERTIES), parent)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setToolTip(tr("normalizers.table.tooltip"))
        for c, prop in enumerate(PROPERTIES):
            head = QTableWidgetItem(tr(f"normalizers.property.{prop}"))
            head.setToolTip(tr(f"normalizers.property.{prop}.tooltip"))
            self.setHorizontalHeaderItem(c, head)
            for r in range(len(METHODS)):
                item = QTableWidgetItem()
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                item.setToolTip(tr(f"normalizers.property.{prop}.tooltip"))
                self.setItem(r, c, item)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(22)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def sizeHint(self):
        hint = super().sizeHint()
        rows = self.verticalHeader().length() + self.horizontalHeader().sizeHint().height()
        hint.setHeight(rows + 2 * self.frameWidth())
        return hint

    def show_properties(self, props: np.ndarray, alpha: float) -> None:
        self.setVerticalHeaderLabels([method_name(m, alpha) for m in METHODS])
        theme = themes.current()
        good, bad = QColor(theme.series[2]), QColor(theme.highlight)
        for r in range(len(METHODS)):
            for c in range(len(PROPERTIES)):
                ok = bool(props[r, c])
                item = self.item(r, c)
                item.setText(YES if ok else NO)
                item.setForeground(QBrush(good if ok else bad))

    def symbols(self) -> list[list[str]]:
        return [[self.item(r, c).text() for c in range(self.columnCount())] for r in range(self.rowCount())]


class NormalizersView(BaseView):
    model: NormalizersModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.alpha = ParamSlider(self.model, "alpha")
        self.bars = self.add_plot("weights", BarChart(
            tr("normalizers.plot.title"),
            [(method_name(m, self.model.alpha), i) for i, m in enumerate(METHODS)],
            y_label=tr("normalizers.plot.y"), value_labels=False, legend_columns=4, value_name="w",
        ))
        self.table = PropertyTable()
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setObjectName("notes")
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        plots = QWidget()
        column = QVBoxLayout(plots)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.bars, 1)
        column.addWidget(self.notes)
        column.addWidget(self.table)
        self.table.setFixedHeight(self.table.sizeHint().height())
        self.arrange([self.editor, self.alpha], plots)

    def notes_for(self, r: NormalizersResult) -> list[str]:
        """Plain-language notes on what fails at these scores."""
        labels = np.array(r.labels)
        x = self.scores.values
        if not np.all(np.isfinite(x)):
            return [tr("normalizers.note.nonfinite")]
        out = []
        linear = r.weights_of("linear")
        if np.isnan(linear).all():
            out.append(tr("normalizers.note.linear_zero_sum"))
        elif (linear < 0).any():
            neg = linear < 0
            out.append(tr(f"normalizers.note.linear_negative.{'one' if neg.sum() == 1 else 'many'}",
                          tokens=", ".join(labels[neg]), weights=", ".join(fmt(w) for w in linear[neg])))
        shifted = r.weights_of("shifted_linear")
        if len(x) > 1 and (shifted == 0).any() and not (shifted == shifted[0]).all():
            out.append(tr("normalizers.note.shifted_zero", tokens=", ".join(labels[shifted == 0])))
        hard = r.weights_of("hardmax")
        out.append(tr("normalizers.note.hardmax", tokens=", ".join(labels[hard > 0])))
        for m in ("sparsemax", "entmax"):
            w = r.weights_of(m)
            zero = w == 0
            if zero.any():
                out.append(tr(f"normalizers.note.sparse_zero.{'one' if zero.sum() == 1 else 'many'}",
                              method=method_name(m, self.model.alpha), tokens=", ".join(labels[zero])))
        out.append(tr("normalizers.note.sigmoid_sum", total=fmt(r.weights_of("sigmoid").sum())))
        return out

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        alpha = self.model.alpha
        self.bars.set_series_name(METHODS.index("entmax"), method_name("entmax", alpha))
        self.bars.set_data(r.labels, list(r.weights))
        finite = r.weights[np.isfinite(r.weights)]
        lo = min(0.0, float(finite.min()) if finite.size else 0.0)
        self.bars.set_y_range(lo - 0.05 if lo < 0 else -0.01, 1.45)  # room for the legend above 1
        self.table.show_properties(r.properties, alpha)
        self.notes.setText("\n".join(self.notes_for(r)))
