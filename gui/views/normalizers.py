"""Normalizers: the same scores through softmax and six other ways of making weights."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui import theme as themes
from gui.binding import connect_while_alive
from gui.format import fmt
from gui.model.normalizers import METHODS, PROBE_LIMIT, PROPERTIES, NormalizersModel, NormalizersResult
from gui.model.texts import tr
from gui.views.base import BaseView
from gui.widgets.bar_chart import BarChart
from gui.widgets.signals import signals_blocked
from gui.widgets.sliders import ParamSlider
from gui.widgets.table_fit import titles_min_width

YES, NO = "✓", "✗"
NOTE_TOKENS = 8  # a note names at most this many tokens, then "and N more"


def token_list(labels) -> str:
    """Labels joined for a note; a long list is cut after NOTE_TOKENS names."""
    labels = list(labels)
    if len(labels) <= NOTE_TOKENS:
        return ", ".join(labels)
    return tr("normalizers.note.more_tokens", shown=", ".join(labels[:NOTE_TOKENS]), more=len(labels) - NOTE_TOKENS)


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

    def minimumSizeHint(self):
        """Wide enough for every property's title (the stretched columns share the width equally)."""
        hint = super().minimumSizeHint()
        hint.setWidth(max(hint.width(), titles_min_width(self)))
        return hint

    def show_properties(self, props: np.ndarray, alpha: float) -> None:
        """Each method's name and its ✓/✗ cells; only what differs from what is shown is set (an α move
        renames one row and rarely changes a cell)."""
        for r, m in enumerate(METHODS):
            name = method_name(m, alpha)
            head = self.verticalHeaderItem(r)
            if head is None:
                self.setVerticalHeaderItem(r, QTableWidgetItem(name))
            elif head.text() != name:
                head.setText(name)
        theme = themes.current()
        good, bad = QColor(theme.series[2]), QColor(theme.highlight)
        for r in range(len(METHODS)):
            for c in range(len(PROPERTIES)):
                ok = bool(props[r, c])
                item = self.item(r, c)
                text, brush = (YES, QBrush(good)) if ok else (NO, QBrush(bad))
                if item.text() != text:
                    item.setText(text)
                if item.foreground() != brush:
                    item.setForeground(brush)

    def symbols(self) -> list[list[str]]:
        return [[self.item(r, c).text() for c in range(self.columnCount())] for r in range(self.rowCount())]


class MethodChoice(QGroupBox):
    """A check box per method, "All" and "Only softmax": they write NormalizersModel.shown, and follow it.

    The plot's legend swatches toggle the same state (a click on one asks
    the model), so both always show what is drawn.
    """

    def __init__(self, model: NormalizersModel, status):
        super().__init__(tr("normalizers.show.title"))
        self.model = model
        self._status = status
        self.setToolTip(tr("normalizers.show.tooltip"))
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        grid.setVerticalSpacing(2)
        self.boxes: dict[str, QCheckBox] = {}
        for k, m in enumerate(METHODS):
            box = QCheckBox(method_name(m, model.alpha))
            box.setToolTip(tr("normalizers.show.box.tooltip"))
            box.toggled.connect(lambda on, m=m: self._ask(self.model.show_method, m, on))
            grid.addWidget(box, k // 2, k % 2)
            self.boxes[m] = box
        self.all = QPushButton(tr("normalizers.show.all"))
        self.all.setToolTip(tr("normalizers.show.all.tooltip"))
        self.all.clicked.connect(lambda: self._ask(self.model.set_shown, METHODS))
        self.only = QPushButton(tr("normalizers.show.only_softmax"))
        self.only.setToolTip(tr("normalizers.show.only_softmax.tooltip"))
        self.only.clicked.connect(lambda: self._ask(self.model.set_shown, ("softmax",)))
        row = len(METHODS) // 2
        grid.addWidget(self.all, row + 1, 0)
        grid.addWidget(self.only, row + 1, 1)
        connect_while_alive(self, model.events.shown, self.sync)
        connect_while_alive(self, model.events.alpha, self.sync)
        self.sync()

    def _ask(self, change, *args) -> None:
        try:
            change(*args)
        except ValueError:
            self._status(tr("normalizers.show.last"))
        self.sync()  # a refused change puts the box back

    def sync(self, *_args) -> None:
        for m, box in self.boxes.items():
            with signals_blocked(box):
                box.setChecked(m in self.model.shown)
            box.setText(method_name(m, self.model.alpha))


class NormalizersView(BaseView):
    model: NormalizersModel

    def build(self) -> None:
        self.editor = self.score_editor()
        self.alpha = ParamSlider(self.model, "alpha")
        self.methods = MethodChoice(self.model, self.status.emit)
        self.bars = self.add_plot("weights", BarChart(
            tr("normalizers.plot.title"),
            [(method_name(m, self.model.alpha), i) for i, m in enumerate(METHODS)],
            y_label=tr("normalizers.plot.y"), legend_columns=4, value_name="w", clickable_legend=True,
        ))
        self.bars.seriesClicked.connect(lambda i: self.methods._ask(self.model.toggle, METHODS[i]))
        self.bars.values.lead = METHODS.index("softmax")  # when labels must thin, softmax keeps its own
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
        self.arrange([self.editor, self.alpha, self.methods], plots)

    def notes_for(self, r: NormalizersResult) -> list[str]:
        """Plain-language notes on what fails at these scores."""
        labels = np.array(r.labels)
        x = self.scores.values
        if not np.all(np.isfinite(x)):
            return [tr("normalizers.note.nonfinite")]
        out = []
        if r.sampled:
            out.append(tr("normalizers.note.sampled", n=len(r.labels), limit=PROBE_LIMIT))
        linear = r.weights_of("linear")
        if np.isnan(linear).all():
            out.append(tr("normalizers.note.linear_zero_sum"))
        elif (linear < 0).any():
            neg = linear < 0
            out.append(tr(f"normalizers.note.linear_negative.{'one' if neg.sum() == 1 else 'many'}",
                          tokens=token_list(labels[neg]), weights=token_list(fmt(w) for w in linear[neg])))
        shifted = r.weights_of("shifted_linear")
        if len(x) > 1 and (shifted == 0).any() and not (shifted == shifted[0]).all():
            out.append(tr("normalizers.note.shifted_zero", tokens=token_list(labels[shifted == 0])))
        hard = r.weights_of("hardmax")
        out.append(tr("normalizers.note.hardmax", tokens=token_list(labels[hard > 0])))
        for m in ("sparsemax", "entmax"):
            w = r.weights_of(m)
            zero = w == 0
            if zero.any():
                out.append(tr(f"normalizers.note.sparse_zero.{'one' if zero.sum() == 1 else 'many'}",
                              method=method_name(m, self.model.alpha), tokens=token_list(labels[zero])))
        out.append(tr("normalizers.note.sigmoid_sum", total=fmt(r.weights_of("sigmoid").sum())))
        return out

    def redraw(self) -> None:
        r = self.model.result(self.scores)
        alpha = self.model.alpha
        with self.bars.batched():  # the labels are laid out once, after every change
            self.bars.set_series_name(METHODS.index("entmax"), method_name("entmax", alpha))
            self.bars.set_shown([m in self.model.shown for m in METHODS])
            self.bars.set_data(r.labels, list(r.weights),
                               nan_tags={METHODS.index("linear"): "div0"} if r.zero_sum else None)
            shown = r.weights[[METHODS.index(m) for m in self.model.shown]]
            finite = shown[np.isfinite(shown)]
            lo = min(0.0, float(finite.min()) if finite.size else 0.0)
            self.bars.set_y_range(lo - 0.05 if lo < 0 else -0.01, 1.05)  # the labels above 1 get room of their own
        self.table.show_properties(r.properties, alpha)
        self.notes.setText("\n".join(self.notes_for(r)))
