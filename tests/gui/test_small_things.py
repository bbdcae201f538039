"""Issue 13 §9: long typed text is not echoed whole, junk rows stay out of the scores,
labels show literally (never as rich text), and CSV labels cannot run as formulas."""

import csv
import io

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtText
from PySide6.QtGui import QTextDocument

from gui.export import csv_text
from gui.model.base import ExportArray
from gui.widgets.cell_table import ECHO_LIMIT
from gui.widgets.score_table import VALUE

BIG = "9" * 1_000 + "x" * 3_000_000  # a multi-megabyte cell that is not a number


def shown(text: str) -> str:
    """What Qt shows for a tooltip/label text in auto format: rich text is rendered, so tags vanish."""
    if QtText.mightBeRichText(text):  # QtGui's Qt namespace (qtpy used to copy it into QtCore's)
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text


# -- (a) a huge typed cell is echoed shortened ------------------------------------------
def test_a_huge_refused_cell_is_echoed_shortened(make_view, lab):
    view = make_view("calculator")
    messages: list[str] = []
    view.status.connect(messages.append)
    model = view.editor.model
    assert not model.set_cell_text(1, VALUE, BIG)
    assert lab.scores.values[1] == 1.0  # the last good value is kept
    index = model.index(1, VALUE)
    assert messages and len(messages[-1]) <= ECHO_LIMIT
    assert messages[-1].endswith("\u2026")
    assert len(model.data(index, Qt.ItemDataRole.ToolTipRole)) <= ECHO_LIMIT
    assert len(model.data(index, Qt.ItemDataRole.DisplayRole)) <= ECHO_LIMIT
    assert model.data(index, Qt.ItemDataRole.EditRole) == BIG  # the editor still holds what was typed


def test_the_status_bar_shows_a_shortened_message(window):
    window.show_status("a" * 2_000_000)
    message = window.statusBar().currentMessage()
    assert 0 < len(message) <= ECHO_LIMIT
    assert message.startswith("aaa") and message.endswith("\u2026")


# -- (b) junk in new rows does not enter the softmax -------------------------------------
def test_junk_pasted_into_new_rows_stays_out_of_the_scores(make_view, lab):
    view = make_view("calculator")
    messages: list[str] = []
    view.status.connect(messages.append)
    editor, model = view.editor, view.editor.model
    editor.table.setCurrentIndex(model.index(3, VALUE))
    editor.paste("-1.0\nabc\n5")
    # the row used by the views: the four old scores only (no 0.0 for "abc", and not the 5 after it)
    np.testing.assert_array_equal(lab.scores.values, [2.0, 1.0, 0.5, -1.0])
    assert model.rowCount() == 6  # both new rows are shown
    assert model.data(model.index(4, VALUE)) == "abc"
    assert model.data(model.index(4, VALUE), Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(model.index(5, VALUE)) == "5.0"
    assert "left out" in messages[-1] and "2 new row" in messages[-1]
    assert "left out" in model.data(model.index(4, VALUE), Qt.ItemDataRole.ToolTipRole)
    view.flush()
    assert len(view.model.result(lab.scores).labels) == 4

    assert model.set_cell_text(4, VALUE, "3")  # fixed: both rows join the scores, in table order
    np.testing.assert_array_equal(lab.scores.values, [2.0, 1.0, 0.5, -1.0, 3.0, 5.0])
    assert lab.scores.labels[4:] == ("Token 5", "Token 6")
    assert model.rowCount() == 6 and not model.pending
    assert model.data(model.index(4, VALUE), Qt.ItemDataRole.BackgroundRole) is None


def test_a_pending_row_can_be_removed_and_survives_an_added_row(make_view, lab):
    view = make_view("calculator")
    editor, model = view.editor, view.editor.model
    editor.table.setCurrentIndex(model.index(3, VALUE))
    editor.paste("-1\n7\nnope")
    assert lab.scores.values.tolist() == [2.0, 1.0, 0.5, -1.0, 7.0]
    assert model.rowCount() == 6
    lab.scores.insert(0, 9.0)  # a change of the row from elsewhere: the pending row stays, still marked
    assert model.rowCount() == 7
    assert model.data(model.index(6, VALUE)) == "nope"
    editor.table.clearSelection()
    editor.table.setCurrentIndex(model.index(6, VALUE))
    editor.remove_rows()
    assert model.rowCount() == 6 and len(lab.scores) == 6 and not model.pending


# -- (c) labels are plain text ---------------------------------------------------------------
def test_a_label_with_tags_shows_literally_in_readouts(make_view, lab):
    view = make_view("calculator")
    lab.scores.set_label(0, "<b>x</b>")  # Token 1 has the largest score
    view.flush()
    readout = view.readouts["readout.max_weight"]
    assert "<b>x</b>" in readout.text()
    assert readout.textFormat() == Qt.TextFormat.PlainText
    for label in view.readouts.values():
        assert label.textFormat() == Qt.TextFormat.PlainText


def test_the_ratio_readout_keeps_its_formula_rich(make_view):
    view = make_view("temperature")
    view.flush()
    readout = view.readouts["readout.ratio"]
    assert "<sup>" in readout.text()
    assert readout.textFormat() == Qt.TextFormat.RichText


def test_a_label_with_tags_shows_literally_on_a_slider(make_view, lab):
    view = make_view("simplex")  # its score sliders are named by the labels
    lab.scores.set_label(0, "<b>x</b>")
    slider = view.sliders[0]
    assert slider.label.text() == "<b>x</b>"
    assert slider.label.textFormat() == Qt.TextFormat.PlainText


def test_typed_tags_show_literally_in_the_cell_tooltip(make_view):
    view = make_view("calculator")
    model = view.editor.model
    model.set_cell_text(1, VALUE, "<b>x</b>")
    tip = model.data(model.index(1, VALUE), Qt.ItemDataRole.ToolTipRole)
    assert "'<b>x</b>' is not a number" in shown(tip)


# -- (d) CSV injection -----------------------------------------------------------------------------
def test_csv_labels_that_look_like_formulas_are_defused():
    labels = ("=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "ok", "a=b")
    array = ExportArray(np.array([1.0, -1.0, 0.5, -0.25, 2.0, 3.0]), ("=p",), labels)
    rows = list(csv.reader(io.StringIO(csv_text(array))))
    assert rows[0] == ["label", "'=p"]
    got = [r[0] for r in rows[1:]]
    assert got == ["'" + lb for lb in labels[:4]] + ["ok", "a=b"]
    assert [float(r[1]) for r in rows[1:]] == [1.0, -1.0, 0.5, -0.25, 2.0, 3.0]  # numbers stay numbers
