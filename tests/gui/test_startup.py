"""What start-up imports, and what waits for the window's first paint (``bench/startup.py`` times it).

One ``python main.py`` with ``SOFTMAX_LAB_EXIT_AFTER_PAINT=1`` prints the modules loaded when its
window first painted; the heavy packages, the views not shown and the figure exporters must not
be among them.  Imports only: no test here looks at a duration.
"""

from __future__ import annotations

import json
import sys

import pytest
from PySide6.QtWidgets import QWidget

import compute
from gui import first_paint, registry
from gui.first_paint import EXIT_AFTER_PAINT, after_first_paint, exit_after_first_paint
from tests.conftest import run_main

#: Packages the window must not load before it is up (each costs 0.1-2 s where installed).
HEAVY = ("scipy", "torch", "transformers", "sklearn", "cupy", "cupyx", "cupy_backends", "cuda",
         "superqt", "qtpy")  # superqt's utils alone pulled in all of superqt and qtpy: about 0.2 s


@pytest.fixture(scope="module")
def at_first_paint(tmp_path_factory) -> dict:
    config = tmp_path_factory.mktemp("startup-config")  # empty: no saved session picks another view
    done = run_main(env={"QT_QPA_PLATFORM": "offscreen", "SOFTMAX_LAB_CONFIG_DIR": str(config),
                         EXIT_AFTER_PAINT: "1"}, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stdout
    return json.loads(lines[0])


def test_the_hook_reports_the_painted_window(at_first_paint):
    modules = set(at_first_paint["modules"])
    first_view = registry.VIEWS[0].widget_path.partition(":")[0]
    assert {"gui.app", "gui.views.base", first_view} <= modules  # the window, built, with its first view
    assert isinstance(at_first_paint["painted_at"], float)


def test_no_heavy_package_is_imported_before_the_first_paint(at_first_paint):
    loaded = {name.partition(".")[0] for name in at_first_paint["modules"]}
    assert sorted(loaded & set(HEAVY)) == []
    assert "compute.backends.cupy_backend" not in at_first_paint["modules"]


def test_only_the_shown_view_is_imported(at_first_paint):
    modules = set(at_first_paint["modules"])
    others = {spec.widget_path.partition(":")[0] for spec in registry.VIEWS[1:]}
    assert len(others) == len(registry.VIEWS) - 1
    assert sorted(others & modules) == []
    assert sorted(m for m in modules if any(m.startswith(o + ".") for o in others)) == []


def test_figure_export_is_imported_when_first_used(at_first_paint):
    modules = set(at_first_paint["modules"])
    assert sorted(modules & {"gui.export.figure", "gui.export.svg_fix", "gui.export.pens", "gui.cli"}) == []


def test_pyqtgraph_leaves_cuda_python_importable():
    """gui.qt keeps cuda.bindings out of pyqtgraph's import, and leaves no block behind."""
    import gui.qt  # noqa: F401

    assert sys.modules.get("cuda.bindings", "absent") is not None


def test_the_cupy_probe_waits_for_the_first_paint(qtbot, tmp_path, monkeypatch):
    from gui.app import MainWindow

    probes = []
    real = compute.available_backends
    monkeypatch.setattr(compute, "available_backends", lambda: probes.append(1) or real())
    w = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(w)
    qtbot.wait(20)  # the event loop runs; the window is not shown, so it has not painted
    assert probes == []
    assert w.backend_actions["cupy"].isEnabled()  # not probed yet
    w.show()
    qtbot.waitUntil(lambda: probes != [], timeout=5000)
    assert w.backend_actions["cupy"].isEnabled() == ("cupy" in real())


def test_after_first_paint_calls_once_after_the_paint(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    calls = []
    after_first_paint(widget, lambda: calls.append("after"))
    after_first_paint(widget, lambda: calls.append("at"), at_once=True)
    qtbot.wait(10)
    assert calls == []  # not shown, not painted
    widget.show()
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=5000)
    assert calls == ["at", "after"]  # at the paint event; the other once that paint is done
    widget.update()
    qtbot.wait(50)
    assert calls == ["at", "after"]  # once only


def test_the_exit_hook_watches_only_with_its_variable(qtbot, monkeypatch):
    watching = []
    for value in (None, "1"):
        if value is None:
            monkeypatch.delenv(EXIT_AFTER_PAINT, raising=False)
        else:
            monkeypatch.setenv(EXIT_AFTER_PAINT, value)
        widget = QWidget()  # never shown: the hook would quit the test's event loop
        qtbot.addWidget(widget)
        exit_after_first_paint(widget)
        watching.append(len(widget.findChildren(first_paint._FirstPaint)))
    assert watching == [0, 1]
