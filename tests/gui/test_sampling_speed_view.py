"""The Sampling view's redraw shortcuts: hidden tabs catch up when shown; batched bar updates end where single ones do."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from gui.views.sampling.bars import FitBars
from tests.gui.image_compare import to_array


@pytest.fixture
def view(make_view, lab):
    lab.models["sampling"].vocab = 3000
    v = make_view("sampling")
    v.flush()
    return v


def settle(qtbot, view) -> None:
    """Let the throttled (live, not flushed) redraw run."""
    qtbot.waitUntil(lambda: not view.redraw_pending, timeout=5000)
    for _ in range(3):
        QApplication.processEvents()


def assert_vocab_tab_shows_the_model(view) -> None:
    m = view.model
    r = m.result(view.scores)
    before, after = view.bars.heights
    np.testing.assert_array_equal(before, r.probs[r.shown])
    np.testing.assert_array_equal(after, r.filtered[r.shown])
    x, y = view.cumulative.curve.getData()
    np.testing.assert_array_equal(x, np.log10(r.cum_rank))
    np.testing.assert_array_equal(y, r.cum_prob)
    d = m.cached_draws(view.scores)
    expected, observed = view.draw_bars.heights
    np.testing.assert_array_equal(expected, m.draws * r.filtered[r.shown])
    np.testing.assert_array_equal(observed, d.counts[r.shown])
    c = m.t_curve_result(view.scores)
    np.testing.assert_array_equal(view.curves.marker.getData()[1], [c.y_now])


@pytest.mark.parametrize("tab", ["gumbel", "router", "speculative"])
def test_knobs_moved_on_another_tab_show_on_the_vocabulary_tab(qtbot, view, tab):
    view.select_tab(tab)
    settle(qtbot, view)
    old = view.bars.heights[1].copy()
    view.model.set_param("temperature", 0.4)  # as a slider move does: a live redraw, not a flush
    view.model.set_param("shown", 20)
    settle(qtbot, view)
    r = view.model.result(view.scores)
    assert view.readouts["sampling.readout.kept"].text().startswith(f"{r.kept:,}")  # beside every tab
    view.select_tab("vocab")
    settle(qtbot, view)
    assert_vocab_tab_shows_the_model(view)
    assert view.bars.heights[1].size == 20 and not np.array_equal(view.bars.heights[1][: old.size], old)


def test_a_flush_draws_every_tab_whichever_is_shown(view):
    view.select_tab("router")
    view.model.set_param("temperature", 2.0)
    view.flush()  # exports: every plot current
    assert_vocab_tab_shows_the_model(view)


def text_states(chart):
    """Each label's text and visibility, and where and how a shown one is drawn (a hidden one keeps old state)."""
    out = []
    for _s, _i, t in chart.values.items():
        pos = t.pos()
        out.append((t.toPlainText(), t.isVisible()) + ((t.angle, (t.anchor.x(), t.anchor.y()), (pos.x(), pos.y()),
                                                        t.color.name()) if t.isVisible() else ()))
    return out


def test_batched_bars_end_as_the_same_calls_one_by_one(qtbot):
    """FitBars.show_bars batches set_data and set_y_range; a chart given the same data unbatched looks the same."""
    rng = np.random.default_rng(5)
    labels = [f"t{i}" for i in range(14)]
    batched, single = (FitBars("bars", [("a", "accent"), ("b", "secondary")], value_labels=True) for _ in range(2))
    holders = []
    for chart in (batched, single):
        holder = QWidget()  # a closed pyqtgraph plot drops its PlotItem: the test closes a holder
        qtbot.addWidget(holder)
        QVBoxLayout(holder).addWidget(chart)
        holder.resize(520, 320)
        holder.show()
        holders.append(holder)
    qtbot.waitExposed(holders[1])
    for _ in range(4):  # several updates, as slider steps
        heights = [rng.exponential(size=14) * rng.uniform(0.1, 3), rng.exponential(size=14)]
        batched.show_bars(labels, heights)
    single.set_data(labels, heights)  # the one-by-one path, straight to the last data
    top = max(float(h.max()) for h in heights)
    single.set_y_range(0.0, top * 1.15)
    QApplication.processEvents()
    vb_b, vb_s = (c.getPlotItem().getViewBox() for c in (batched, single))
    assert vb_b.viewRange() == vb_s.viewRange()
    assert text_states(batched) == text_states(single)
    assert any(state[1] for state in text_states(batched))  # some labels are shown
    np.testing.assert_array_equal(to_array(batched.grab().toImage()), to_array(single.grab().toImage()))
