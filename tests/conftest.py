"""Test configuration: offscreen Qt, isolated settings, no widgets left behind."""

import os

# Set before anything imports Qt: tests never need a display.
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ["PYQTGRAPH_QT_LIB"] = "PySide6"

import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent

# CI replays the same examples every run, so a landing never hangs on a new
# random draw; local runs keep exploring (and save what they find in .hypothesis/).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """Settings and the last session go to a fresh folder for every test."""
    monkeypatch.setenv("SOFTMAX_LAB_CONFIG_DIR", str(tmp_path / "config"))
    # English whatever the machine's locale (a test of the first-launch choice removes it)
    monkeypatch.setenv("SOFTMAX_LAB_LANG", "en")
    from gui.model import texts

    yield
    texts.set_language(None)  # a test that switched the language leaves English behind


@pytest.fixture(autouse=True)
def _backend_state_restored():
    """compute.backends keeps its CuPy probe, the active backend and a kernel failure for the process.

    A test that puts a fake CuPy in ``sys.modules`` may leave a verdict made over the fake ("CuPy
    works") behind it, for the next test in the same worker (under pytest-xdist, whichever that is):
    a CI run's Benchmark view then offered the CuPy kernels on a machine without a device.  Each
    test ends with the state it began with."""
    from compute import backends

    state = backends._state
    saved = (state.active, state.probe, state.kernel_failure, state.message)
    yield
    with backends._lock:
        state.active, state.probe, state.kernel_failure, state.message = saved


@pytest.fixture(autouse=True)
def _no_leftover_widgets(request):
    """Fail a test that leaves visible top-level widgets behind (napari does the same)."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    before = set(app.topLevelWidgets()) if app else set()
    yield
    app = QApplication.instance()
    if app is None:
        return
    app.processEvents()
    left = [w for w in app.topLevelWidgets() if w.isVisible() and w not in before]
    for w in left:
        w.close()
    from gui import theme

    if theme._manager is not None:
        theme.manager().set_mode("light")
    assert not left, f"test left top-level widgets open: {left}"


@pytest.fixture
def lab():
    from gui.model.lab import Lab

    return Lab()


@pytest.fixture
def make_view(qtbot, lab):
    """Build a registered view around ``lab``, shown and laid out."""

    def make(name: str):
        from gui import registry

        view = registry.get(name).widget_class()(lab.scores, lab.models[name])
        qtbot.addWidget(view)
        view.resize(1300, 850)
        view.show()
        qtbot.waitExposed(view)
        return view

    return make


@pytest.fixture
def window(qtbot, tmp_path):
    from gui.app import MainWindow

    w = MainWindow(settings_dir=tmp_path / "window-config")
    w.lessons.dismiss()  # the window as the other tests know it; the Lessons panel has tests/gui/test_lessons.py
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def run_main(*args, env=None, cwd=None, timeout=120):
    """Run ``python main.py ARGS`` in a subprocess; returns CompletedProcess."""
    import subprocess

    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        capture_output=True, text=True, env=full_env, cwd=cwd or ROOT, timeout=timeout,
    )
