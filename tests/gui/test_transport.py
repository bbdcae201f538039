"""The Transport: step through a run bound to one integer parameter, play on a timer, stop at the end."""

from dataclasses import dataclass
from typing import ClassVar

import pytest
from psygnal import evented
from PySide6.QtCore import Qt

from gui.model.base import ViewModel, param
from gui.widgets.transport import DEFAULT_SPEED, MAX_SPEED, Transport


@evented
@dataclass
class Run(ViewModel):
    """A run of ``length`` steps; ``step`` past the end means the end."""

    name: ClassVar[str] = "run"
    step: int = param(100, minimum=0, maximum=100, integer=True)
    length: int = 5  # view-only: where the run ends

    def bounds(self, name: str) -> tuple[float, float]:
        return (0, self.length) if name == "step" else super().bounds(name)

    def set_param(self, name, value) -> None:
        if name == "step" and value == 13:
            raise ValueError("13 is refused")
        super().set_param(name, value)


@pytest.fixture
def run():
    return Run()


@pytest.fixture
def transport(qtbot, run):
    t = Transport(run, "step", prefix="online")
    qtbot.addWidget(t)
    return t


def steps_written(run) -> list[int]:
    written: list[int] = []
    run.events.step.connect(written.append)
    return written


def test_a_value_past_the_end_shows_as_the_end(transport, run):
    assert transport.step == 5
    assert transport.last == 5
    assert transport.slider.maximum() == 5
    assert transport.slider.value() == 5
    assert transport.label.text() == "step 5 of 5"
    assert not transport.forward_button.isEnabled()
    assert not transport.end_button.isEnabled()
    assert transport.back_button.isEnabled()
    assert transport.reset_button.isEnabled()
    assert run.step == 100  # showing it wrote nothing


def test_buttons_and_slider_step_through(qtbot, transport, run):
    qtbot.mouseClick(transport.back_button, Qt.MouseButton.LeftButton)
    assert run.step == 4
    assert transport.label.text() == "step 4 of 5"
    transport.forward_button.click()
    assert run.step == 5
    transport.reset_button.click()
    assert run.step == 0
    assert not transport.back_button.isEnabled()
    assert not transport.reset_button.isEnabled()
    assert transport.forward_button.isEnabled()
    transport.slider.setValue(3)
    assert run.step == 3
    transport.end_button.click()
    assert run.step == 5
    assert transport.slider.value() == 5


def test_go_to_stays_within_the_range(transport, run):
    transport.go_to(99)
    assert run.step == 5
    transport.go_to(-4)
    assert run.step == 0
    written = steps_written(run)
    transport.go_to(0)
    assert written == []  # already there: nothing written


def test_the_keyboard_moves_the_slider_and_toggles_play(qtbot, transport, run):
    transport.go_to(1)
    qtbot.keyClick(transport.slider, Qt.Key.Key_Right)
    assert run.step == 2
    qtbot.keyClick(transport.slider, Qt.Key.Key_Home)
    assert run.step == 0
    qtbot.keyClick(transport.play_button, Qt.Key.Key_Space)
    assert transport.playing
    qtbot.keyClick(transport.play_button, Qt.Key.Key_Space)
    assert not transport.playing


def test_model_changes_show_without_writing_back(transport, run):
    written = steps_written(run)
    run.step = 2
    assert transport.slider.value() == 2
    assert transport.label.text() == "step 2 of 5"
    assert written == [2]


def test_the_range_follows_the_model(transport, run):
    run.step = 3
    run.length = 2
    assert transport.slider.maximum() == 2
    assert transport.label.text() == "step 2 of 2"
    assert run.step == 3  # the model keeps its value; the end is shown
    run.length = 8
    assert transport.label.text() == "step 3 of 8"
    assert transport.forward_button.isEnabled()


def test_follow_reads_a_range_that_changed_outside_the_model(transport, run):
    object.__setattr__(run, "length", 9)  # no event, as when data the model reads changes
    assert transport.last == 5
    transport.follow()
    assert transport.last == 9
    assert transport.label.text() == "step 9 of 9"


def test_speed_sets_the_timer(transport):
    assert transport.speed.value() == DEFAULT_SPEED
    assert transport.speed.minimum() == 1
    assert transport.speed.maximum() == MAX_SPEED
    assert transport.timer.interval() == round(1000 / DEFAULT_SPEED)
    transport.speed.setValue(MAX_SPEED)
    assert transport.timer.interval() == round(1000 / MAX_SPEED)


def test_play_from_the_end_starts_over_and_stops_at_the_end(qtbot, transport, run):
    transport.speed.setValue(MAX_SPEED)
    written = steps_written(run)
    transport.play_button.click()
    assert transport.playing
    assert run.step == 0
    assert transport.play_button.isChecked()
    assert transport.play_button.text() == "❚❚ Pause"
    qtbot.waitUntil(lambda: not transport.playing, timeout=5000)
    assert run.step == 5
    assert written == [0, 1, 2, 3, 4, 5]  # one step per tick
    assert not transport.play_button.isChecked()
    assert transport.play_button.text() == "▶ Play"


def test_play_from_the_middle_goes_on_from_there(qtbot, transport, run):
    run.step = 3
    transport.speed.setValue(MAX_SPEED)
    written = steps_written(run)
    transport.play_button.click()
    qtbot.waitUntil(lambda: not transport.playing, timeout=5000)
    assert written == [4, 5]


def test_pause_and_stop_halt_the_timer(qtbot, transport, run):
    run.length = 1000
    transport.go_to(0)
    transport.speed.setValue(30)
    transport.play_button.click()
    qtbot.waitUntil(lambda: run.step >= 1, timeout=5000)
    transport.play_button.click()
    assert not transport.playing
    stopped = run.step
    qtbot.wait(150)
    assert run.step == stopped
    transport.play_button.click()
    assert transport.playing
    transport.stop()
    assert not transport.playing
    assert transport.play_button.text() == "▶ Play"


def test_a_refused_step_is_reported_and_the_display_reverts(qtbot, transport, run):
    run.length = 20
    transport.go_to(12)
    with qtbot.waitSignal(transport.message) as blocker:
        transport.forward_button.click()
    assert blocker.args == ["13 is refused"]
    assert run.step == 12
    assert transport.slider.value() == 12
