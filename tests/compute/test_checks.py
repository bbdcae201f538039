"""The shared checks (compute._checks): one message per mistake, and the steps driver."""

from __future__ import annotations

import math

import numpy as np
import pytest

import compute
from compute._checks import (
    _check_bool,
    _check_count,
    _check_finite,
    _check_positive,
    _check_whole,
    _drive,
    _real,
)


@pytest.mark.parametrize("value", [10**400, -(10**400)], ids=["+10**400", "-10**400"])
def test_huge_ints_are_out_of_range_not_an_overflow(value):
    with pytest.raises(ValueError, match="temperature must be finite and > 0"):
        compute.check_temperature(value)
    assert _real(value, "x")[0] == (math.inf if value > 0 else -math.inf)


@pytest.mark.parametrize("value", [0.5, 2, np.float32(0.25), np.array(3.0), np.int64(7)])
def test_real_numbers_come_back_as_python_floats(value):
    got = _check_positive(value, "t")
    assert type(got) is float and got == float(np.asarray(value))


@pytest.mark.parametrize("value", ["1", None, 1j, True, np.bool_(False), np.array([1.0, 2.0])])
def test_non_reals_are_type_errors_naming_the_argument(value):
    for check in (_check_positive, _check_finite):
        with pytest.raises(TypeError, match=r"^alpha must be a real number, got "):
            check(value, "alpha")


def test_range_messages():
    with pytest.raises(ValueError, match=r"^tau must be finite and > 0, got 0$"):
        _check_positive(np.int64(0), "tau")
    with pytest.raises(ValueError, match=r"^top_p must be finite, got nan$"):
        _check_finite(np.float64("nan"), "top_p")
    with pytest.raises(ValueError, match=r"^n must be >= 1, got 0$"):
        _check_count(0, "n", 1)
    with pytest.raises(TypeError, match=r"^n must be an integer, got 2.0$"):
        _check_count(2.0, "n")
    with pytest.raises(ValueError, match=r"^tile must be a whole number >= 1, got 1.5$"):
        _check_whole(1.5, "tile")
    assert _check_whole(4.0, "tile") == 4
    with pytest.raises(TypeError, match=r"^causal must be True or False, got 1$"):
        _check_bool(1, "causal")


def _steps(total):
    for done in range(1, total + 1):
        yield done, total
    return f"{total} done"


def test_drive_polls_before_each_step_only():
    polls, seen = [], []
    result = _drive(_steps(3), 3, lambda d, t: seen.append((d, t)), lambda: polls.append(1) and False, "x")
    assert result == "3 done" and seen == [(1, 3), (2, 3), (3, 3)] and len(polls) == 3
    polls.clear()
    assert _drive(_steps(0), 0, None, lambda: polls.append(1) or True, "x") == "0 done" and polls == []


def test_drive_cancels_with_the_count_done():
    polls = []
    with pytest.raises(compute.Cancelled, match=r"^stopped after 2 of 4$"):
        _drive(_steps(4), 4, None, lambda: polls.append(1) or len(polls) > 2, "stopped after {done} of {total}")
    assert len(polls) == 3
