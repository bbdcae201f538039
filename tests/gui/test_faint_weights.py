"""Small weights stay visible: thin bars keep their fill, and the Attention view says how to stretch faint weights.

At n = 512 the query row's 512 bars are under half a pixel wide; their 1-pixel outline in the background
colour covered every fill, so the row looked empty even with Auto colour range on. And on the fixed 0..1
colours a head whose rows peak near 0.02 looks uniformly dark: a note points at Auto colour range.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from gui import theme as themes
from gui.model.texts import tr
from gui.widgets.bar_chart import OUTLINE_MIN_PX, BarChart


def _accent_share(chart: BarChart) -> float:
    """The share of the plot's pixels drawn in the bars' own colour (the accent)."""
    QApplication.processEvents()
    image = chart.grab().toImage()
    want = QColor(themes.colour(themes.current(), "accent"))
    rgb = np.array([want.red(), want.green(), want.blue()])
    w, h = image.width(), image.height()
    pixels = np.array([[image.pixelColor(x, y).getRgb()[:3] for x in range(0, w, 2)] for y in range(0, h, 2)])
    return float((np.abs(pixels - rgb).sum(axis=-1) < 30).mean())


def _bar_width_px(chart: BarChart) -> float:
    vb = chart.getPlotItem().getViewBox()
    (x0, x1), _ = vb.viewRange()
    return chart._geometry()[0] * vb.width() / (x1 - x0)


@pytest.mark.parametrize("categories", [8, 512])
def test_bars_keep_their_fill_at_any_width(qtbot, categories):
    chart = BarChart("bars", [("α", "accent")], value_labels=False)
    qtbot.addWidget(chart)
    chart.resize(320, 240)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_data(tuple(str(i) for i in range(categories)), [np.full(categories, 0.9)])
    chart.set_y_range(0.0, 1.0)
    QApplication.processEvents()
    thin = _bar_width_px(chart) < OUTLINE_MIN_PX
    assert thin == (categories == 512)
    pen = chart._bars[0].opts["pen"]
    if thin:  # no outline to hide the fill
        assert pen.style() == pen.style().NoPen
    else:  # wide bars keep the background-coloured gap between neighbours
        assert pen.color().name() == QColor(themes.current().background).name()
    # 0.8 of each category is bar, 0.9 of the height: a good part of the plot shows the bars' colour
    assert _accent_share(chart) > 0.25


def test_the_outline_comes_back_when_the_bars_widen(qtbot):
    chart = BarChart("bars", [("α", "accent")], value_labels=False)
    qtbot.addWidget(chart)
    chart.resize(320, 240)
    chart.show()
    qtbot.waitExposed(chart)
    chart.set_data(tuple(str(i) for i in range(512)), [np.full(512, 0.5)])
    QApplication.processEvents()
    assert chart._bars[0].opts["pen"].style() == chart._bars[0].opts["pen"].style().NoPen
    chart.set_data(tuple(str(i) for i in range(4)), [np.full(4, 0.5)])
    QApplication.processEvents()
    assert chart._bars[0].opts["pen"].color().name() == QColor(themes.current().background).name()


def _wait_drawn(qtbot, view):
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=30000)
    view.flush()


def test_faint_weights_get_a_note_until_auto_colour_range_is_on(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"n": 512, "d_k": 64})
    view = make_view("attention")
    _wait_drawn(qtbot, view)
    core = model.cached_core()
    peaks = core.head_weights(0).max(axis=1)
    typical = float(np.median(peaks))
    assert typical < 0.1  # random Q, K at n = 512: rows peak near 0.02
    note = tr("attention.faint.note", top=f"{typical:.3f}")
    assert note in view.note.text()
    # the query row's bars: fixed 0..1.12, the faint row drawn as short (but visible) bars
    assert view.row_panel.bars.getPlotItem().getViewBox().viewRange()[1][1] >= 1.12
    view.auto_box.setChecked(True)
    view.flush()
    assert note not in view.note.text()
    row = model.result_for(core).row
    lo, hi = view.row_panel.bars._y_range
    assert hi == pytest.approx(row.max() * 1.15)
    assert lo == pytest.approx(-0.01 * hi / 1.12)  # the margin below 0 follows the range (was -0.01)
    assert model.auto_levels == "on"  # the switch is the model's: saved in sessions, undoable
    model.set_param("auto_levels", "off")
    view.flush()
    assert not view.auto_box.isChecked()
    assert note in view.note.text()


def test_peaked_weights_get_no_note(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"n": 8, "d_k": 64})
    view = make_view("attention")
    _wait_drawn(qtbot, view)
    peaks = model.core().head_weights(0).max(axis=1)
    assert float(np.median(peaks)) >= 0.1
    assert tr("attention.faint.note", top="")[:20] not in view.note.text()


def test_auto_colour_range_is_undoable_and_saved(qapp):
    from PySide6.QtGui import QUndoStack

    from gui import undo
    from gui.model.lab import Lab
    from gui.model.session import Session

    lab = Lab()
    stack = QUndoStack()
    recorder = undo.UndoRecorder(stack)
    model = lab.models["attention"]
    recorder.watch(model, lambda field: f"attention: {field}")
    model.set_param("auto_levels", "on")
    assert stack.count() == 1
    saved = Session.from_json(lab.session("attention").to_json())
    stack.undo()
    assert model.auto_levels == "off"
    fresh = Lab()
    fresh.restore(saved)
    assert fresh.models["attention"].auto_levels == "on"
    stack.clear()
