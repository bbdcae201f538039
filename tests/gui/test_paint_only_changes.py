"""Paint only what changed: a redraw with the same inputs paints no plot; a change paints the plots it touches."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

from gui import registry
from gui.qt import pg
from gui.widgets import unchanged


class Paints(QObject):
    """Counts paint events per plot (by key) on the plots' viewports."""

    def __init__(self, plots: dict):
        super().__init__()
        self.counts = dict.fromkeys(plots, 0)
        self._keys = {}
        for key, plot in plots.items():
            self._keys[id(plot.viewport())] = key
            plot.viewport().installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint and id(obj) in self._keys:
            self.counts[self._keys[id(obj)]] += 1
        return False

    def settle(self, qtbot) -> dict:
        """Process events until nothing paints any more; the plots that painted meanwhile."""
        before = dict(self.counts)
        quiet, last = 0, sum(self.counts.values())
        for _ in range(200):
            QApplication.processEvents()
            qtbot.wait(5)
            now = sum(self.counts.values())
            quiet = quiet + 1 if now == last else 0
            last = now
            if quiet >= 3:
                break
        return {k for k, v in self.counts.items() if v > before[k]}

    def across(self, qtbot, view, change) -> dict:
        """Each plot's paints from ``change()`` (after which the view's throttled redraw and its paints
        are waited for), from a quiet start."""
        self.settle(qtbot)
        before = dict(self.counts)
        change()
        qtbot.waitUntil(lambda: not view.redraw_pending, timeout=5000)
        self.settle(qtbot)
        return {key: self.counts[key] - before[key] for key in before}


def shown(make_view, qtbot, name):
    view = make_view(name)
    view.flush()
    paints = Paints(view.plots())
    paints.settle(qtbot)
    return view, paints


@pytest.mark.parametrize("name", [spec.name for spec in registry.VIEWS])
def test_a_redraw_of_the_same_inputs_paints_no_plot(qtbot, make_view, name):
    view, paints = shown(make_view, qtbot, name)
    view.flush()  # every panel is given its (unchanged) result again
    assert paints.settle(qtbot) == set()


def test_a_change_paints_the_plots_it_touches_and_no_other(qtbot, make_view, lab):
    view, paints = shown(make_view, qtbot, "temperature")
    lab.models["temperature"].set_param("temperature", 2.5)
    view.flush()
    assert paints.settle(qtbot) == set(view.plots())  # both plots depend on T

    learning = lab.models["learning"]
    learning.set_param("epochs", 4)
    learning.set_param("hidden", 8)
    view, paints = shown(make_view, qtbot, "learning")
    learning.set_param("calibration_t", 3.0)  # the Calibrate tab's: the Train tab shown keeps its paint
    view.flush()
    assert paints.settle(qtbot) == set()
    learning.set_param("epoch", 2)  # every Train plot marks the epoch shown
    view.flush()
    assert paints.settle(qtbot) == set(view.plots())


def test_the_setters_skip_identical_data_and_apply_any_difference(qtbot):
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    curve = w.getPlotItem().plot([], [])
    assert unchanged.set_curve(curve, [0, 1, 2], [1.0, np.nan, 3.0])
    assert not unchanged.set_curve(curve, np.array([0.0, 1, 2]), np.array([1.0, np.nan, 3.0]))  # NaN == NaN
    assert unchanged.set_curve(curve, [0, 1, 2], [1.0, 2.0, 3.0])
    assert unchanged.set_curve(curve, [0, 1, 2], [1.0, 2.0, 3.0], connect="pairs")  # an option changed
    bars = pg.BarGraphItem(x=[0.0], height=[1.0], width=0.8)
    assert not unchanged.set_opts(bars, x=[0.0], height=[1.0], width=0.8)
    assert unchanged.set_opts(bars, x=[0.0], height=[np.nextafter(1.0, 2.0)], width=0.8)  # one ulp is a change
    image = pg.ImageItem()
    buffer = np.zeros((3, 3))
    assert unchanged.set_image(image, buffer, levels=(0, 1))
    buffer[1, 1] = 0.5  # the caller filled its buffer again: still a change
    assert unchanged.set_image(image, buffer, levels=(0, 1))
    assert not unchanged.set_image(image, buffer.copy(), levels=(0, 1))
    assert unchanged.set_image(image, buffer, levels=(0, 2))
