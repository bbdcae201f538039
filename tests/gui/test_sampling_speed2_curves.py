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


# -- the view: a V drag asks for the curves once V rests ------------------------------------------------

def test_a_vocabulary_drag_asks_for_curves_once_v_rests_and_they_are_computes_own(qtbot, make_view, lab):
    from gui.model.sampling import CURVES_IN_JOB_V

    m = lab.models["sampling"]
    c = CURVES_IN_JOB_V
    m.vocab = c
    view = make_view("sampling")
    view.flush()
    job = view.curves_job
    asked = []
    request = job.request
    job.request = lambda key, inputs, **kw: asked.append(key) or request(key, inputs, **kw)
    view._curves_timer.setInterval(400)  # CURVES_REST_MS, longer: three redraws of a loaded machine fit in it
    qtbot.wait(450)  # a rest after the first redraws (which asked for the first vocabulary's curves)
    for v in (c + 100, c + 200, c + 300):  # a drag: three new vocabularies in a row (the first after a rest)
        m.vocab = v
        view._redraw()
    # the first (after a rest) was asked for at once, the next ones not; its job was stopped
    assert asked == [(("zipf", c + 100, m.seed),)]
    assert not job.busy and view._curves_timer.isActive()
    assert m.cached_curves(view.scores) is None
    qtbot.wait(100)
    view._redraw()  # another redraw of the same vocabulary (another slider) does not put the wait off again
    assert view._curves_timer.remainingTime() < 380
    qtbot.waitUntil(lambda: m.cached_curves(view.scores) is not None, timeout=20000)
    assert asked[1:] == [m.curves_inputs(view.scores)[0]]  # once V rested: the last vocabulary only
    want = compute.sampling_curves(m.vocabulary(view.scores).logits, CURVE_T)
    for key in want:
        np.testing.assert_array_equal(m.cached_curves(view.scores)[key], want[key])
    qtbot.waitUntil(lambda: np.array_equal(np.asarray(view.curves.curve.yData, dtype=float),
                                           want[m.t_curve]), timeout=5000)
