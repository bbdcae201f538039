"""The Simplex view: its Qt-free geometry and model, then the widget driven by mouse and sliders."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute
from gui.export import export_view, read_npz
from gui.model.scores import ScoreRow
from gui.model.simplex import (
    CENTRE,
    CORNERS,
    FIELD_P,
    ISO_K,
    ISO_SEGMENTS,
    KL_LEVELS,
    P_MIN,
    PATH_T,
    SimplexModel,
    from_xy,
    kl_divergence,
    project,
    scores_for,
    to_xy,
)
from tests.conftest import run_main

simplex_points = st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda v: sum(v) > 1e-3).map(
    lambda v: np.array(v) / sum(v)
)
interior_points = st.lists(st.floats(1e-3, 1.0), min_size=3, max_size=3).map(lambda v: np.array(v) / sum(v))


def row(*values) -> ScoreRow:
    r = ScoreRow()
    r.set_values(values)
    return r


# -- the map between weights and the plane ----------------------------------------------


def test_corners_and_centre():
    np.testing.assert_array_equal(to_xy(np.eye(3)), CORNERS)
    np.testing.assert_allclose(to_xy([1 / 3, 1 / 3, 1 / 3]), CENTRE, atol=1e-15)
    np.testing.assert_allclose(CORNERS[0], [0.5, math.sqrt(3) / 2])  # token 1 on top
    sides = [np.hypot(*(CORNERS[i] - CORNERS[(i + 1) % 3])) for i in range(3)]
    np.testing.assert_allclose(sides, 1.0)  # equilateral


@settings(max_examples=200, deadline=None)
@given(simplex_points)
def test_barycentric_map_round_trips(p):
    xy = to_xy(p)
    np.testing.assert_allclose(from_xy(xy), p, atol=1e-12)
    np.testing.assert_allclose(to_xy(from_xy(xy)), xy, atol=1e-12)
    assert from_xy(xy).sum() == pytest.approx(1.0, abs=1e-12)


def test_map_works_on_arrays_and_outside_points_get_negative_weights():
    p = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    assert to_xy(p).shape == (2, 2)
    np.testing.assert_allclose(from_xy(to_xy(p)), p, atol=1e-15)
    assert from_xy((-0.1, 0.0))[1] > 1
    assert from_xy((-0.1, 0.0)).min() < 0


# -- dragging: the inverse map ---------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(interior_points, st.lists(st.floats(-20, 20), min_size=3, max_size=3),
       st.floats(0.01, 100.0))
def test_inverse_map_gives_p_back_and_keeps_the_mean(p, old, t):
    s = scores_for(p, old, t)
    np.testing.assert_allclose(compute.softmax(s, temperature=t), p, rtol=1e-9, atol=1e-15)
    assert s.mean() == pytest.approx(np.mean(old), abs=1e-9 * (1 + t))


def test_inverse_map_clamps_into_the_triangle():
    p = project([1.0, 0.0, 0.0])
    assert p.min() >= P_MIN * (1 - 1e-12)
    assert p.sum() == pytest.approx(1.0)
    s = scores_for(from_xy((-0.5, -0.5)), [0.0, 0.0, 0.0], 1.0)  # far outside: still finite scores
    assert np.all(np.isfinite(s))
    assert np.all(compute.softmax(s) >= P_MIN * (1 - 1e-9))
    assert scores_for([0.5, 0.25, 0.25], [np.inf, 0.0, 1.0], 1.0).mean() == pytest.approx(0.0)


# -- what the model computes -------------------------------------------------------------------


def test_temperature_path_runs_from_the_top_corner_to_the_centre():
    r = SimplexModel().result(row(1.0, 2.0, 0.5))
    assert r.path_t[0] == 0.01
    assert r.path_t[-1] == 100.0
    assert np.hypot(*(r.path_xy[0] - CORNERS[1])) < 1e-12  # token 2 has the top score
    assert np.hypot(*(r.path_xy[-1] - CENTRE)) < 0.01
    # one 2-D pass gives the same bits as one softmax call per T
    expected = np.array([compute.softmax(np.array([1.0, 2.0, 0.5]), temperature=t) for t in PATH_T])
    np.testing.assert_array_equal(r.path_p, expected)


def test_point_is_softmax_at_t_and_lies_on_the_path():
    model = SimplexModel(temperature=PATH_T[100])
    r = model.result(row(2.0, 1.0, 0.5, -1.0))
    np.testing.assert_array_equal(r.p, compute.softmax(np.array([2.0, 1.0, 0.5]), temperature=PATH_T[100]))
    np.testing.assert_allclose(r.xy, r.path_xy[100], atol=1e-15)
    assert r.entropy == compute.entropy(r.p)
    assert r.n_scores == 4
    assert r.labels == ("Token 1", "Token 2", "Token 3")


def test_shift_invariance():
    model = SimplexModel(temperature=0.7)
    a, b = model.result(row(2.0, 1.0, 0.5)), model.result(row(7.0, 6.0, 5.5))
    np.testing.assert_allclose(b.p, a.p, rtol=1e-12)
    np.testing.assert_allclose(b.path_p, a.path_p, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(b.sparsemax, a.sparsemax, atol=1e-12)
    np.testing.assert_allclose(b.entmax, a.entmax, atol=1e-12)


def test_sparsemax_and_entmax_land_on_the_boundary_with_exact_zeros():
    model = SimplexModel()
    r = model.result(row(5.0, 0.0, -5.0))
    assert r.sparsemax.tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(r.sparsemax_xy, CORNERS[0], atol=1e-15)
    assert r.entmax[2] == 0.0
    assert r.p.min() > 0  # softmax never reaches the boundary
    r = model.result(row(1.0, 0.8, -3.0))
    assert r.sparsemax[2] == 0.0
    assert r.sparsemax[0] == pytest.approx(0.6)
    assert abs(from_xy(r.sparsemax_xy)[2]) < 1e-12  # on the edge between tokens 1 and 2
    # applied to s / T, like softmax
    model.set_param("temperature", 4.0)
    r = model.result(row(1.0, 0.8, -3.0))
    np.testing.assert_array_equal(r.sparsemax, compute.sparsemax(np.array([1.0, 0.8, -3.0]) / 4.0))
    np.testing.assert_array_equal(r.entmax, compute.entmax(np.array([1.0, 0.8, -3.0]) / 4.0, 1.5))


def test_iso_lines_hold_the_ratio_and_start_at_token_3():
    assert len(ISO_SEGMENTS) == 2 * len(ISO_K)
    starts, ends = from_xy(ISO_SEGMENTS[0::2]), from_xy(ISO_SEGMENTS[1::2])
    np.testing.assert_allclose(starts, np.tile([0.0, 0.0, 1.0], (len(ISO_K), 1)), atol=1e-12)
    np.testing.assert_allclose(ends[:, 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(ends[:, 0] / ends[:, 1], np.exp(ISO_K), rtol=1e-12)
    # every point of the line has the same ratio: halfway along it too
    mid = from_xy((ISO_SEGMENTS[0::2] + ISO_SEGMENTS[1::2]) / 2)
    np.testing.assert_allclose(mid[:, 0] / mid[:, 1], np.exp(ISO_K), rtol=1e-12)


@pytest.mark.parametrize("j", [1, 2, 3])
@pytest.mark.parametrize("t", [1.0, 0.3])
def test_arrows_are_the_jacobian_column(j, t):
    model = SimplexModel(temperature=t, arrows=j)
    xy, d, segments = model.arrow_field()
    np.testing.assert_allclose(from_xy(xy), FIELD_P, atol=1e-12)
    h = 1e-6
    for p, dxy in zip(FIELD_P, d):
        s = t * np.log(p)  # scores whose softmax at T is this grid point
        bumped = s.copy()
        bumped[j - 1] += h
        fd = (compute.softmax(bumped, temperature=t) - compute.softmax(s, temperature=t)) / h
        np.testing.assert_allclose(dxy, to_xy(fd), atol=1e-5 / t)
    # the drawn shafts point the same way, scaled to fit the grid
    shafts = segments.reshape(-1, 6, 2)[:, :2]
    drawn = shafts[:, 1] - shafts[:, 0]
    np.testing.assert_allclose(drawn[:, 0] * d[:, 1] - drawn[:, 1] * d[:, 0], 0.0, atol=1e-12)
    assert np.all(np.einsum("ij,ij->i", drawn, d) > 0)
    np.testing.assert_allclose((shafts[:, 0] + shafts[:, 1]) / 2, xy, atol=1e-12)


def test_kl_grid_and_contours():
    model = SimplexModel(show_kl=True)
    model.pin_q([0.6, 0.3, 0.1])
    r = model.result(row(2.0, 1.0, 0.5))
    assert r.q.tolist() == pytest.approx([0.6, 0.3, 0.1])
    assert r.kl_pq == pytest.approx(float(np.sum(r.p * np.log(r.p / r.q))))
    assert kl_divergence(r.q, r.q) == pytest.approx(0.0, abs=1e-15)
    assert kl_divergence([1.0, 0.0, 0.0], r.q) == pytest.approx(-math.log(0.6))  # 0 log 0 = 0
    assert set(np.unique(r.kl_levels)) <= set(KL_LEVELS)
    assert len(r.kl_levels) > 50
    ends = r.kl_segments.reshape(-1, 2)
    assert np.all(from_xy(ends) > -1e-12)  # the contours stay inside the triangle
    kl_at_ends = kl_divergence(from_xy(ends).clip(0, 1), r.q)
    np.testing.assert_allclose(kl_at_ends, np.repeat(r.kl_levels, 2), rtol=0.05, atol=2e-3)
    # cached on q: moving the point does not recompute the grid
    assert model.result(row(0.0, 1.0, 0.5)).kl_values is r.kl_values
    model.pin_q([0.2, 0.2, 0.6])
    assert model.result(row(0.0, 1.0, 0.5)).kl_values is not r.kl_values
    assert "kl_grid" in model.arrays(row(1.0, 2.0, 3.0))
    model.show_kl = False
    assert "kl_grid" not in model.arrays(row(1.0, 2.0, 3.0))


def test_fewer_than_three_scores_compute_nothing_to_draw():
    model = SimplexModel(show_kl=True)
    for values in ([1.0], [1.0, 2.0]):
        r = model.result(row(*values))
        assert not r.ok
        assert len(r.path_xy) == 0
        assert len(r.arrow_segments) == 0
        assert np.isnan(r.p).all()
        arrays = model.arrays(row(*values))
        assert arrays["path"].data.shape == (0, 6)
        assert "kl_grid" not in arrays


@pytest.mark.parametrize("values", [[np.inf, 1.0, 0.0], [-np.inf, 1.0, 0.0], [np.nan, 1.0, 0.0]])
def test_special_scores(values):
    r = SimplexModel().result(row(*values))
    np.testing.assert_array_equal(r.p, compute.softmax(np.array(values)))
    assert r.path_p.shape == (len(PATH_T), 3)
    SimplexModel(show_kl=True).arrays(row(*values))


def test_parameters_and_view_state():
    assert list(SimplexModel.params()) == ["temperature", "alpha", "arrows"]
    model = SimplexModel()
    with pytest.raises(ValueError):
        model.set_param("arrows", 4)
    with pytest.raises(ValueError):
        model.set_param("alpha", 0.5)
    model.pin_q([0.0, 0.0, 1.0])
    assert min(model.q) >= P_MIN * (1 - 1e-12)
    assert model.to_dict() == {"temperature": 1.0, "alpha": 1.5, "arrows": 1}  # q is not saved


# -- the widget -----------------------------------------------------------------------------------


def settle(qtbot, view):
    qtbot.wait(40)
    view.flush()


@pytest.fixture
def view(make_view, lab):
    lab.scores.set_values([2.0, 1.0, 0.5])
    return make_view("simplex")


def xs(item) -> np.ndarray:
    """The x data a PlotDataItem holds (pyqtgraph gives None for no data)."""
    x, _ = item.getData()
    return np.array([]) if x is None else x


def drawn_point(view):
    return view.triangle.point_xy()


def expected_point(lab, t=1.0):
    return to_xy(compute.softmax(lab.scores.values[:3], temperature=t))


def pixel(view, p):
    """The viewport pixel at weights ``p``, and the weights at that (rounded) pixel."""
    from PySide6.QtCore import QPointF

    vb = view.triangle.getPlotItem().getViewBox()
    xy = to_xy(p)
    px = view.triangle.mapFromScene(vb.mapViewToScene(QPointF(*xy)))
    back = vb.mapSceneToView(view.triangle.mapToScene(px))
    return px, from_xy((back.x(), back.y()))


def test_opens_with_the_point_where_softmax_puts_it(view, lab):
    np.testing.assert_array_equal(drawn_point(view), expected_point(lab))
    assert [s.value() for s in view.sliders] == [2.0, 1.0, 0.5]
    assert view.readouts["readout.simplex.p"].text() == "(0.629, 0.231, 0.140)"
    assert not view.note.isVisible()
    assert not view.add_scores.isVisible()
    texts = [t.toPlainText() for t in view.triangle.corner_texts]
    assert texts == ["Token 1\n(1, 0, 0)", "Token 2\n(0, 1, 0)", "Token 3\n(0, 0, 1)"]
    x, _ = view.triangle.path.getData()
    assert len(x) == len(PATH_T)


def test_moving_a_score_slider_moves_the_point(qtbot, view, lab):
    view.sliders[2].slider.setValue(800)  # -10..10 -> 6.0
    assert lab.scores.values.tolist() == [2.0, 1.0, 6.0]
    settle(qtbot, view)
    np.testing.assert_array_equal(drawn_point(view), expected_point(lab))
    # and the sliders follow the shared row
    lab.scores.set_value(0, -3.5)
    assert view.sliders[0].value() == -3.5


def test_temperature_slider_moves_the_point_along_the_path(qtbot, view, lab):
    view.temperature.spin.setValue(0.25)
    settle(qtbot, view)
    np.testing.assert_array_equal(drawn_point(view), expected_point(lab, 0.25))
    assert "α = 1.5" in view.readouts["readout.simplex.entmax"].text()


def drag(qtbot, view, start_p, target_p):
    from PySide6.QtCore import QPoint, Qt

    port = view.triangle.viewport()
    start, _ = pixel(view, start_p)
    target, at = pixel(view, target_p)
    qtbot.mousePress(port, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(port, pos=start + QPoint(12, 9))
    qtbot.mouseMove(port, pos=(start + target) / 2)
    qtbot.mouseMove(port, pos=target)
    qtbot.mouseRelease(port, Qt.MouseButton.LeftButton, pos=target)
    return at


def test_dragging_the_point_sets_scores_that_produce_it(qtbot, view, lab):
    view.temperature.spin.setValue(0.5)
    before = lab.scores.values
    target = np.array([0.2, 0.5, 0.3])
    at = drag(qtbot, view, [0.5, 0.25, 0.25], target)
    s = lab.scores.values
    p = compute.softmax(s, temperature=0.5)
    np.testing.assert_allclose(p, at, atol=1e-9)  # exactly the weights under the mouse
    np.testing.assert_allclose(p, target, atol=2e-3)  # within a pixel of the target
    assert s.mean() == pytest.approx(before.mean(), abs=1e-12)
    assert [sl.value() for sl in view.sliders] == pytest.approx(s.tolist(), abs=1e-3)
    assert lab.models["simplex"].q == pytest.approx((1 / 3, 1 / 3, 1 / 3))  # a drag does not pin q
    settle(qtbot, view)
    np.testing.assert_allclose(drawn_point(view), to_xy(at), atol=1e-9)


def test_dragging_keeps_the_scores_past_the_first_three(qtbot, view, lab):
    lab.scores.set_values([2.0, 1.0, 0.5, -1.0, 4.0], ["a", "b", "c", "d", "e"])
    settle(qtbot, view)
    at = drag(qtbot, view, [0.3, 0.3, 0.4], [0.1, 0.1, 0.8])
    assert lab.scores.values[3:].tolist() == [-1.0, 4.0]
    assert lab.scores.labels == ("a", "b", "c", "d", "e")
    np.testing.assert_allclose(compute.softmax(lab.scores.values[:3]), at, atol=1e-9)


def test_add_one_moves_the_scores_but_not_the_point(qtbot, view, lab):
    from PySide6.QtCore import Qt

    before = drawn_point(view)
    p_text = view.readouts["readout.simplex.p"].text()
    qtbot.mouseClick(view.shift, Qt.MouseButton.LeftButton)
    assert lab.scores.values.tolist() == [3.0, 2.0, 1.5]
    assert [s.value() for s in view.sliders] == [3.0, 2.0, 1.5]
    settle(qtbot, view)
    np.testing.assert_allclose(drawn_point(view), before, atol=1e-15)
    assert view.readouts["readout.simplex.p"].text() == p_text
    assert view.readouts["readout.simplex.scores"].text() == "(3.000, 2.000, 1.500)"
    assert view.readouts["readout.simplex.mean"].text() == "2.167"


def test_a_click_pins_q_and_the_checkbox_shows_the_contours(qtbot, view, lab):
    from PySide6.QtCore import Qt

    model = lab.models["simplex"]
    scores = lab.scores.values
    px, at = pixel(view, [0.6, 0.3, 0.1])
    qtbot.mouseClick(view.triangle.viewport(), Qt.MouseButton.LeftButton, pos=px)
    np.testing.assert_allclose(model.q, at, atol=1e-12)
    assert lab.scores.values.tolist() == scores.tolist()  # a click does not move the point
    settle(qtbot, view)
    x, y = view.triangle.q.getData()
    np.testing.assert_allclose([x[0], y[0]], to_xy(at), atol=1e-12)
    assert len(xs(view.triangle.kl)) == 0
    view.kl_box.click()
    assert model.show_kl
    settle(qtbot, view)
    kl_x, _ = view.triangle.kl.getData()
    np.testing.assert_array_equal(kl_x, model.result(lab.scores).kl_segments[:, 0])
    assert "KL(p ‖ q)" in [label.text for _, label in view.triangle.legend.items]
    view.kl_box.click()
    settle(qtbot, view)
    assert len(xs(view.triangle.kl)) == 0
    assert "KL(p ‖ q)" not in [label.text for _, label in view.triangle.legend.items]
    qtbot.mouseClick(view.pin, Qt.MouseButton.LeftButton)
    np.testing.assert_allclose(model.q, compute.softmax(lab.scores.values), rtol=1e-12)


def test_arrow_selector_follows_the_model(qtbot, view, lab):
    model = lab.models["simplex"]
    view.arrow_choice.setCurrentIndex(2)
    assert model.arrows == 3
    settle(qtbot, view)
    x, _ = view.triangle.arrows.getData()
    np.testing.assert_array_equal(x, model.arrow_field()[2][:, 0])
    model.set_param("arrows", 2)
    assert view.arrow_choice.currentIndex() == 1
    assert view.arrow_choice.itemText(0) == "s1 rises (Token 1)"


def test_hover_says_the_weights_under_the_mouse(qtbot, view):
    from PySide6.QtCore import QPointF

    vb = view.triangle.getPlotItem().getViewBox()
    with qtbot.waitSignal(view.status) as blocker:
        view.triangle.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(*to_xy([0.5, 0.3, 0.2]))))
    assert blocker.args[0] == "p₁ = 0.500, p₂ = 0.300, p₃ = 0.200"
    assert view.triangle.describe(-0.2, 0.5) == ""  # outside the triangle


def test_a_longer_row_shows_the_first_three_note(qtbot, view, lab):
    lab.scores.set_values([2.0, 1.0, 0.5, -1.0, 3.0])
    settle(qtbot, view)
    assert view.note.isVisible()
    assert "first three" in view.note.text()
    assert "5" in view.note.text()
    np.testing.assert_array_equal(drawn_point(view), expected_point(lab))


def test_two_scores_offer_to_add_a_third(qtbot, view, lab):
    from PySide6.QtCore import Qt

    lab.scores.set_values([2.0, 1.0])
    settle(qtbot, view)
    assert view.add_scores.isVisible()
    assert "needs three" in view.note.text()
    assert len(drawn_point(view)) == 0
    assert len(xs(view.triangle.path)) == 0
    assert not view.sliders[2].isEnabled()
    assert not view.shift.isEnabled()
    assert view.readouts["readout.simplex.p"].text() == "–"
    drag(qtbot, view, [0.4, 0.3, 0.3], [0.2, 0.2, 0.6])  # nothing to drag: nothing happens
    assert lab.scores.values.tolist() == [2.0, 1.0]
    qtbot.mouseClick(view.add_scores, Qt.MouseButton.LeftButton)
    assert lab.scores.values.tolist() == [2.0, 1.0, 0.0]
    settle(qtbot, view)
    assert not view.add_scores.isVisible()
    assert view.sliders[2].isEnabled()
    np.testing.assert_array_equal(drawn_point(view), expected_point(lab))


@pytest.mark.parametrize("values", [[np.inf, 1.0, 0.0], [np.nan, 1.0, 0.0], [1e6, -1e6, 0.0]])
def test_special_scores_draw_without_errors(qtbot, view, lab, values):
    lab.models["simplex"].show_kl = True
    lab.scores.set_values(values)
    settle(qtbot, view)
    p = compute.softmax(np.array(values))
    if np.isnan(p).any():
        assert len(drawn_point(view)) == 0
    else:
        np.testing.assert_array_equal(drawn_point(view), to_xy(p))


def test_plot_follows_the_theme(qtbot, view):
    from PySide6.QtGui import QColor

    from gui import theme as themes

    themes.manager().set_mode("dark")
    assert view.triangle.outline.opts["pen"].color() == QColor(themes.DARK.foreground)
    assert view.triangle.point.opts["symbolBrush"].color() == QColor(themes.DARK.highlight)
    assert view.triangle.corner_texts[0].color == QColor(themes.DARK.foreground)
    themes.manager().set_mode("light")
    assert view.triangle.outline.opts["pen"].color() == QColor(themes.LIGHT.foreground)


def test_session_keeps_the_parameters_but_not_q(tmp_path):
    from gui.model.lab import Lab
    from gui.model.session import Session

    lab = Lab()
    model = lab.models["simplex"]
    model.update_from_dict({"temperature": 0.3, "alpha": 2.5, "arrows": 3})
    model.pin_q([0.5, 0.25, 0.25])
    lab.session("simplex").save(tmp_path / "s.json")
    other = Lab()
    other.restore(Session.load(tmp_path / "s.json"))
    assert other.models["simplex"].to_dict() == {"temperature": 0.3, "alpha": 2.5, "arrows": 3}
    assert other.models["simplex"].q == pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_undo_brings_back_a_pinned_q(qtbot, window):
    view = window.show_view("simplex")
    model = window.lab.models["simplex"]
    model.pin_q([0.7, 0.2, 0.1])
    window.actions_by_key["action.undo"].trigger()
    assert model.q == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert view.isVisible()


# -- export -----------------------------------------------------------------------------------------


def test_export_writes_the_plot_and_the_arrays_to_the_bit(qtbot, view, lab, tmp_path):
    lab.models["simplex"].show_kl = True
    lab.models["simplex"].pin_q([0.5, 0.3, 0.2])
    written = export_view(view, "simplex", tmp_path)
    names = {p.name for p in written}
    assert {"simplex_triangle.png", "simplex_triangle.svg", "simplex.npz", "simplex_point.csv",
            "simplex_path.csv", "simplex_field.csv", "simplex_kl_grid.csv"} <= names
    data = read_npz(tmp_path / "simplex.npz")
    arrays = lab.models["simplex"].arrays(lab.scores)
    for key, a in arrays.items():
        assert np.array_equal(data[key], a.data, equal_nan=True), key
        assert data[f"{key}__columns"].tolist() == list(a.columns)
        assert (tmp_path / f"simplex_{key}.csv").exists()
    assert data["points__rows"].tolist() == ["softmax", "sparsemax", "entmax", "q"]
    assert np.array_equal(data["point"][0, 5:8], compute.softmax(np.array([2.0, 1.0, 0.5])))


def test_headless_export(tmp_path):
    result = run_main("export", "--view", "simplex", "--scores", "2,1,0.5", "--temperature", "0.5",
                      "--arrows", "2", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    data = read_npz(tmp_path / "simplex.npz")
    s = np.array([2.0, 1.0, 0.5])
    assert np.array_equal(data["point"][0, 5:8], compute.softmax(s, temperature=0.5))
    assert data["point"][0, -1] == 2
    expected = SimplexModel(temperature=0.5, arrows=2).arrays(row(2.0, 1.0, 0.5))
    for key, a in expected.items():
        assert np.array_equal(data[key], a.data, equal_nan=True), key
    assert (tmp_path / "simplex_triangle.png").exists()
    assert (tmp_path / "simplex_triangle.svg").exists()
