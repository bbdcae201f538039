"""The Temperature view, driven through its sliders."""

import math

import numpy as np
import pytest

import compute
from gui.model.temperature import CURVE_T


def settle(qtbot, view):
    qtbot.wait(40)
    view.flush()


@pytest.fixture
def view(make_view, lab):
    lab.scores.set_values([5.2, 3.1, 1.8])
    return make_view("temperature")


@pytest.mark.parametrize(
    ("t", "percent"),
    [(0.5, [98.4, 1.5, 0.1]), (1.0, [86.5, 10.6, 2.9]), (2.0, [65.2, 22.8, 11.9])],
)
def test_typed_temperatures_show_the_articles_percentages(qtbot, view, lab, t, percent):
    view.temperature.spin.setValue(t)
    assert lab.models["temperature"].temperature == t
    settle(qtbot, view)
    at_t, at_1 = view.bars.heights
    assert np.round(100 * at_t, 1).tolist() == percent
    assert np.round(100 * at_1, 1).tolist() == [86.5, 10.6, 2.9]
    assert view.bars.value_texts(0) == [f"{p:.1f}%" for p in percent]
    assert view.bars.value_texts(1) == ["86.5%", "10.6%", "2.9%"]


def test_dragging_the_temperature_slider_redraws_live(qtbot, view, lab):
    slider = view.temperature.slider
    before = view.redraw_count
    for pos in range(500, 100, -40):  # from T = 1 down towards 0.01
        slider.setValue(pos)
    t = lab.models["temperature"].temperature
    assert t == pytest.approx(10 ** (-2 + 4 * 140 / 1000))
    assert view.temperature.spin.value() == pytest.approx(t, abs=1e-3)
    qtbot.waitUntil(lambda: np.array_equal(view.bars.heights[0], compute.softmax(lab.scores.values, temperature=t)))
    assert view.redraw_count > before
    # the entropy marker sits on the curve at the current T
    xs, ys = view.entropy.marker.xData, view.entropy.marker.yData  # data, not log-mapped
    assert xs[0] == pytest.approx(t)
    assert ys[0] == compute.entropy(compute.softmax(lab.scores.values, temperature=t))


def test_temperature_limits_one_hot_and_uniform(qtbot, view):
    view.temperature.spin.setValue(0.01)
    settle(qtbot, view)
    assert view.bars.heights[0][0] == pytest.approx(1.0)
    view.temperature.spin.setValue(100.0)
    settle(qtbot, view)
    np.testing.assert_allclose(view.bars.heights[0], 1 / 3, atol=0.01)
    assert view.entropy.cold.value() == 0.0
    assert view.entropy.hot.value() == pytest.approx(math.log(3))
    assert "ln 3" in view.entropy.hot.label.format


def test_ratio_readout_is_exp_gap_over_t(qtbot, view):
    view.temperature.spin.setValue(0.5)
    settle(qtbot, view)
    text = view.readouts["readout.ratio"].text()
    ratio = math.exp(2.1 / 0.5)
    assert text.startswith(f"{ratio:.3f}")
    assert text.endswith(f"{ratio:.3f}")
    assert "e<sup>2.100 / 0.5</sup>" in text


def test_gap_slider_moves_the_top_score_in_the_shared_table(qtbot, view, lab):
    assert view.gap.value() == pytest.approx(2.1)
    view.gap.spin.setValue(0.0)
    assert lab.scores.values.tolist() == [3.1, 3.1, 1.8]
    settle(qtbot, view)
    at_t, _ = view.bars.heights
    assert at_t[0] == at_t[1]
    view.gap.slider.setValue(500)  # 5.0 on a 0..10 slider
    assert lab.scores.values[0] == pytest.approx(8.1)
    lab.scores.set_values([1.0])
    assert not view.gap.isEnabled()
    settle(qtbot, view)
    assert "two finite scores" in view.readouts["readout.ratio"].text()


def test_scale_multiplies_the_scores(qtbot, view, lab):
    view.scale.spin.setValue(2.0)
    settle(qtbot, view)
    np.testing.assert_array_equal(view.bars.heights[0], compute.softmax(lab.scores.values * 2.0))
    # scale c at temperature T is the same as temperature T / c
    view.temperature.spin.setValue(2.0)
    settle(qtbot, view)
    np.testing.assert_allclose(view.bars.heights[0], compute.softmax(lab.scores.values), rtol=1e-12)


def test_double_click_resets_the_slider(qtbot, view, lab):
    from PySide6.QtCore import Qt

    view.temperature.spin.setValue(3.0)
    qtbot.mouseDClick(view.temperature.slider, Qt.MouseButton.LeftButton)
    assert lab.models["temperature"].temperature == 1.0


def test_one_marked_decade_label_at_one(view):
    marks = view.temperature.scale.marks
    assert [m.text for m in marks] == ["0.01", "0.1", "1", "10", "100"]
    assert [m.text for m in marks if m.bold] == ["1"]


@pytest.mark.parametrize(
    "values",
    [[1.0, math.nan, 0.0], [math.inf, 1.0, 0.0], [math.inf, math.inf, 0.0], [-math.inf, 2.0, 1.0], [7.0]],
)
def test_special_scores_draw_without_errors(qtbot, view, lab, values):
    lab.scores.set_values(values)
    settle(qtbot, view)
    expected = compute.softmax(np.array(values))
    np.testing.assert_array_equal(view.bars.heights[1], np.nan_to_num(expected, nan=0.0))
    curve = view.entropy.curve.yData
    if np.isnan(expected).any():  # no entropy to draw
        assert curve is None or len(curve) == 0
        assert view.entropy.marker.xData is None or len(view.entropy.marker.xData) == 0
    else:
        assert len(curve) == len(CURVE_T)
        assert np.isfinite(curve).all()


def test_gap_beyond_the_slider_travel_still_shows_its_value(qtbot, view, lab):
    lab.scores.set_values([30.0, 1.0])
    assert view.gap.spin.value() == pytest.approx(29.0)
    assert view.gap.slider.value() == view.gap.slider.maximum()
    view.gap.spin.setValue(15.0)  # typed past the slider's end
    assert lab.scores.values.tolist() == [16.0, 1.0]


def test_clicking_a_legend_swatch_does_not_hide_bars(qtbot, view):
    from PySide6.QtCore import Qt

    legend = view.bars.getPlotItem().legend
    sample, _label = legend.items[0]
    scene_pos = sample.mapToScene(sample.boundingRect().center())
    pos = view.bars.mapFromScene(scene_pos)
    qtbot.mouseClick(view.bars.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert all(bar.isVisible() for bar in view.bars._bars)
