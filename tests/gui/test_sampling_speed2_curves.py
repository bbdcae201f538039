"""The curves job a block of temperatures at a time: the same curves, bit for bit, as one sampling_curves call."""

from __future__ import annotations

import numpy as np
import pytest

import compute
from gui.model.sampling import CURVE_T, curve_job, curve_steps


def run(gen):
    fractions = []
    while True:
        try:
            fractions.append(next(gen))
        except StopIteration as stop:
            return stop.value, fractions


def row(kind, v, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "zipf":
        return compute.zipf_logits(v, seed=seed)
    z = rng.normal(0.0, 4.0, v)
    if kind == "minus_inf":
        z[rng.random(v) < 0.3] = -np.inf
    elif kind == "plus_inf":
        z[rng.integers(v)] = np.inf
    elif kind == "ties":
        z = np.round(z)
    return z


@pytest.mark.parametrize("kind, v", [("zipf", 10), ("zipf", 20_000), ("zipf", 34_381), ("zipf", 91_464),
                                     ("minus_inf", 50_000), ("minus_inf", 120_000), ("plus_inf", 40_000), ("ties", 70_000),
                                     ("zipf", 200_000)])
def test_blocks_give_one_calls_curves_bit_for_bit(kind, v):
    z = row(kind, v)
    got, fractions = run(curve_steps(z))
    want = curve_job(z)
    assert set(got) == set(want)
    for key in want:
        assert got[key].dtype == want[key].dtype and got[key].shape == (CURVE_T.size,)
        np.testing.assert_array_equal(got[key].view(np.uint8), want[key].view(np.uint8))
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    finite = v if kind == "plus_inf" else np.count_nonzero(np.isfinite(z))
    assert len(fractions) == -(-CURVE_T.size // max(1, (1 << 21) // finite))  # several steps for a long row


def test_a_long_row_is_worked_through_in_several_steps_that_can_be_stopped():
    gen = curve_steps(compute.zipf_logits(150_000, seed=1))
    first = next(gen)
    assert 0 < first < 1
    gen.close()  # what the job does when a new vocabulary supersedes this one (at a yield)
