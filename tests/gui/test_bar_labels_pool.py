"""The pool of the bar labels' text items (gui/widgets/bar_labels.py): when the labels outgrow it, hidden
spares are made once the app is idle, so a slider sweeping the count up makes text items in O(log n)
batches instead of at every step, and what the chart shows stays that of a chart built fresh."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from gui.qt import pg
from gui.widgets import bar_labels
from tests.gui.test_bar_labels_speed import assert_same_labels, make_chart, on_screen, settle
from tests.gui.test_paint_only_changes import Paints

SERIES = 2  # make_chart's series


@pytest.fixture
def made(monkeypatch):
    """Counts the pyqtgraph text items made, in a list: made[0]."""
    count = [0]
    init = pg.TextItem.__init__

    def counting(self, *args, **kwargs):
        count[0] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(pg.TextItem, "__init__", counting)
    return count


def heights(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.05, 1.0, n) for _ in range(SERIES)]


def idle(qtbot, chart) -> None:
    """What the app does between two slider steps a person makes: idle time (the spares are made then)."""
    timer = getattr(chart.values, "_spare_timer", None)
    if timer is not None and timer.isActive():
        qtbot.waitUntil(lambda: not timer.isActive(), timeout=2000)
    settle()


def scene_texts(chart) -> list[str]:
    """The texts of every visible text item in the chart's scene (what is painted and exported)."""
    return sorted(t.toPlainText() for t in chart.scene().items() if isinstance(t, pg.TextItem) and t.isVisible())


def test_a_sweep_of_the_count_makes_text_items_in_few_batches(qtbot, made):
    chart, _holder = make_chart(qtbot, width=900, percent=False)
    counts = list(range(2, 41, 2))  # 4 .. 80 labels, one step at a time
    batches = 0
    for step, n in enumerate(counts):
        before = made[0]
        chart.set_data([f"c{i}" for i in range(n)], heights(n, step))
        settle()
        idle(qtbot, chart)
        batches += made[0] > before
    first, most = SERIES * counts[0], SERIES * counts[-1]
    # a step that outgrows the pool leaves it SPARE_GROWTH times the count it reached: each such step
    # (a batch) grows the pool by that factor at least, so O(log n) batches
    assert batches <= 2 + math.ceil(math.log(most / first) / math.log(bar_labels.SPARE_GROWTH))
    assert batches < len(counts) // 2  # the former pool grew at every step: 20 batches here
    assert most <= made[0] <= math.ceil(bar_labels.SPARE_GROWTH * most)  # never many more items than used
    assert len(chart.values._texts) + len(chart.values._spares) == made[0]


def test_a_sweep_up_and_down_shows_what_a_fresh_chart_shows(qtbot):
    chart, _holder = make_chart(qtbot, width=900, percent=False)
    sweep = [3, 5, 8, 12, 17, 23, 30, 23, 14, 6, 2, 9, 27, 31]
    checked = {8, 30, 6, 2, 27, 31}
    for step, n in enumerate(sweep):
        labels, hs = [f"c{i}" for i in range(n)], heights(n, step)
        chart.set_data(labels, hs)
        settle()
        if n in checked:
            fresh, fresh_holder = make_chart(width=900, percent=False)
            try:
                fresh.set_data(labels, hs)
                settle()
                assert_same_labels(chart, fresh)
                assert scene_texts(chart) == scene_texts(fresh)  # the spares are neither painted nor exported
                assert len(on_screen(chart)) == len(on_screen(fresh)) > 0
            finally:
                fresh_holder.close()
                fresh_holder.deleteLater()
        idle(qtbot, chart)
    unused = chart.values._texts[len(chart.values._keys):] + chart.values._spares
    assert chart.values._spares and not any(t.isVisible() for t in unused)


def test_spares_made_while_idle_change_nothing_on_screen(qtbot, monkeypatch):
    monkeypatch.setattr(bar_labels, "SPARE_DELAY_MS", 60_000)  # not before this test says (a loaded machine)
    chart, _holder = make_chart(qtbot, width=900, percent=True)
    n = 20
    chart.set_data([f"c{i}" for i in range(n)], heights(n, 7))
    settle()
    shown, texts = on_screen(chart), scene_texts(chart)
    assert len(chart.values._texts) == SERIES * n  # the redraw made only what it needed
    timer = chart.values._spare_timer
    assert timer.isActive()
    paints = Paints({"chart": chart})
    paints.settle(qtbot)
    before = dict(paints.counts)
    timer.start(0)  # the app is idle now
    qtbot.waitUntil(lambda: not timer.isActive(), timeout=2000)
    paints.settle(qtbot)
    assert paints.counts == before  # making them repaints nothing (they join no plot yet)
    assert len(chart.values._texts) + len(chart.values._spares) == math.ceil(bar_labels.SPARE_GROWTH * SERIES * n)
    assert on_screen(chart) == shown and scene_texts(chart) == texts
    assert chart.values.items() and len(chart.values.items()) == SERIES * n  # spares are no labels


def test_a_chart_closed_before_its_spares_are_made_is_left_alone(qtbot):
    chart, holder = make_chart(percent=False)
    chart.set_data([f"c{i}" for i in range(12)], heights(12, 3))
    holder.close()
    holder.deleteLater()
    QApplication.processEvents()
    qtbot.wait(3 * bar_labels.SPARE_DELAY_MS)  # a timer firing into a deleted plot would raise here
