"""The Gradients view: Jacobian heatmap, column bars, cross-entropy, saturation."""

import math

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

import compute
from gui.model.gradients import GradientsModel
from gui.model.scores import ScoreRow
from gui.model.temperature import CURVE_T


def fd_jacobian(x, t, h=1e-6):
    """Central finite differences of compute.softmax(x / T) with respect to x."""
    n = len(x)
    out = np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        out[:, j] = (compute.softmax(x + e, temperature=t) - compute.softmax(x - e, temperature=t)) / (2 * h)
    return out


@pytest.mark.parametrize("t", [0.5, 1.0, 3.0])
def test_jacobian_matches_finite_differences(t):
    row = ScoreRow()
    r = GradientsModel(temperature=t).result(row)
    np.testing.assert_allclose(r.jacobian, fd_jacobian(row.values, t), atol=1e-8)
    np.testing.assert_allclose(r.jacobian.sum(axis=1), 0.0, atol=1e-15)


def test_cross_entropy_gradient_is_p_minus_y_with_both_conventions():
    row = ScoreRow()
    for convention, y0, other in (("others", 0.9, 0.1 / 3), ("pytorch", 0.925, 0.025)):
        r = GradientsModel(label_smoothing=0.1, target=1, convention=convention).result(row)
        np.testing.assert_allclose(r.smoothed, [y0, other, other, other], rtol=1e-12)
        np.testing.assert_allclose(r.grad, r.probs - r.smoothed, atol=1e-15)
        expected = -np.sum(r.smoothed * np.log(r.probs))
        assert r.loss == pytest.approx(expected, rel=1e-12)


def test_saturation_curve_is_the_max_jacobian_entry_at_each_t():
    row = ScoreRow()
    model = GradientsModel(temperature=0.7)
    r = model.result(row)
    for k in (0, 60, 120, 240):
        t = CURVE_T[k]
        j = compute.softmax_jacobian(compute.softmax(row.values, temperature=t)) / t
        assert r.curve_max[k] == pytest.approx(np.abs(j).max(), rel=1e-12)
    assert r.curve_max[0] < 1e-10  # saturated at T = 0.01: the gradient has vanished
    assert r.max_entry == pytest.approx(np.abs(r.jacobian).max())


def test_target_and_column_are_clamped_to_the_row():
    row = ScoreRow()
    row.set_values([1.0, 2.0])
    r = GradientsModel(target=5, column=7).result(row)
    assert r.target == 1  # 0-based indices of the last token
    assert r.column == 1
    r = GradientsModel(target=1, column=2).result(row)
    assert r.target == 0
    assert r.column == 1


def test_arrays_are_compute_to_the_bit():
    row = ScoreRow()
    model = GradientsModel(temperature=0.5, label_smoothing=0.2, target=3, column=2, convention="pytorch")
    a = model.arrays(row)
    p = compute.softmax(row.values, temperature=0.5)
    assert np.array_equal(a["jacobian"].data, compute.softmax_jacobian(p) / 0.5)
    assert np.array_equal(a["column"].data, (compute.softmax_jacobian(p) / 0.5)[:, 1])
    g = compute.cross_entropy_grad(row.values / 0.5, 2, label_smoothing=0.2, convention="pytorch")
    assert np.array_equal(a["cross_entropy"].data[:, 2], g)


def test_session_keeps_integer_and_choice_parameters(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    lab = Lab()
    lab.models["gradients"].update_from_dict({"target": 2, "column": 3, "convention": "pytorch"})
    lab.session().save(tmp_path / "s.json")
    other = Lab()
    other.restore(Session.load(tmp_path / "s.json"))
    m = other.models["gradients"]
    assert (m.target, m.column, m.convention) == (2, 3, "pytorch")
    with pytest.raises(ValueError, match="one of"):
        m.set_param("convention", "tensorflow")
    with pytest.raises(ValueError, match="whole number"):
        m.set_param("target", 1.5)


# -- the widget ---------------------------------------------------------------------


def settle(qtbot, view):
    qtbot.wait(40)
    view.flush()


def test_heatmap_shows_the_jacobian_and_a_click_picks_the_column(qtbot, make_view, lab):
    view = make_view("gradients")
    model = lab.models["gradients"]
    p = compute.softmax(lab.scores.values)
    np.testing.assert_array_equal(view.heatmap.matrix, compute.softmax_jacobian(p))
    vb = view.heatmap.getPlotItem().getViewBox()
    scene = vb.mapViewToScene(QPointF(2.5, 1.5))  # row 1, column 2
    pos = view.heatmap.mapFromScene(scene)
    qtbot.mouseClick(view.heatmap.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert model.column == 3  # tokens are numbered from 1
    settle(qtbot, view)
    np.testing.assert_array_equal(view.column_bars.heights[0], compute.softmax_jacobian(p)[:, 2])
    assert "Token 3" in view.column_bars.getPlotItem().titleLabel.text
    assert view.heatmap.highlight.isVisible()
    assert view.heatmap.highlight.rect().x() == 2


def test_temperature_slider_fades_the_jacobian(qtbot, make_view, lab):
    view = make_view("gradients")
    view.temperature.spin.setValue(0.05)
    settle(qtbot, view)
    assert np.abs(view.heatmap.matrix).max() < 1e-4
    xs = view.saturation.marker.xData
    assert xs[0] == pytest.approx(0.05)
    view.temperature.spin.setValue(1.0)
    settle(qtbot, view)
    assert float(view.readouts["readout.max_jacobian"].text()) == pytest.approx(
        np.abs(view.heatmap.matrix).max(), abs=1e-4)


def test_target_smoothing_and_convention_controls(qtbot, make_view, lab):
    view = make_view("gradients")
    model = lab.models["gradients"]
    view.target.setCurrentIndex(3)
    view.target.activated.emit(3)
    assert model.target == 4
    view.smoothing.spin.setValue(0.1)
    view.convention.combo.setCurrentIndex(1)
    view.convention.combo.activated.emit(1)
    assert model.convention == "pytorch"
    assert model.label_smoothing == pytest.approx(0.1)
    settle(qtbot, view)
    p, y, g = view.ce_bars.heights
    np.testing.assert_allclose(y, [0.025, 0.025, 0.025, 0.925])
    np.testing.assert_allclose(g, p - y, atol=1e-15)
    loss = float(view.readouts["readout.loss"].text().split()[0])
    assert loss == pytest.approx(-np.sum(y * np.log(p)), abs=1e-4)
    lab.scores.set_values([1.0, 0.0])  # fewer tokens: the target follows
    settle(qtbot, view)
    assert view.target.count() == 2
    assert view.target.currentIndex() == 1


def test_non_finite_scores_draw_without_errors(qtbot, make_view, lab):
    view = make_view("gradients")
    lab.scores.set_values([1.0, math.nan, 0.0])
    settle(qtbot, view)
    assert view.readouts["readout.row_sums"].text() == "NaN"
    lab.scores.set_values([1.0, -math.inf, 0.0])
    settle(qtbot, view)
    assert view.heatmap.matrix[1].tolist() == [0.0, 0.0, 0.0]
