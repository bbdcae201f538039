"""The parameter controls: one binder, chosen from the model's metadata, enabled and ranged by the model."""

from dataclasses import dataclass
from typing import ClassVar

import pytest
from psygnal import evented
from PySide6.QtWidgets import QFormLayout, QLabel

from gui.model.base import ViewModel, choice, param
from gui.widgets.sliders import ParamChoice, ParamSlider, ParamSpin, ParamSwitch, param_control, param_form


@evented
@dataclass
class Knobs(ViewModel):
    """A small model over parameter names that have UI texts."""

    name: ClassVar[str] = "knobs"
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    n: int = param(8, minimum=2, maximum=64, integer=True)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True, control="spin")
    causal: str = choice("off", ("off", "on"))
    scaling: str = choice("sqrt_dk", ("sqrt_dk", "none", "custom"))

    def applies(self, name: str) -> bool:
        return name != "temperature" or self.scaling == "custom"

    def bounds(self, name: str) -> tuple[float, float]:
        if name == "n" and self.causal == "on":
            return 2, 10
        return super().bounds(name)

    def set_param(self, name, value) -> None:
        if name == "seed" and value == 13:
            raise ValueError("13 is refused")
        super().set_param(name, value)


@pytest.fixture
def knobs():
    return Knobs()


def test_the_metadata_picks_the_control(qtbot, knobs):
    kinds = {name: type(param_control(knobs, name)) for name in ("temperature", "n", "seed", "causal", "scaling")}
    for w in kinds.values():
        assert w in (ParamSlider, ParamSpin, ParamSwitch, ParamChoice)
    assert kinds["temperature"] is ParamSlider
    assert kinds["n"] is ParamSlider
    assert kinds["seed"] is ParamSpin
    assert kinds["causal"] is ParamSwitch
    assert kinds["scaling"] is ParamChoice


def test_an_unknown_control_name_is_refused():
    with pytest.raises(ValueError, match="unknown control"):
        param(1, minimum=0, maximum=2, control="dial")


def test_model_changes_show_without_writing_back(qtbot, knobs):
    spin = ParamSpin(knobs, "seed")
    qtbot.addWidget(spin)
    writes = []
    knobs.events.seed.connect(writes.append)
    knobs.seed = 42
    assert spin.value() == 42
    assert writes == [42]  # the control showing it did not set it a second time


def test_user_edits_reach_the_model(qtbot, knobs):
    slider, switch, combo = ParamSlider(knobs, "n"), ParamSwitch(knobs, "causal"), ParamChoice(knobs, "scaling")
    for w in (slider, switch, combo):
        qtbot.addWidget(w)
    slider.spin.setValue(17.4)
    assert knobs.n == 17
    assert isinstance(knobs.n, int)
    switch.setChecked(True)
    assert knobs.causal == "on"
    combo.combo.activated.emit(2)
    assert knobs.scaling == "custom"


def test_a_refused_value_is_reported_and_the_control_goes_back(qtbot, knobs):
    spin = ParamSpin(knobs, "seed")
    qtbot.addWidget(spin)
    knobs.seed = 5
    messages = []
    spin.message.connect(messages.append)
    spin.setValue(13)
    assert messages == ["13 is refused"]
    assert knobs.seed == 5
    assert spin.value() == 5


def test_enabled_state_follows_the_model(qtbot, knobs):
    slider = ParamSlider(knobs, "temperature")
    qtbot.addWidget(slider)
    assert not slider.isEnabled()
    knobs.scaling = "custom"
    assert slider.isEnabled()
    knobs.scaling = "none"
    assert not slider.isEnabled()


def test_the_range_follows_the_model(qtbot, knobs):
    slider = ParamSlider(knobs, "n")
    qtbot.addWidget(slider)
    assert slider.spin.maximum() == 64
    knobs.causal = "on"
    assert slider.spin.maximum() == 10
    knobs.causal = "off"
    assert slider.spin.maximum() == 64
    assert knobs.n == 8  # narrowing the offer did not change the value


def test_param_form_lays_out_and_routes_messages(qtbot, knobs):
    messages, controls = [], {}
    box = param_form(knobs, ("seed", "n", "causal"), message=messages.append, controls=controls)
    qtbot.addWidget(box)
    form = box.layout()
    assert isinstance(form, QFormLayout)
    assert form.rowCount() == 3
    caption = form.itemAt(0, QFormLayout.ItemRole.LabelRole).widget()
    assert isinstance(caption, QLabel)
    assert caption.text().endswith(":")
    assert set(controls) == {"seed", "n", "causal"}
    controls["seed"].setValue(13)
    assert messages == ["13 is refused"]


def test_a_spin_sets_its_range_only_when_the_model_moves_it(qtbot, knobs):
    """A model change that leaves the bounds alone does not set the spin's range again (QSpinBox
    would lay out and repaint the controls column on every slider step); a moved bound does."""
    spin = ParamSpin(knobs, "n")
    qtbot.addWidget(spin)
    calls = []
    real = spin.setRange
    spin.setRange = lambda lo, hi: calls.append((lo, hi)) or real(lo, hi)
    knobs.seed = 3
    knobs.temperature = 2.0
    assert calls == [] and (spin.minimum(), spin.maximum()) == (2, 64)
    knobs.causal = "on"
    assert calls == [(2, 10)] and spin.maximum() == 10
    knobs.seed = 4
    assert calls == [(2, 10)]
    knobs.causal = "off"
    assert calls[-1] == (2, 64) and spin.maximum() == 64
