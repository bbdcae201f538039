"""Without a usable display, the app explains what is missing instead of aborting."""

import pytest

from gui import platform_check
from tests.conftest import run_main


def test_no_display_prints_a_hint_and_exits_non_zero():
    result = run_main(env={"QT_QPA_PLATFORM": "xcb", "DISPLAY": "", "WAYLAND_DISPLAY": ""}, timeout=60)
    assert result.returncode == 3
    assert "no X display" in result.stderr
    assert "libxcb-cursor0" in result.stderr  # the install hint
    assert "Aborted" not in result.stderr
    assert "core dumped" not in result.stderr


def test_missing_xcb_libraries_are_named_with_their_packages(monkeypatch):
    monkeypatch.setattr(platform_check, "_loadable", lambda lib: lib != "libxcb-cursor.so.0")
    message = platform_check.platform_problem({"DISPLAY": ":0"})
    assert "libxcb-cursor.so.0" in message
    assert "apt-get install libxcb-cursor0" in message


@pytest.mark.parametrize(
    "env",
    [{"QT_QPA_PLATFORM": "offscreen"}, {"WAYLAND_DISPLAY": "wayland-0"}, {"QT_QPA_PLATFORM": "wayland"}],
)
def test_other_platforms_are_left_to_qt(env):
    assert platform_check.platform_problem(env) is None


def test_a_complete_x11_setup_passes(monkeypatch):
    monkeypatch.setattr(platform_check, "_loadable", lambda lib: True)
    assert platform_check.platform_problem({"DISPLAY": ":0"}) is None
