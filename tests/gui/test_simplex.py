"""The Simplex view: the widget driven by mouse and sliders, and its export (the model: test_simplex_model.py)."""

import numpy as np
import pytest

import compute
from gui.export import export_view, read_npz
from gui.model.scores import ScoreRow
from gui.model.simplex import PATH_T, SimplexModel, from_xy, to_xy
from tests.conftest import run_main


def row(*values) -> ScoreRow:
    r = ScoreRow()
    r.set_values(values)
    return r


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
