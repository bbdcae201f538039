"""Slider speed work in the Attention, Online, Precision and Gradients views: the shortcuts change nothing shown.

* A large Attention input computes in the worker: the redraw that only starts the job does not count
  in ``redraw_count`` (what tests and bench/gui_latency.py wait for); the one drawing the landed core does.
* The views run their plots' deferred auto-ranges in the redraw, so a changed plot paints once.
* The precision tables set a changed tooltip without telling the view (no repaint), and it is current.
* Random Q, K, V are sliced from one kept stream of normals: the draws a fresh generator gives.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

import compute
from gui.model.attention import core as core_module
from gui.model.attention import sources
from gui.model.normal_stream import NormalStream


def settle(qtbot, ms: int = 30) -> None:
    QApplication.processEvents()
    qtbot.wait(ms)


# -- the Attention view's worker and redraw_count -------------------------------------------------
@pytest.fixture
def gated(monkeypatch):
    """core_steps (the view's job) waits for ``gate`` (set it to let a job finish)."""
    real = core_module.core_steps
    gate = threading.Event()

    def slow(inputs, **options):
        if threading.current_thread() is threading.main_thread():  # model.core(): not the view's job
            return (yield from real(inputs, **options))
        gate.wait(10)
        return (yield from real(inputs, **options))

    monkeypatch.setattr(core_module, "core_steps", slow)
    return gate


def test_a_redraw_that_only_starts_the_job_does_not_count(qtbot, make_view, lab, gated):
    model = lab.models["attention"]
    model.update_from_dict({"n": 512, "d_k": 4})  # 512 x 512 cells: the worker's
    model.core()
    view = make_view("attention")
    qtbot.waitUntil(lambda: not view.compute_running and not view.computing, timeout=20000)
    settle(qtbot)
    before = view.redraw_count
    model.d_k = 8
    qtbot.waitUntil(lambda: view.core_job.busy, timeout=5000)
    settle(qtbot)
    assert view.computing
    assert view.redraw_count == before  # nothing of d_k = 8 is drawn yet
    gated.set()
    qtbot.waitUntil(lambda: view.redraw_count > before, timeout=20000)
    assert not view.computing
    # what the counted redraw drew is the new core (a plain softmax attention as reference)
    q, k, v = sources.random_qkv(512, 8, 1, model.seed)
    np.testing.assert_array_equal(view.weights.full_matrix, compute.attention(q, k, v)[0][0])


def test_a_small_input_counts_every_redraw(qtbot, make_view, lab):
    model = lab.models["attention"]
    model.update_from_dict({"n": 16, "d_k": 8})
    view = make_view("attention")
    view.flush()
    before = view.redraw_count
    model.d_k = 16
    qtbot.waitUntil(lambda: view.redraw_count > before, timeout=5000)
    assert not view.computing
    q, k, v = sources.random_qkv(16, 16, 1, model.seed)
    np.testing.assert_array_equal(view.weights.full_matrix, compute.attention(q, k, v)[0][0])


# -- deferred auto-ranges run in the redraw ---------------------------------------------------------
def ranges(view) -> dict:
    return {key: plot.getPlotItem().getViewBox().viewRange() for key, plot in view.plots().items()
            if plot.isVisible()}


@pytest.mark.parametrize("name, change", [
    ("online", {"temperature": 2.5}),
    ("online", {"block_size": 3}),
    ("gradients", {"temperature": 2.5}),
    ("attention", {"d_k": 32}),
])
def test_a_paint_after_the_redraw_moves_no_range(qtbot, make_view, lab, name, change):
    """The redraw leaves no auto-range for the paint: a range moved there asks for a second paint."""
    view = make_view(name)
    view.flush()
    settle(qtbot)
    before = view.redraw_count
    lab.models[name].update_from_dict(change)  # the throttle's leading edge: redrawn here
    assert view.redraw_count > before
    drawn = ranges(view)
    for plot in view.plots().values():
        if plot.isVisible():
            plot.scene().prepareForPaint()  # what each plot's paintEvent does first
    assert ranges(view) == drawn


def test_the_ranges_set_early_are_those_a_paint_sets(qtbot, make_view, lab, monkeypatch):
    """The same ranges as leaving the auto-range to the paint (a view whose redraw is not settled)."""
    from gui.views.base import BaseView

    views = []
    for settle_them in (True, False):
        with monkeypatch.context() as patch:
            if not settle_them:
                patch.setattr(BaseView, "_settle_ranges", lambda self: None)
            view = make_view("online")
            lab.models["online"].update_from_dict({"temperature": 0.7, "block_size": 3})
            view.flush()
            settle(qtbot, 60)
            for plot in view.plots().values():
                plot.viewport().repaint()
            views.append({k: p.getPlotItem().getViewBox().viewRange() for k, p in view.plots().items()})
    assert views[0] == views[1]


# -- precision tooltips --------------------------------------------------------------------------
def test_precision_tooltips_change_without_a_repaint_and_stay_current(qtbot, make_view, lab):
    view = make_view("precision")
    lab.models["precision"].masked = (0,)
    view.flush()
    roles = []
    for table in (view.grid, view.masking.table):
        table.model().dataChanged.connect(lambda _a, _b, r=None: roles.append(tuple(r or ())))
    tips = [[view.masking.table.item(r, c).toolTip() for c in range(view.masking.table.columnCount())]
            for r in range(view.masking.table.rowCount())]
    lab.models["precision"].set_param("scale", 3.0)
    view.flush()
    assert all(Qt.ItemDataRole.ToolTipRole.value not in r and Qt.ItemDataRole.ToolTipRole not in r
               for r in roles)
    table = view.masking.table
    new = [[table.item(r, c).toolTip() for c in range(table.columnCount())] for r in range(table.rowCount())]
    assert new != tips  # the weights in them moved with the scale
    # what a hover reads (the item model's data) is the new text, as a view built at this scale shows
    fresh = make_view("precision")
    fresh.flush()
    for r in range(table.rowCount()):
        for c in range(table.columnCount()):
            expected = fresh.masking.table.item(r, c).toolTip()
            assert table.model().index(r, c).data(Qt.ItemDataRole.ToolTipRole) == expected
            assert new[r][c] == expected


# -- random Q, K, V from one kept stream of normals ------------------------------------------------
def fresh_qkv(n, d_k, heads, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((heads, n, d_k)) for _ in range(3))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 70), st.integers(1, 4), st.integers(0, 3)),
                min_size=1, max_size=6))
def test_random_qkv_are_a_fresh_generators_draws_whatever_came_before(calls):
    for n, d_k, heads, seed in calls:
        got = sources.random_qkv(n, d_k, heads, seed)
        for a, b in zip(got, fresh_qkv(n, d_k, heads, seed)):
            np.testing.assert_array_equal(a, b)
            assert a.shape == (heads, n, d_k) and a.flags.c_contiguous


def test_random_qkv_arrays_are_read_only_views_and_big_ones_bypass_the_stream(monkeypatch):
    q, k, _v = sources.random_qkv(8, 4, 2, 7)
    with pytest.raises(ValueError):
        q[:] = 0.0  # no caller can change a later call's numbers
    assert not q.flags.writeable and not k.flags.writeable
    sources.random_qkv(2000, 64, 8, 7)  # a longer draw writes after the kept normals: earlier views keep theirs
    np.testing.assert_array_equal(q, fresh_qkv(8, 4, 2, 7)[0])
    np.testing.assert_array_equal(sources.random_qkv(8, 4, 2, 7)[0], fresh_qkv(8, 4, 2, 7)[0])
    assert not np.shares_memory(q, k)
    monkeypatch.setattr(sources, "_STREAM", NormalStream(10))  # a draw past the kept normals
    for a, b in zip(sources.random_qkv(8, 4, 2, 7), fresh_qkv(8, 4, 2, 7)):
        np.testing.assert_array_equal(a, b)


def test_random_qkv_from_two_threads_at_once():
    out: dict = {}

    def draw(key, n, d_k, seed):
        out[key] = [sources.random_qkv(n, d_k, 2, seed) for _ in range(20)]

    threads = [threading.Thread(target=draw, args=(i, 10 + i, 5 + 3 * i, i % 2)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(3):
        for got in out[i]:
            for a, b in zip(got, fresh_qkv(10 + i, 5 + 3 * i, 2, i % 2)):
                np.testing.assert_array_equal(a, b)
