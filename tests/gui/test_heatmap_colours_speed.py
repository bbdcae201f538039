"""Heatmap cell texts: black or white chosen for all cells at once in NumPy (heatmap.dark_text), the same
choice as themes.text_on on each cell's QColor, for both colour maps in both themes; a broken rule is caught."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gui import theme as themes
from gui.qt import pg
from gui.widgets import heatmap
from gui.widgets.heatmap import Heatmap

MAPS = ("CET-D1", "viridis")  # the diverging and the sequential map a Heatmap draws with


def reference(lut: pg.ColorMap, fractions: np.ndarray) -> np.ndarray:
    """themes.text_on on each cell's QColor, as the map's QColor mode makes it."""
    return np.array([themes.text_on(c) == "#000000" for c in lut.map(np.asarray(fractions), mode="qcolor")])


def near_threshold(name: str) -> np.ndarray:
    """Fractions just either side of every place in the map where text_on's choice flips."""
    lut = pg.colormap.get(name)
    sweep = np.linspace(0.0, 1.0, 2001)
    choice = reference(lut, sweep)
    flips = np.flatnonzero(choice[1:] != choice[:-1])
    out = []
    for i in flips:  # bisect each flip with text_on itself down to neighbouring doubles
        a, b = sweep[i], sweep[i + 1]
        ca = choice[i]
        for _ in range(60):
            mid = 0.5 * (a + b)
            if mid in (a, b):
                break
            if reference(lut, [mid])[0] == ca:
                a = mid
            else:
                b = mid
        out += [a, b, a - 1e-7, b + 1e-7, a - 1e-5, b + 1e-5]
    return np.array(out)


NEAR = {name: near_threshold(name) for name in MAPS}


def test_the_maps_cross_the_threshold():
    """Both maps hold black and white choices, so the comparisons below test both sides."""
    for name in MAPS:
        choice = reference(pg.colormap.get(name), NEAR[name])
        assert len(NEAR[name]) >= 6 and choice.any() and not choice.all()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MAPS),
       st.lists(st.floats(-0.5, 1.5, allow_nan=False) | st.floats(0, 1, allow_nan=False), min_size=1, max_size=64),
       st.data())
def test_dark_text_is_text_on_cell_by_cell(name, values, data):
    near = NEAR[name]
    picks = data.draw(st.lists(st.integers(0, len(near) - 1), max_size=16))
    fractions = np.concatenate([np.array(values), near[picks]])
    lut = pg.colormap.get(name)
    np.testing.assert_array_equal(heatmap.dark_text(lut, fractions), reference(lut, fractions))


def test_every_near_threshold_colour_is_text_on():
    for name in MAPS:
        lut = pg.colormap.get(name)
        np.testing.assert_array_equal(heatmap.dark_text(lut, NEAR[name]), reference(lut, NEAR[name]))


def wrong_anywhere(name: str) -> bool:
    lut = pg.colormap.get(name)
    fractions = np.concatenate([np.linspace(0.0, 1.0, 4001), NEAR[name]])
    return bool((heatmap.dark_text(lut, fractions) != reference(lut, fractions)).any())


@pytest.mark.parametrize("name", MAPS)
def test_a_broken_rule_is_caught(name, monkeypatch):
    assert not wrong_anywhere(name)
    monkeypatch.setattr(heatmap, "BLACK_ABOVE", heatmap.BLACK_ABOVE * 1.01)
    assert wrong_anywhere(name)  # a threshold 1 % off
    monkeypatch.undo()
    monkeypatch.setattr(heatmap, "_linear", lambda v: v ** 2.2)
    assert wrong_anywhere(name)  # a plain gamma instead of the sRGB curve
    monkeypatch.undo()
    monkeypatch.setattr(heatmap, "DOUBT", 0.0)  # no fallback: the NumPy rule alone still agrees here
    assert not wrong_anywhere(name)


def held(qtbot, diverging: bool) -> tuple[QWidget, Heatmap]:
    holder = QWidget()
    qtbot.addWidget(holder)
    hm = Heatmap("t", diverging=diverging, levels=(-1.0, 2.0))
    QVBoxLayout(holder).addWidget(hm)
    holder.resize(500, 400)
    return holder, hm


def shown_and_expected(hm: Heatmap) -> tuple[list[str], list[str]]:
    lut = hm.colorbar.colorMap()
    lo, hi = hm.colorbar.levels()
    span = (hi - lo) or 1.0
    m = hm.matrix.shape[1]
    expected = [themes.text_on(lut.map((np.nan_to_num(hm.matrix[divmod(k, m)]) - lo) / span, mode="qcolor"))
                for k in range(len(hm._texts))]
    return [QColor(t.color).name() for t in hm._texts], expected


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["light", "dark"]), st.booleans(),
       st.lists(st.lists(st.floats(-3, 3, allow_nan=False) | st.just(float("nan")), min_size=16, max_size=16),
                min_size=2, max_size=3))
def test_the_widget_colours_each_matrix_as_text_on(qtbot, mode, diverging, matrices):
    themes.manager().set_mode(mode)
    try:
        _holder, hm = held(qtbot, diverging)
        labels = ("a", "b", "c", "d")
        for values in matrices:
            hm.set_matrix(np.array(values).reshape(4, 4), labels, labels)
            assert hm.cell_numbers_shown
            shown, expected = shown_and_expected(hm)
            assert shown == expected
    finally:
        themes.manager().set_mode("light")
