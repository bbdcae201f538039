"""The Online view's controls: the shared ones, shown and enabled where the model says they apply."""

import pytest

from gui.model.texts import tr
from gui.widgets.sliders import ParamChoice, ParamSlider, ParamSpin, ParamSwitch


def settle(qtbot, view):
    qtbot.wait(30)
    view.flush()


@pytest.fixture
def view(make_view):
    return make_view("online")


def test_each_parameter_gets_its_shared_control(view):
    kinds = {name: type(c) for name, c in view.controls.items()}
    assert kinds == {
        "mode": ParamChoice, "row": ParamChoice, "row_length": ParamSpin, "seed": ParamSpin,
        "block_size": ParamSlider, "temperature": ParamSlider, "n": ParamSlider, "d_k": ParamSlider,
        "tile": ParamSlider, "causal": ParamSwitch,
    }


@pytest.mark.parametrize(("mode", "row"), [("sequential", "random"), ("sequential", "scores"), ("tree", "random"),
                                           ("attention", "random"), ("attention", "scores")])
def test_controls_show_and_enable_where_their_parameter_applies(qtbot, view, lab, mode, row):
    model = lab.models["online"]
    model.update_from_dict({"mode": mode, "row": row})
    settle(qtbot, view)
    for name, control in view.controls.items():
        assert control.isVisibleTo(view) == model.applies(name), name
        assert control.isEnabled() == model.applies(name), name
    assert view.editor.isVisibleTo(view) == model.reads_scores
    assert view.passes_box.isVisibleTo(view) == (mode != "attention")


def test_d_k_and_causal_are_bound_both_ways(qtbot, view, lab):
    model = lab.models["online"]
    model.mode = "attention"
    d_k, causal = view.controls["d_k"], view.controls["causal"]
    d_k.spin.setValue(7)
    assert model.d_k == 7
    model.d_k = 3
    assert d_k.spin.value() == 3
    causal.setChecked(True)
    assert model.causal == "on"
    model.causal = "off"
    assert not causal.isChecked()


def test_the_tile_offers_at_most_n(qtbot, view, lab):
    model = lab.models["online"]
    model.mode = "attention"
    model.n = 5
    assert view.controls["tile"].spin.maximum() == 5
    model.n = 20
    assert view.controls["tile"].spin.maximum() == 20


def test_the_shared_rows_length_narrows_the_block_size_and_the_steps(qtbot, view, lab):
    model = lab.models["online"]
    model.update_from_dict({"row": "scores", "block_size": 1, "step": 10_000})  # the end of the run
    settle(qtbot, view)
    block = view.controls["block_size"]
    assert block.spin.maximum() == 4
    assert view.transport.label.text() == "step 4 of 4"
    lab.scores.set_values([0.5, 3.0, -2.0, 3.0, 1.0, 2.0, -1.0])
    assert block.spin.maximum() == 7
    assert view.transport.label.text() == "step 7 of 7"
    assert view.transport.slider.maximum() == 7


def test_tooltips_say_what_the_parameter_does_here(view):
    for name in ("row_length", "seed", "block_size", "n", "d_k", "tile"):
        control = view.controls[name]
        assert control.toolTip() == tr(f"online.{name}.tooltip"), name
    assert view.controls["block_size"].slider.toolTip() == tr("online.block_size.tooltip")
    assert view.controls["temperature"].toolTip() == tr("param.temperature.tooltip")


def test_shutdown_stops_playing(qtbot, view, lab):
    view.transport.play_button.click()
    assert view.transport.playing
    view.shutdown()
    assert not view.transport.playing
