"""gui.widgets.ticks against plain loops."""

import math

from hypothesis import given
from hypothesis import strategies as st

from gui.widgets import ticks


def reference_step(count: int, most: int) -> int:
    for k in range(0, 40):
        step = (1, 2, 5)[k % 3] * 10 ** (k // 3)
        if math.ceil(count / step) <= most:
            return step
    raise AssertionError


@given(st.integers(1, 10**6), st.integers(1, 30))
def test_nice_step_is_the_smallest_1_2_5_step_that_fits(count, most):
    assert ticks.nice_step(count, most) == reference_step(count, most)


@given(st.integers(1, 5000))
def test_label_ticks(count):
    labels = [f"t{i}" for i in range(count)]
    got = ticks.label_ticks(count, labels, most=6)
    if count <= 6:
        assert got == [(i + 0.5, labels[i]) for i in range(count)]
    elif count <= ticks.MAX_NUMBERED:
        assert got == [(i + 0.5, str(i + 1)) for i in range(count)]
    else:
        assert len(got) <= ticks.NICE_TICKS
        assert got[0] == (0.5, "1")
        step = round(got[1][0] - got[0][0]) if len(got) > 1 else count
        assert str(step)[0] in "125"


@given(st.integers(1, 3000), st.integers(1, 50))
def test_strided_and_integer_ticks_stay_within_about_most(n, most):
    labels = [str(i) for i in range(n)]
    s = ticks.strided_labels(labels, most)
    assert len(s) <= most
    assert s[0] == (0, "0")
    t = ticks.integer_ticks(n - 1, most)
    assert len(t) <= most
    assert t[0] == (0, "0")
    assert all(pos == int(text) for pos, text in t)


def test_decade_ticks():
    got = ticks.decade_ticks(0.05, 5)
    assert [text for _, text in got] == ["0.05", "0.1", "0.2", "0.5", "1", "2", "5"]
    assert all(math.isclose(10**pos, float(text)) for pos, text in got)
