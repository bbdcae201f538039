"""The Calculator view, driven as a user would."""

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QGuiApplication
from PySide6.QtWidgets import QLineEdit

import compute
from gui.model.texts import presets
from gui.widgets.score_table import LABEL, VALUE


def type_into(qtbot, view, row, col, text):
    """Double-click-free edit: open the cell's editor, type, press Enter."""
    table = view.editor.table
    index = view.editor.model.index(row, col)
    table.setCurrentIndex(index)
    table.edit(index)
    (editor,) = table.viewport().findChildren(QLineEdit)
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not table.viewport().findChildren(QLineEdit))  # commits queued


def settle(qtbot, view):
    """Wait for the throttled redraw to catch up with the state."""
    qtbot.wait(40)
    view.flush()


def test_opens_with_the_default_scores_and_their_weights(make_view):
    view = make_view("calculator")
    (heights,) = view.bars.heights
    assert np.round(heights, 3).tolist() == [0.609, 0.224, 0.136, 0.030]
    assert view.steps.rowCount() == 5
    assert view.steps.item(4, 5).text() == "1.000"  # the totals row sums the weights
    assert [view.steps.item(r, 2).text() for r in range(4)] == ["7.389", "2.718", "1.649", "0.368"]
    assert view.readouts["readout.max_weight"].text().startswith("0.609 (Token 1)")


def test_typing_a_score_redraws_bars_and_steps(qtbot, make_view, lab):
    view = make_view("calculator")
    type_into(qtbot, view, 3, VALUE, "4.5")
    assert lab.scores.values.tolist() == [2.0, 1.0, 0.5, 4.5]
    settle(qtbot, view)
    expected = compute.softmax(np.array([2.0, 1.0, 0.5, 4.5]))
    np.testing.assert_array_equal(view.bars.heights[0], expected)
    assert view.steps.item(3, 0).text() == "4.500"
    h = float(compute.entropy(expected))
    assert view.readouts["readout.entropy"].text() == f"{h:.3f} nats"
    assert view.readouts["readout.perplexity"].text() == f"{math.exp(h):.3f}"
    assert "Token 4" in view.readouts["readout.max_weight"].text()


def test_typing_a_label_relabels_the_bars(qtbot, make_view, lab):
    view = make_view("calculator")
    type_into(qtbot, view, 0, LABEL, "the")
    settle(qtbot, view)
    assert lab.scores.labels[0] == "the"
    assert view.steps.verticalHeaderItem(0).text() == "the"
    ticks = view.bars.getPlotItem().getAxis("bottom")._tickLevels[0]
    assert ticks[0] == (0, "the")


@pytest.mark.parametrize("text", ["abc", ""])
def test_bad_input_is_marked_red_and_the_last_good_value_kept(qtbot, make_view, lab, text):
    view = make_view("calculator")
    messages = []
    view.status.connect(messages.append)
    type_into(qtbot, view, 1, VALUE, text)
    model = view.editor.model
    index = model.index(1, VALUE)
    assert lab.scores.values[1] == 1.0
    assert model.data(index) == text  # what the user typed stays visible
    assert isinstance(model.data(index, Qt.ItemDataRole.BackgroundRole), QBrush)
    tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert "keeping the last good value 1.0" in tip
    assert messages
    assert "1.0" in messages[-1]
    type_into(qtbot, view, 1, VALUE, "1.25")  # a good value clears the mark
    assert lab.scores.values[1] == 1.25
    assert model.data(index, Qt.ItemDataRole.BackgroundRole) is None


@pytest.mark.parametrize(
    ("text", "note"),
    [("-inf", "zero weight"), ("inf", "all the weight"), ("nan", "NaN"), ("1e400", "read as inf")],
)
def test_special_values_are_accepted_and_explained(qtbot, make_view, lab, text, note):
    view = make_view("calculator")
    messages = []
    view.status.connect(messages.append)
    type_into(qtbot, view, 2, VALUE, text)
    assert note in messages[-1]
    settle(qtbot, view)
    expected = compute.softmax(lab.scores.values)
    np.testing.assert_array_equal(view.bars.heights[0], np.nan_to_num(expected, nan=0.0))


def test_minus_inf_gets_exactly_zero_weight(qtbot, make_view):
    view = make_view("calculator")
    type_into(qtbot, view, 0, VALUE, "-inf")
    settle(qtbot, view)
    assert view.bars.heights[0][0] == 0.0
    assert view.steps.item(0, 5).text() == "0.000"


def test_rows_can_be_added_removed_and_reordered(qtbot, make_view, lab):
    view = make_view("calculator")
    ed = view.editor
    ed.table.setCurrentIndex(ed.model.index(0, VALUE))
    qtbot.mouseClick(ed.buttons["add"], Qt.MouseButton.LeftButton)
    assert len(lab.scores) == 5
    assert lab.scores.values[1] == 0.0
    qtbot.mouseClick(ed.buttons["down"], Qt.MouseButton.LeftButton)
    assert lab.scores.values.tolist() == [2.0, 1.0, 0.0, 0.5, -1.0]
    ed.table.setCurrentIndex(ed.model.index(0, VALUE))
    qtbot.mouseClick(ed.buttons["up"], Qt.MouseButton.LeftButton)  # already at the top
    assert lab.scores.values[0] == 2.0
    ed.table.clearSelection()
    ed.table.setCurrentIndex(ed.model.index(2, VALUE))
    qtbot.mouseClick(ed.buttons["remove"], Qt.MouseButton.LeftButton)
    assert lab.scores.values.tolist() == [2.0, 1.0, 0.5, -1.0]
    settle(qtbot, view)
    assert view.steps.rowCount() == 5
    assert len(view.bars.heights[0]) == 4


def test_the_last_row_cannot_be_removed(qtbot, make_view, lab):
    view = make_view("calculator")
    messages = []
    view.status.connect(messages.append)
    lab.scores.set_values([3.0, 1.0])
    ed = view.editor
    ed.table.selectAll()
    qtbot.mouseClick(ed.buttons["remove"], Qt.MouseButton.LeftButton)
    assert len(lab.scores) == 2
    assert "at least one score" in messages[-1]
    ed.table.clearSelection()
    ed.table.setCurrentIndex(ed.model.index(0, VALUE))
    qtbot.mouseClick(ed.buttons["remove"], Qt.MouseButton.LeftButton)
    assert lab.scores.values.tolist() == [1.0]
    assert not ed.buttons["remove"].isEnabled()
    ed.remove_rows()
    assert len(lab.scores) == 1
    assert "at least one score" in messages[-1]


@pytest.mark.parametrize("index", range(5))
def test_presets_load_the_articles_examples(qtbot, make_view, lab, index):
    view = make_view("calculator")
    name, values = presets()[index]
    view.editor.presets.setCurrentIndex(index + 1)
    view.editor.presets.activated.emit(index + 1)
    assert tuple(lab.scores.values) == values
    settle(qtbot, view)
    np.testing.assert_array_equal(view.bars.heights[0], compute.softmax(np.array(values)))


def test_paste_a_spreadsheet_column_extends_the_table(qtbot, make_view, lab):
    view = make_view("calculator")
    view.editor.table.setCurrentIndex(view.editor.model.index(2, VALUE))
    QGuiApplication.clipboard().setText("7\n8\r\n9\n")
    view.editor.paste()
    assert lab.scores.values.tolist() == [2.0, 1.0, 7.0, 8.0, 9.0]


def test_paste_a_tsv_block_with_a_header_and_a_bad_cell(qtbot, make_view, lab):
    view = make_view("calculator")
    messages = []
    view.status.connect(messages.append)
    view.editor.table.setCurrentIndex(view.editor.model.index(0, LABEL))
    view.editor.paste("word\tlogit\nthe\t5.2\ncat\toops\nsat\t1.8\n")
    assert lab.scores.labels[:3] == ("the", "cat", "sat")
    assert lab.scores.values.tolist() == [5.2, 1.0, 1.8, -1.0]  # 'oops' kept the old 1.0
    model = view.editor.model
    assert model.data(model.index(1, VALUE)) == "oops"
    assert "1 cell(s) were not numbers" in messages[-1]


def test_copy_gives_tsv_that_pastes_back(qtbot, make_view, lab):
    view = make_view("calculator")
    view.editor.table.clearSelection()
    view.editor.copy()
    text = QGuiApplication.clipboard().text()
    assert text.splitlines()[0] == "Token 1\t2.0"
    lab.scores.set_values([0.0])
    view.editor.table.setCurrentIndex(view.editor.model.index(0, LABEL))
    view.editor.paste(text)
    assert lab.scores.values.tolist() == [2.0, 1.0, 0.5, -1.0]
    assert lab.scores.labels == ("Token 1", "Token 2", "Token 3", "Token 4")


def test_step_table_copies_as_tsv(make_view):
    view = make_view("calculator")
    view.steps.clearSelection()
    view.steps.copy()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert len(lines) == 5
    assert lines[0].split("\t")[5] == "0.609"


def test_temperature_slider_changes_the_step_table(qtbot, make_view, lab):
    view = make_view("calculator")
    view.temperature.spin.setValue(2.0)
    assert lab.models["calculator"].temperature == 2.0
    settle(qtbot, view)
    assert view.steps.item(0, 1).text() == "1.000"  # s/T = 2/2
    np.testing.assert_array_equal(view.bars.heights[0], compute.softmax(lab.scores.values, temperature=2.0))
