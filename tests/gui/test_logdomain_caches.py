"""The Log-domain model keeps what the temperature does not change; the table is rewritten only when
its numbers change.

A temperature move recomputes the gradient check and the smooth max/min at T
only: LSE(s) at T = 1, the extremes, the sigmoid check and the log table are
kept.  Every kept value must be bit for bit what a fresh model computes (and
what compute's functions give), and a new score row or spread must replace it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.model.logdomain import LogDomainModel
from gui.model.scores import ScoreRow


def row(values) -> ScoreRow:
    r = ScoreRow()
    r.set_values(list(values))
    return r


def assert_result_is_fresh(m: LogDomainModel, scores: ScoreRow) -> None:
    """The model's result equals a new model's (no cache) and compute's functions, exactly."""
    got = m.result(scores)
    fresh = LogDomainModel(temperature=m.temperature, spread=m.spread).result(scores)
    x = scores.values
    for name in ("lse", "max", "max_log_k", "softmin", "min", "min_log_k", "smooth_max_t", "smooth_min_t"):
        np.testing.assert_array_equal(getattr(got, name), getattr(fresh, name), err_msg=name)
    np.testing.assert_array_equal(got.lse, float(compute.logsumexp(x)))
    np.testing.assert_array_equal(got.softmin, -float(compute.logsumexp(-x)))
    np.testing.assert_array_equal(got.grad_softmax, fresh.grad_softmax)
    np.testing.assert_array_equal(got.grad_fd, fresh.grad_fd)
    for name in ("scores", "stable", "naive64", "naive32"):
        np.testing.assert_array_equal(getattr(got.log_table, name), getattr(fresh.log_table, name), err_msg=name)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got.log_table.stable, compute.log_softmax(m.spread * x))
    assert got.log_table.spread == m.spread
    for name in ("d", "sigmoid", "softmax", "naive"):
        np.testing.assert_array_equal(getattr(got.sigmoid, name), getattr(fresh.sigmoid, name), err_msg=name)
    for name in ("pair", "pair_d", "pair_sigmoid", "pair_softmax"):
        np.testing.assert_array_equal(getattr(got.sigmoid, name), getattr(fresh.sigmoid, name), err_msg=name)


def test_a_temperature_move_keeps_the_table_and_the_sigmoid_check():
    m, scores = LogDomainModel(), row([2.0, 1.0, 0.5, -1.0])
    before = m.result(scores)
    m.set_param("temperature", 0.3)
    after = m.result(scores)
    assert after.log_table is before.log_table
    assert after.sigmoid is before.sigmoid
    assert not np.array_equal(after.grad_softmax, before.grad_softmax)  # what T does change, changed
    assert after.smooth_max_t != before.smooth_max_t
    assert_result_is_fresh(m, scores)


def test_a_spread_move_replaces_the_table_only():
    m, scores = LogDomainModel(), row([2.0, 1.0, 0.5, -1.0])
    before = m.result(scores)
    m.set_param("spread", 200.0)
    after = m.result(scores)
    assert after.log_table is not before.log_table
    assert not np.array_equal(after.log_table.scores, before.log_table.scores)
    assert after.sigmoid is before.sigmoid
    assert_result_is_fresh(m, scores)


def test_new_scores_replace_everything_kept():
    m, scores = LogDomainModel(spread=3.0), row([2.0, 1.0, 0.5, -1.0])
    before = m.result(scores)
    scores.set_values([5.0, -2.0, 0.0, 1.0])  # the same length: only the values differ
    after = m.result(scores)
    assert after.lse != before.lse and after.max != before.max and after.min != before.min
    assert after.sigmoid.pair_d != before.sigmoid.pair_d
    assert not np.array_equal(after.log_table.stable, before.log_table.stable)
    assert_result_is_fresh(m, scores)


VALUES = st.one_of(st.floats(-50, 50), st.sampled_from([math.inf, -math.inf, math.nan, 0.0, -0.0, 1e308]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(VALUES, min_size=1, max_size=6), min_size=1, max_size=3),
       st.lists(st.tuples(st.sampled_from(["temperature", "spread"]), st.floats(1.0, 90.0)), max_size=6))
def test_after_any_moves_and_rows_the_result_is_a_fresh_recompute(rows, moves):
    m, scores = LogDomainModel(), row(rows[0])
    m.result(scores)
    for i, (name, value) in enumerate(moves):
        m.set_param(name, value)
        if i < len(rows):
            scores.set_values(rows[i])
        assert_result_is_fresh(m, scores)
    assert_result_is_fresh(m, scores)


# -- the view: the table --------------------------------------------------------------------------
@pytest.fixture
def view(make_view):
    return make_view("log-domain")


def settle(qtbot, view) -> None:
    qtbot.waitUntil(lambda: not view.redraw_pending)
    view.flush()


def table_texts(table) -> list[list[str]]:
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


def test_the_table_shows_the_fresh_numbers_after_temperature_and_spread_moves(qtbot, view, lab):
    model, table = lab.models["log-domain"], view.table
    texts = table_texts(table)
    item = table.item(1, 2)
    model.set_param("temperature", 0.05)
    settle(qtbot, view)
    assert table_texts(table) == texts and table.item(1, 2) is item
    model.set_param("spread", 700.0)
    settle(qtbot, view)
    x = 700.0 * lab.scores.values
    assert [table.item(r, 0).text() for r in range(4)] == [f"{v:.6g}" for v in x]
    assert [table.item(r, 1).text() for r in range(4)] == [f"{v:.9g}" for v in compute.log_softmax(x)]
    assert table_texts(table) != texts
    lab.scores.set_values([1.0, 2.0, 3.0, 4.0])
    settle(qtbot, view)
    x = 700.0 * np.array([1.0, 2.0, 3.0, 4.0])
    assert [table.item(r, 1).text() for r in range(4)] == [f"{v:.9g}" for v in compute.log_softmax(x)]


def test_a_theme_switch_still_recolours_the_kept_table(qtbot, view, lab):
    from gui import theme as themes

    lab.models["log-domain"].set_param("spread", 1000.0)
    settle(qtbot, view)
    themes.manager().set_mode("dark")
    settle(qtbot, view)
    assert view.table.item(1, 2).background().color().name() == themes.DARK.invalid
    themes.manager().set_mode("light")
    settle(qtbot, view)
    assert view.table.item(1, 2).background().color().name() == themes.LIGHT.invalid
