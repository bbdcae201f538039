"""The main window: views, menus, undo, sessions, theme, status bar."""

import json
import math

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QGuiApplication, QKeySequence

from gui import registry
from gui import theme as themes
from gui.app import LAST_SESSION, MainWindow


def test_lists_every_registered_view_and_switches(qtbot, window):
    assert window.nav.count() == len(registry.VIEWS)
    assert [window.nav.item(i).text() for i in range(window.nav.count())][:2] == ["Calculator", "Temperature"]
    assert window.current_name == "calculator"
    window.nav.setCurrentRow(1)
    assert window.stack.currentWidget() is window.views["temperature"]
    assert window.stack.currentWidget().isVisible()


def test_views_share_one_score_row(qtbot, window):
    calc = window.view("calculator")
    temp = window.view("temperature")
    window.lab.scores.set_values([5.2, 3.1, 1.8])
    qtbot.wait(40)
    calc.flush()
    temp.flush()
    np.testing.assert_array_equal(calc.bars.heights[0], temp.bars.heights[1])


def test_menus_use_standard_shortcuts(window):
    SK = QKeySequence.StandardKey
    for key, std in [("action.open_session", SK.Open), ("action.save_session", SK.Save),
                     ("action.undo", SK.Undo), ("action.redo", SK.Redo),
                     ("action.copy", SK.Copy), ("action.paste", SK.Paste), ("action.quit", SK.Quit)]:
        assert window.actions_by_key[key].shortcut() == QKeySequence(std), key
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles == ["&File", "&Edit", "&View", "&Help"]


def test_undo_and_redo_a_table_edit_and_a_slider_drag(qtbot, window):
    lab = window.lab
    lab.scores.set_value(0, 9.0)
    temp = window.show_view("temperature")
    qtbot.wait(800)  # a new step, not merged with the edit
    for pos in (400, 350, 300):  # one drag: merged into one step
        temp.temperature.slider.setValue(pos)
    undo = window.actions_by_key["action.undo"]
    redo = window.actions_by_key["action.redo"]
    dragged = lab.models["temperature"].temperature
    undo.trigger()
    assert lab.models["temperature"].temperature == 1.0
    assert temp.temperature.spin.value() == 1.0
    undo.trigger()
    assert lab.scores.values[0] == 2.0
    redo.trigger()
    redo.trigger()
    assert lab.scores.values[0] == 9.0
    assert lab.models["temperature"].temperature == dragged
    # an undone change records nothing new
    assert window.undo_stack.count() == 2


def test_undo_brings_back_scores_replaced_by_a_preset(qtbot, window):
    calc = window.view("calculator")
    calc.editor.presets.activated.emit(2)
    assert window.lab.scores.values.tolist() == [5.2, 3.1, 1.8]
    window.actions_by_key["action.undo"].trigger()
    assert window.lab.scores.values.tolist() == [2.0, 1.0, 0.5, -1.0]


def test_copy_and_paste_go_to_the_focused_table(qtbot, window):
    calc = window.view("calculator")
    table = calc.editor.table
    table.setFocus()
    table.setCurrentIndex(calc.editor.model.index(0, 1))
    qtbot.waitUntil(lambda: QGuiApplication.focusObject() is table or table.hasFocus(), timeout=1000)
    QGuiApplication.clipboard().setText("")
    window.actions_by_key["action.copy"].trigger()
    assert QGuiApplication.clipboard().text() == "2.0\n"
    QGuiApplication.clipboard().setText("3.5\n")
    table.setCurrentIndex(calc.editor.model.index(1, 1))
    window.actions_by_key["action.paste"].trigger()
    assert window.lab.scores.values[1] == 3.5


def test_session_save_and_open_restore_the_exact_state(qtbot, window, tmp_path):
    lab = window.lab
    lab.scores.set_values([1.0, -math.inf, 0.25], ["a", "b", "c"])
    lab.models["temperature"].set_param("temperature", 0.42)
    window.show_view("temperature")
    path = tmp_path / "s.json"
    window.save_session(path)
    lab.scores.set_values([0.0])
    lab.models["temperature"].set_param("temperature", 3.0)
    window.show_view("calculator")
    window.open_session(path)
    assert lab.scores.labels == ("a", "b", "c")
    assert lab.scores.values.tolist() == [1.0, -math.inf, 0.25]
    assert lab.models["temperature"].temperature == 0.42
    assert window.current_name == "temperature"
    assert window.views["temperature"].temperature.spin.value() == 0.42


def test_a_bad_session_file_is_refused_and_changes_nothing(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "softmax-lab-session", "version": 1, "scores": [{"value": "zzz"}]}')
    warnings = []
    monkeypatch.setattr("gui.app.QFileDialog.getOpenFileName", lambda *a, **k: (str(path), ""))
    monkeypatch.setattr("gui.app.QMessageBox.warning", lambda *a: warnings.append(a[2]))
    window.open_session_dialog()
    assert warnings
    assert "expected a number" in warnings[0]
    assert window.lab.scores.values.tolist() == [2.0, 1.0, 0.5, -1.0]


def test_geometry_and_last_session_come_back_on_the_next_launch(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QRect

    from gui import screen_fit

    # a 1366 x 768 laptop (the offscreen screen, 800 x 800, is narrower than the window's minimum)
    monkeypatch.setattr(screen_fit, "available_at", lambda point=None: QRect(0, 0, 1366, 736))
    settings = tmp_path / "cfg"
    first = MainWindow(settings_dir=settings)
    qtbot.addWidget(first)
    first.show()
    first.lab.scores.set_values([4.0, 2.0])
    first.lab.models["calculator"].set_param("temperature", 0.3)
    first.show_view("temperature")
    first.resize(700, 650)  # the width stops at the minimum
    target = (first.width(), first.height())
    assert target[1] == 650
    first.close()
    saved = json.loads((settings / LAST_SESSION).read_text())
    assert saved["current_view"] == "temperature"

    second = MainWindow(settings_dir=settings)
    qtbot.addWidget(second)
    second.show()
    assert (second.size().width(), second.size().height()) == target
    assert second.lab.scores.values.tolist() == [4.0, 2.0]
    assert second.lab.models["calculator"].temperature == 0.3
    assert second.current_name == "temperature"
    assert second.undo_stack.count() == 0  # restoring is not an edit
    second.close()


def test_a_corrupt_last_session_starts_from_defaults(qtbot, tmp_path):
    settings = tmp_path / "cfg"
    settings.mkdir()
    (settings / LAST_SESSION).write_text("{broken")
    w = MainWindow(settings_dir=settings)
    qtbot.addWidget(w)
    assert w.lab.scores.values.tolist() == [2.0, 1.0, 0.5, -1.0]
    assert "could not be restored" in w.statusBar().currentMessage()
    assert (settings / (LAST_SESSION + ".bad")).read_text() == "{broken"  # kept, not lost


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_theme_restyles_plots_and_is_remembered(qtbot, window, mode, tmp_path):
    view = window.view("temperature")
    window.theme_actions[mode].trigger()
    expected = themes.LIGHT if mode == "light" else themes.DARK
    assert themes.current() is expected
    assert view.bars.backgroundBrush().color() == QColor(expected.background)
    assert view.entropy.backgroundBrush().color() == QColor(expected.background)
    qtbot.wait(10)
    lightness = window.palette().window().color().lightness()
    assert lightness > 128 if mode == "light" else lightness < 128
    assert window.settings.value("theme") == mode


def test_system_theme_is_the_default(window):
    assert themes.manager().mode in ("system", "light")
    assert window.theme_actions["system"].isChecked() or themes.manager().mode == "light"


def test_about_names_versions_and_backend(window):
    import numpy
    import PySide6

    text = window.about_text()
    assert PySide6.__version__ in text
    assert numpy.__version__ in text
    assert "NumPy" in text


def test_status_bar_shows_the_value_under_the_mouse(qtbot, window):
    view = window.view("calculator")
    window.show_view("calculator")
    plot = view.bars
    vb = plot.getPlotItem().getViewBox()
    scene_pos = vb.mapViewToScene(QPointF(0.0, 0.3))
    plot.scene().sigMouseMoved.emit(scene_pos)
    message = window.statusBar().currentMessage()
    assert message == "Token 1 — α = 0.609 (60.95%)"

    temp = window.show_view("temperature")
    vb = temp.entropy.getPlotItem().getViewBox()
    temp.entropy.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(0.0, 0.5)))  # log10(T) = 0
    assert window.statusBar().currentMessage().startswith("T = 1.000, H = 0.500")


def test_a_last_session_with_one_stale_setting_keeps_the_rest(qtbot, tmp_path):
    settings = tmp_path / "cfg"
    settings.mkdir()
    (settings / LAST_SESSION).write_text(json.dumps({
        "format": "softmax-lab-session", "version": 1,
        "scores": [{"label": "x", "value": 4.0}, {"label": "y", "value": 2.0}],
        "views": {"gradients": {"target": 0, "temperature": 0.5}},
        "current_view": "temperature",
    }))
    w = MainWindow(settings_dir=settings)
    qtbot.addWidget(w)
    assert w.lab.scores.values.tolist() == [4.0, 2.0]
    assert w.lab.models["gradients"].temperature == 0.5
    assert w.lab.models["gradients"].target == 1  # the stale 0 was skipped
    assert "skipped" in w.statusBar().currentMessage()
    assert "target" in w.statusBar().currentMessage()


def test_opening_a_session_with_stale_settings_says_what_was_skipped(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({
        "format": "softmax-lab-session", "version": 1,
        "scores": [{"value": 1.0}, {"value": 3.0}],
        "views": {"temperature": {"scale": 500}},
    }))
    shown = []
    monkeypatch.setattr("gui.app.QFileDialog.getOpenFileName", lambda *a, **k: (str(path), ""))
    monkeypatch.setattr("gui.app.QMessageBox.warning", lambda *a: shown.append(a[2]))
    window.open_session_dialog()
    assert window.lab.scores.values.tolist() == [1.0, 3.0]
    assert shown
    assert "scale must be between 0.1 and 10" in shown[0]


def test_closing_the_window_stops_background_work(qtbot, tmp_path):
    w = MainWindow(settings_dir=tmp_path / "cfg")
    qtbot.addWidget(w)
    w.show()
    w.lab.models["attention"].set_param("n", 2048)
    view = w.show_view("attention")
    view.start_sweep()
    assert view.sweep_job.busy
    w.close()  # the view gets no close event of its own: the window must stop its jobs
    assert not view.sweep_job.running
    assert not view.core_job.running


# -- the compute backend ---------------------------------------------------------------------------
def test_backend_menu_lists_both_and_explains_an_unavailable_gpu(window):
    import compute

    actions = window.backend_actions
    assert set(actions) == {"numpy", "cupy"}
    window._sync_backend_actions()
    assert actions["numpy"].isChecked()
    assert actions["numpy"].isEnabled()
    if "cupy" not in compute.available_backends():
        assert not actions["cupy"].isEnabled()
        assert actions["cupy"].toolTip() == compute.unavailable_reasons()["cupy"]
    assert window.backend_label.text() == f"Backend: NumPy {np.__version__}"


def test_choosing_an_unavailable_backend_stays_on_numpy_and_says_why(window, monkeypatch):
    import compute

    monkeypatch.setattr(compute.backends, "_probed", lambda: "no CUDA device answered: test")
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    assert not window.set_backend("cupy")
    assert compute.active() == "numpy"
    assert window.backend_actions["numpy"].isChecked()
    assert any("no CUDA device answered: test" in m for m in messages)


def test_a_fallback_from_a_worker_thread_reaches_the_status_bar_once(qtbot, window):
    import threading

    import compute

    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    worker = threading.Thread(target=compute.backends._record_fallback, args=("kernel exploded (test)",))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: any("kernel exploded (test)" in m for m in messages), timeout=5000)
    assert sum("kernel exploded (test)" in m for m in messages) == 1
    assert compute.take_fallback_message() is None  # taken by the window
