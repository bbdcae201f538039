"""The Sampling view's temperature curves of a long vocabulary come from a background job."""

from __future__ import annotations

import numpy as np

import compute
from gui.model.sampling import CURVE_T, CURVES_IN_JOB_V


def shown_curve(view) -> np.ndarray:
    return np.asarray(view.curves.curve.yData, dtype=float)


def reference(view) -> np.ndarray:
    m = view.model
    return compute.sampling_curves(m.vocabulary(view.scores).logits, CURVE_T)[m.t_curve]


def test_a_new_long_vocabulary_gets_its_curves_from_the_job_and_they_are_computes_own(qtbot, make_view, lab):
    m = lab.models["sampling"]
    assert 60_000 >= CURVES_IN_JOB_V  # long vocabularies, whose curves take tens of milliseconds
    m.vocab = 60_000
    view = make_view("sampling")
    view.flush()
    np.testing.assert_array_equal(shown_curve(view), reference(view))
    before = shown_curve(view).copy()
    # what the first redraw of the new vocabulary left, seen as it returns (the throttle may hold it
    # back a few ms; the job's result can only be delivered by this thread's event loop, later)
    seen = []
    redraw = view.redraw

    def redraw_and_look():
        redraw()
        seen.append((view.curves_job.busy, m.cached_curves(view.scores) is None, shown_curve(view).copy()))

    view.redraw = redraw_and_look
    m.vocab = 80_000  # a new vocabulary: the redraw asks the job and does not wait
    qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    busy, uncached, curve = seen[0]
    assert busy and uncached
    np.testing.assert_array_equal(curve, before)  # the old curve until the job's lands
    qtbot.waitUntil(lambda: m.cached_curves(view.scores) is not None and not view.curves_job.busy, timeout=20000)
    qtbot.waitUntil(lambda: not np.array_equal(shown_curve(view), before), timeout=5000)
    np.testing.assert_array_equal(shown_curve(view), reference(view))


def test_a_short_vocabulary_draws_its_curves_at_once(make_view, lab):
    m = lab.models["sampling"]
    m.vocab = 3000
    view = make_view("sampling")
    view.flush()
    m.vocab = 4000
    view.schedule_redraw()  # the throttle may hold the change's redraw; this one runs or follows it
    assert not view.curves_job.busy
    view.flush()
    np.testing.assert_array_equal(shown_curve(view), reference(view))


def test_curves_of_another_vocabulary_are_refused(lab):
    m = lab.models["sampling"]
    m.vocab = 3000
    key, logits = m.curves_inputs()
    curves = compute.sampling_curves(logits, CURVE_T)
    m.vocab = 3001
    assert not m.store_curves(key, curves)
    assert m.cached_curves() is None
    m.vocab = 3000
    assert m.store_curves(key, curves)
    assert m.cached_curves() is curves
