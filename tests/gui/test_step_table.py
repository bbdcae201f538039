"""The step table formats cells on demand: what it shows equals what the former QTableWidget showed.

References: ``gui.format.fmt`` per value (the texts), the former QTableWidget
step table (kept below as ``WidgetStepTable``: texts, header labels, fonts,
alignment, column widths and pixels after the same updates), and
QTableView's own ``sizeHintForColumn`` (the column widths the shortcut must
reproduce).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QItemSelectionModel, QSize, Qt
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
)

from gui.format import fmt
from gui.model.calculator import STEP_COLUMNS
from gui.model.texts import tr
from gui.theme import ThemedStyle
from gui.widgets.step_table import HEADERS, SUMMED, StepTable
from gui.widgets.step_table_model import format_many, longest_texts

COLS = len(STEP_COLUMNS)
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.ToolTipRole,
         Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.FontRole, Qt.ItemDataRole.ForegroundRole,
         Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.SizeHintRole,
         Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.StatusTipRole)


class WidgetStepTable(QTableWidget):
    """The former step table, verbatim: every cell formatted and compared on every update."""

    def __init__(self, parent=None):
        super().__init__(0, COLS, parent)
        self.setHorizontalHeaderLabels([HEADERS[c] for c in STEP_COLUMNS])
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setToolTip(tr("steps.tooltip"))
        self._labels: list[str] = []
        self._widths: tuple[int, ...] = ()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.verticalHeader().setDefaultSectionSize(22)

    def show_table(self, labels, table) -> None:
        n = len(labels)
        if self.rowCount() != n + 1:
            self.setRowCount(n + 1)
            for r in range(n + 1):
                for c in range(COLS):
                    item = QTableWidgetItem()
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    if r == n:
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                    self.setItem(r, c, item)
        labels = [*labels, tr("steps.total")]
        if labels != self._labels:
            self._labels = labels
            self.setVerticalHeaderLabels(labels)
        texts = [[fmt(v) for v in row] for row in table]
        texts.append([fmt(table[:, c].sum()) if name in SUMMED else "" for c, name in enumerate(STEP_COLUMNS)])
        for r, row in enumerate(texts):
            for c, text in enumerate(row):
                item = self.item(r, c)
                if item.text() != text:
                    item.setText(text)
        widths = tuple(max(len(row[c]) for row in texts) for c in range(COLS))
        if widths != self._widths:  # the one rule changed since: only the columns whose longest text changed
            old, self._widths = self._widths, widths
            for c in range(COLS):
                if not old or old[c] != widths[c]:
                    self.resizeColumnToContents(c)


def step_rows(scores: np.ndarray, temperature: float) -> np.ndarray:
    """A softmax step table the way the models build one (with -inf for masked scores)."""
    with np.errstate(all="ignore"):
        scaled = scores / temperature
        shifted = scaled - np.max(scaled)
        exps = np.exp(shifted)
        probs = exps / exps.sum()
        return np.column_stack([scores, scaled, np.exp(scaled), shifted, exps, probs, np.log(probs)])


def shown(table) -> dict:
    """Everything a reader gets from the table: texts, looks and labels of every cell and header."""
    m = table.model()
    out = {"rows": m.rowCount(), "cols": m.columnCount(), "tooltip": table.toolTip()}
    for r in range(m.rowCount()):
        out[("v", r)] = m.headerData(r, Qt.Orientation.Vertical)
        for c in range(m.columnCount()):
            index = m.index(r, c)
            out[(r, c)] = (table.item(r, c).text(), int(table.item(r, c).textAlignment()),
                           table.item(r, c).font().bold(), index.data(Qt.ItemDataRole.ToolTipRole), m.flags(index))
    for c in range(m.columnCount()):
        out[("h", c)] = m.headerData(c, Qt.Orientation.Horizontal)
    return out


def reference(labels, table) -> dict:
    """The texts the table must show, from fmt alone."""
    out = {}
    for r, row in enumerate(table):
        out[("v", r)] = labels[r]
        for c, v in enumerate(row):
            out[(r, c)] = fmt(v)
    n = len(labels)
    out[("v", n)] = tr("steps.total")
    for c, name in enumerate(STEP_COLUMNS):
        out[(n, c)] = fmt(table[:, c].sum()) if name in SUMMED else ""
    return out


# -- fmt for many values at once -------------------------------------------------------------------------
EDGES = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-3, 0.0009995, 0.00099949, 999999.9995, 999999.9994, 1e6,
         9.9995, 99.9995, 5e-324, 1e-100, 9.9995e-100, 1e100, 1.7976931348623157e308, 0.0005, 123456.7895]
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(EDGES + [-x for x in EDGES]),
                   st.floats(min_value=-2e6, max_value=2e6), st.floats(min_value=-2e-3, max_value=2e-3))


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=40))
def test_format_many_is_fmt_of_each_value(xs):
    assert format_many(np.array(xs, dtype=float)) == [fmt(x) for x in xs]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 12).flatmap(lambda n: st.lists(st.lists(values, min_size=3, max_size=3),
                                                     min_size=n, max_size=n)))
def test_longest_texts_are_the_longest_fmt_of_each_column(rows):
    t = np.array(rows, dtype=float).reshape(len(rows), 3)
    want = tuple(max((len(fmt(v)) for v in t[:, c]), default=0) for c in range(3))
    assert longest_texts(t) == want


# -- updates -------------------------------------------------------------------------------------------
def table_args(most_rows: int):
    return st.tuples(
        st.integers(1, most_rows),
        st.floats(0.05, 20),
        st.integers(0, 2**31 - 1),
        st.sampled_from([0.0, 0.3, 1.0]),  # share of masked scores (-inf)
        st.sampled_from([0.01, 1.0, 30.0, 1e4]),  # score scale
    )


tables = table_args(9)
long_tables = table_args(60)  # past SMALL rows: in the themed style the ruler sizes the columns


def make_table(n, temperature, seed, masked, scale):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=n) * scale
    scores[rng.random(n) < masked] = -np.inf
    labels = [f"tok{(seed + i) % 7}" for i in range(n)]
    return labels, step_rows(scores, temperature)


@settings(max_examples=25, deadline=None)
@given(st.lists(tables, min_size=1, max_size=5))
def test_after_any_updates_the_table_shows_what_a_fresh_one_shows(qapp, updates):
    table, fresh = StepTable(), StepTable()
    for update in updates:
        labels, rows = make_table(*update)
        table.show_table(labels, rows)
    fresh.show_table(labels, rows)
    got = shown(table)
    assert got == shown(fresh)
    want = reference(labels, rows)
    assert {k: (v[0] if isinstance(k[0], int) else v) for k, v in got.items() if k in want} == want
    assert got["rows"] == len(labels) + 1 and got["cols"] == COLS
    assert [got[("h", c)] for c in range(COLS)] == [HEADERS[c] for c in STEP_COLUMNS]
    assert got["tooltip"] == tr("steps.tooltip")


@settings(max_examples=20, deadline=None)
@given(st.lists(st.one_of(tables, long_tables), min_size=1, max_size=4), st.sampled_from(["fusion", "themed"]))
def test_it_shows_what_the_former_widget_table_showed(qapp, updates, style):
    """Same texts, looks, labels, selection, column widths and pixels after the same updates."""
    new, old = StepTable(), WidgetStepTable()
    try:
        for t in (new, old):
            styled = ThemedStyle() if style == "themed" else QStyleFactory.create("Fusion")
            styled.setParent(t)
            t.setStyle(styled)
            t.resize(640, 260)
            t.show()
        for k, update in enumerate(updates):
            labels, rows = make_table(*update)
            for t in (new, old):
                t.show_table(labels, rows)
                if k == 0:
                    t.selectionModel().select(t.model().index(min(1, len(labels)), 2),
                                              QItemSelectionModel.SelectionFlag.Select)
            qapp.processEvents()
            assert shown(new) == shown(old)
            assert [new.columnWidth(c) for c in range(COLS)] == [old.columnWidth(c) for c in range(COLS)]
            assert new.verticalHeader().width() == old.verticalHeader().width()
            assert sorted((i.row(), i.column()) for i in new.selectedIndexes()) == \
                sorted((i.row(), i.column()) for i in old.selectedIndexes())
        assert new.grab().toImage() == old.grab().toImage()
    finally:
        for t in (new, old):
            t.close()
            t.deleteLater()


def test_a_changed_cell_is_updated_and_only_the_changed_cells_are_signalled(qtbot):
    table = StepTable()
    qtbot.addWidget(table)
    labels, rows = make_table(6, 1.0, 3, 0.0, 1.0)
    table.show_table(labels, rows)
    seen = []
    table.model().dataChanged.connect(lambda a, b, roles: seen.append((a.row(), a.column(), b.row(), b.column())))
    table.show_table(labels, rows.copy())  # the same numbers: nothing to repaint
    assert seen == []
    changed = rows.copy()
    changed[2, 0] = 7.25  # one body cell; its column's total is not shown
    table.show_table(labels, changed)
    assert seen == [(2, 0, 2, 0)]
    assert table.item(2, 0).text() == "7.250" == fmt(changed[2, 0])
    assert table.item(2, 1).text() == fmt(rows[2, 1])
    seen.clear()
    changed = changed.copy()
    changed[4, 5] += 0.5  # a weight: its cell and the weights' total
    table.show_table(labels, changed)
    assert sorted(seen) == [(4, 5, 4, 5), (6, 5, 6, 5)]
    assert table.item(6, 5).text() == fmt(changed[:, 5].sum())
    changed = changed.copy()
    changed[1, 3] = np.nan
    table.show_table(labels, changed)
    assert table.item(1, 3).text() == "NaN"
    seen.clear()
    table.show_table(labels, changed.copy())  # NaN equals NaN here: nothing changed
    assert seen == []


def test_relabelling_and_resizing_follow(qtbot):
    table = StepTable()
    qtbot.addWidget(table)
    labels, rows = make_table(5, 1.0, 1, 0.0, 1.0)
    table.show_table(labels, rows)
    table.show_table(["a", "b", *labels[2:]], rows)
    assert [table.verticalHeaderItem(r).text() for r in range(6)] == ["a", "b", *labels[2:], tr("steps.total")]
    assert table.verticalHeaderItem(1).text() == "b" and table.verticalHeaderItem(5).text() == tr("steps.total")
    for n in (9, 2, 4):
        labels, rows = make_table(n, 2.0, n, 0.0, 3.0)
        table.show_table(labels, rows)
        assert [table.item(r, c).text() for r in range(n) for c in range(COLS)] == \
            [fmt(v) for v in rows.ravel()]
        assert table.rowCount() == n + 1 and table.item(n, 0).text() == "" and table.item(n, 2).font().bold()
    assert table.item(n + 1, 0) is None and table.verticalHeaderItem(n + 1) is None
    with pytest.raises(ValueError):
        table.show_table(["x"], rows)


def test_a_long_table_formats_only_what_is_asked(qtbot):
    n = 1500  # more rows than Qt samples when sizing a column (1000)
    rng = np.random.default_rng(0)
    table = StepTable()
    qtbot.addWidget(table)
    table.resize(600, 300)
    table.show()
    qtbot.waitExposed(table)
    labels = [str(i) for i in range(n)]
    rows = rng.uniform(1, 9, size=(n, COLS))  # every text "d.ddd"
    table.show_table(labels, rows)
    visible = table.verticalHeader().visualIndexAt(table.viewport().height()) + 1
    assert 0 < table.formatted <= COLS * (1000 + visible)  # the rows on screen, and those Qt samples to size
    table.grab()
    before = table.formatted
    changed = rows + rng.uniform(-0.5, 0.5, size=rows.shape)  # new numbers, the same text lengths
    table.show_table(labels, changed)
    table.grab()
    shown_now = table.formatted - before
    assert 0 < shown_now <= (visible + 1) * COLS < n * COLS // 20  # the rows on screen only
    assert all(table.item(r, c).text() == fmt(changed[r, c]) for r in range(visible) for c in range(COLS))
    assert table.formatted == before + shown_now
    assert table.item(n - 1, 6).text() == fmt(changed[n - 1, 6])  # a row far below the view, when asked
    assert table.formatted == before + shown_now + COLS
    table.verticalScrollBar().setValue(table.verticalScrollBar().maximum() // 2)
    table.grab()  # scrolled into view: written before it is painted
    middle = table.verticalHeader().logicalIndexAt(table.viewport().height() // 2)
    assert QTableWidget.item(table, middle, 3).text() == fmt(changed[middle, 3])


class WideItems(QProxyStyle):
    """A Python style that pads item views' items: the table must size its columns the way Qt does."""

    def sizeFromContents(self, kind, option, size, widget=None):  # noqa: N802 - Qt's name
        size = super().sizeFromContents(kind, option, size, widget)
        if kind == QStyle.ContentsType.CT_ItemViewItem:
            size = QSize(size.width() + 13, size.height())
        return size


SIZES = [(40, False), (600, False), (1200, False), (1200, True), (2500, True)]


@pytest.mark.parametrize("style, n, scrolled", [(s, n, up) for s in ("fusion", "themed", "windows") for n, up in SIZES]
                         + [(s, n, up) for s in ("python", "sheet") for n, up in SIZES[::2]])
def test_column_widths_are_qts_own(qtbot, style, n, scrolled):
    """sizeHintForColumn equals QTableView's (which reads every sampled cell through the model)."""
    table = StepTable()
    qtbot.addWidget(table)
    made = {"fusion": lambda: QStyleFactory.create("Fusion"), "themed": ThemedStyle,
            "windows": lambda: QStyleFactory.create("Windows"), "python": WideItems}
    if style == "sheet":
        table.setStyleSheet("QTableView::item { padding: 0 9px; }")
    else:
        styled = made[style]()
        styled.setParent(table)
        table.setStyle(styled)
    font = QFont(table.font())
    font.setPointSize(font.pointSize() + 3)
    table.setFont(font)
    table.resize(560, 320)
    table.show()
    qtbot.waitExposed(table)
    rng = np.random.default_rng(n)
    scores = rng.normal(size=n) * rng.choice([1.0, 50.0, 1e4], size=n)
    scores[rng.random(n) < 0.1] = -np.inf
    table.show_table([str(i) for i in range(n)], step_rows(scores, 0.7))
    if scrolled:
        bar = table.verticalScrollBar()
        bar.setValue(bar.maximum() * 2 // 3)
    ours = [table.sizeHintForColumn(c) for c in range(COLS)]
    table.fill()  # Qt's own reads the cells: every row's texts written
    assert ours == [QTableView.sizeHintForColumn(table, c) for c in range(COLS)]
    table.hide()
    assert [table.sizeHintForColumn(c) for c in range(COLS)] == [QTableView.sizeHintForColumn(table, c)
                                                                 for c in range(COLS)]


def test_copy_gives_the_selection_or_everything_as_tsv(qtbot):
    table = StepTable()
    qtbot.addWidget(table)
    labels, rows = make_table(4, 1.0, 5, 0.0, 2.0)
    table.show_table(labels, rows)
    table.copy()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert len(lines) == 5
    assert lines[2].split("\t") == [fmt(v) for v in rows[2]]
    assert lines[4].split("\t") == [fmt(rows[:, c].sum()) if name in SUMMED else ""
                                    for c, name in enumerate(STEP_COLUMNS)]
    sel = table.selectionModel()
    for r, c in ((1, 2), (1, 5), (3, 2), (3, 5)):
        sel.select(table.model().index(r, c), QItemSelectionModel.SelectionFlag.Select)
    table.copy()
    assert QGuiApplication.clipboard().text() == "\n".join(
        f"{fmt(rows[r, 2])}\t{fmt(rows[r, 5])}" for r in (1, 3)) + "\n"


def test_readers_of_rows_off_screen_get_their_texts(qtbot):
    n = 400
    table = StepTable()
    qtbot.addWidget(table)
    table.resize(600, 240)
    table.show()
    qtbot.waitExposed(table)
    rng = np.random.default_rng(4)
    rows = rng.uniform(1, 9, size=(n, COLS))
    labels = [str(i) for i in range(n)]
    table.show_table(labels, rows)
    rows = rows + 1.0  # every row changes; those off screen are not written yet
    table.show_table(labels, rows)
    far = n - 3
    sel = table.selectionModel()
    sel.select(table.model().index(far, 4), QItemSelectionModel.SelectionFlag.Select)
    assert [i.text() for i in table.selectedItems()] == [fmt(rows[far, 4])]
    table.setCurrentCell(far - 1, 2, QItemSelectionModel.SelectionFlag.NoUpdate)
    assert table.currentItem().text() == fmt(rows[far - 1, 2])
    wanted = fmt(rows[far - 5, 6])
    assert any(i.row() == far - 5 and i.column() == 6 for i in table.findItems(wanted, Qt.MatchFlag.MatchExactly))
    table.copy()
    assert QGuiApplication.clipboard().text() == fmt(rows[far, 4]) + "\n"
    table.keyboardSearch("zzz")  # Qt searches the cells' texts: every row written
    assert all(QTableWidget.item(table, r, c).text() == fmt(rows[r, c]) for r in range(n) for c in range(COLS))


def test_only_the_columns_whose_longest_text_changed_are_sized_again(qtbot):
    """A column whose texts keep their lengths keeps its width (here one the user dragged wider)."""
    table = StepTable()
    qtbot.addWidget(table)
    table.resize(640, 260)
    table.show()
    qtbot.waitExposed(table)
    labels = ["a", "b", "c"]
    table.show_table(labels, step_rows(np.array([1.0, 2.0, 3.0]), 1.0))
    table.setColumnWidth(0, 300)  # the user widens the scores' column
    before = [table.columnWidth(c) for c in range(COLS)]
    # the same scores (column s keeps its texts), another temperature: the other columns' texts change
    table.show_table(labels, step_rows(np.array([1.0, 2.0, 3.0]), 0.37))
    after = [table.columnWidth(c) for c in range(COLS)]
    assert after[0] == 300
    grew = [c for c in range(1, COLS) if after[c] != before[c]]
    assert grew  # the test moves some other column
    for c in grew:
        assert after[c] == max(table.sizeHintForColumn(c), table.horizontalHeader().sectionSizeHint(c))
