"""Every slider of every view reaches its parameter's bounds exactly at its ends (issue 13 §5)."""

import math

import pytest

from gui import registry
from gui.widgets.sliders import STEPS, ParamSlider, ValueSlider

VIEW_NAMES = [spec.name for spec in registry.VIEWS]


def test_log_slider_ends_are_the_bounds_not_a_rounding_below(qtbot):
    """10**log10(0.05) is 0.049999...: the leftmost position must still be 0.05 itself."""
    assert 10.0 ** math.log10(0.05) < 0.05  # the rounding the ends must not inherit
    s = ValueSlider("T", 0.05, 5.0, 1.0, log=True)
    qtbot.addWidget(s)
    if True:
        assert s._to_value(0) == 0.05
        assert s._to_value(STEPS) == 5.0
        inner = [s._to_value(p) for p in range(1, STEPS)]
        assert all(0.05 <= v <= 5.0 for v in inner)
        assert inner == sorted(inner)


@pytest.mark.parametrize("name", VIEW_NAMES)
def test_every_slider_reaches_both_bounds(make_view, name):
    view = make_view(name)
    sliders = view.findChildren(ValueSlider)
    refusals: list[str] = []
    view.status.connect(refusals.append)
    for s in sliders:
        if isinstance(s, ParamSlider):
            s.message.connect(refusals.append)
    checked = 0
    for s in sliders:
        if not s.isEnabled() or s.blank:
            continue
        emitted: list[float] = []
        s.valueEdited.connect(emitted.append)
        for pos, bound in ((0, s.minimum), (STEPS, s.maximum)):
            s.slider.setValue(STEPS // 2)
            assert s.slider.maximum() == STEPS
            s.slider.setValue(pos)
            assert emitted and emitted[-1] == bound, (name, s.label.text(), pos, emitted[-1:])
            if isinstance(s, ParamSlider):
                lo, hi = s.model.bounds(s.name)
                expected = lo if pos == 0 else hi
                if s.model.params()[s.name].kind == "int":
                    expected = round(expected)
                assert getattr(s.model, s.name) == expected, (name, s.name, pos)
            checked += 1
        s.valueEdited.disconnect(emitted.append)
    refused = [m for m in refusals if "must be" in m or "between" in m]
    assert not refused, (name, refused)
    if name in ("sampling", "temperature"):
        assert checked >= 4
