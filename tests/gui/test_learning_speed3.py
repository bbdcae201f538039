"""The Calibrate tab's bin count only bins again: what the reports need of each temperature is kept.

* :func:`compute._calibration.calibration_scores` then ``report_from_scores``
  is the one-call report written out (the former body of
  ``calibration_report``), bit for bit, and scikit-learn's calibration curve;
* the model keeps the scores at T = 1 and at the fitted T per run and epoch,
  and at T by hand per T: a Bins move computes none of them, a T-by-hand move
  only its own, another epoch all again; every result is the uncached one;
* the Distil tab asks for new students at once after a rest, but a drag's
  moves stop the students of the setting before and ask once the sliders
  rest (again=True: a setting stopped before is trained again): the students
  that arrive are those of the setting shown, trained here bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import compute
from compute import _calibration as cal
from gui.model.base import drain
from gui.model.learning import LearningModel, results
from gui.views.learning import view as view_module
from tests.gui.test_learning_model import same_calibration

WAIT_MS = 60_000


def written_out_report(logits: np.ndarray, labels: np.ndarray, temperature: float, n_bins: int):
    """The report as one function of plain NumPy and compute.log_softmax (the former calibration_report)."""
    z = np.asarray(logits, dtype=np.float64)
    t = np.asarray(labels).astype(np.intp)
    lp = compute.log_softmax(z / temperature, axis=-1)
    p = np.exp(lp)
    rows = np.arange(len(t))
    correct = p.argmax(axis=-1) == t
    c = p.max(axis=-1)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.searchsorted(edges[1:-1], c, side="left")
    counts = np.bincount(which, minlength=n_bins)
    sums = np.bincount(which, weights=c, minlength=n_bins)
    hits = np.bincount(which, weights=correct.astype(np.float64), minlength=n_bins)
    with np.errstate(all="ignore"):
        conf = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        acc = np.where(counts > 0, hits / np.maximum(counts, 1), np.nan)
    r = p.copy()
    r[rows, t] -= 1.0
    return counts, conf, acc, float(-lp[rows, t].mean()), float((r * r).sum(axis=-1).mean()), float(correct.mean())


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(2, 6)), elements=st.floats(-20, 20)),
       st.data(), st.floats(0.05, 20.0), st.integers(1, 30))
def test_scores_then_bins_is_the_report_written_out(z, data, temperature, n_bins):
    labels = np.array(data.draw(st.lists(st.integers(0, z.shape[1] - 1), min_size=len(z), max_size=len(z))))
    scores = cal.calibration_scores(z, labels, temperature)
    for report in (cal.report_from_scores(scores, n_bins), compute.calibration_report(z, labels, temperature, n_bins)):
        counts, conf, acc, nll, brier, accuracy = written_out_report(z, labels, temperature, n_bins)
        np.testing.assert_array_equal(report.bins.counts, counts)
        np.testing.assert_array_equal(report.bins.confidence, conf)
        np.testing.assert_array_equal(report.bins.accuracy, acc)
        assert (report.nll, report.brier, report.accuracy, report.temperature) == (nll, brier, accuracy, temperature)


def test_one_set_of_scores_binned_several_ways_is_scikit_learns_curve_each_time():
    calibration = pytest.importorskip("sklearn.calibration")
    rng = np.random.default_rng(4)
    z, labels = rng.normal(size=(300, 5)) * 3, rng.integers(0, 5, 300)
    scores = cal.calibration_scores(z, labels, 1.7)
    p = compute.softmax(z / 1.7, axis=1)
    correct = (p.argmax(axis=1) == labels).astype(int)
    for n_bins in (3, 10, 30):
        report = cal.report_from_scores(scores, n_bins)
        accuracy, confidence = calibration.calibration_curve(correct, p.max(axis=1), n_bins=n_bins)
        full = report.bins.counts > 0
        np.testing.assert_allclose(report.bins.accuracy[full], accuracy, rtol=1e-12)
        np.testing.assert_allclose(report.bins.confidence[full], confidence, rtol=1e-12)


def short_model(**params) -> LearningModel:
    m = LearningModel()
    for name, value in {"epochs": 4, "hidden": 16, **params}.items():
        m.set_param(name, value)
    return m


def test_a_bins_move_bins_the_kept_scores_and_a_t_move_scores_only_its_t(monkeypatch):
    m = short_model()
    run = m.training_run()
    made = []
    real = cal.calibration_scores

    def counting(z, labels, temperature=1.0):
        made.append(float(temperature))
        return real(z, labels, temperature)

    monkeypatch.setattr(results, "calibration_scores", counting)
    import gui.model.learning.model as model_module

    monkeypatch.setattr(model_module, "calibration_scores", counting)

    def fresh(epoch=None):
        e = m.epoch if epoch is None else epoch
        return results.calibration_result(run, e, m.digits(), m.split(), m.calibration_t, m.bins,
                                          results.calibration_fit(run, e, m.digits(), m.split()))

    first = m.calibration(run)
    fitted = first.fitted_t
    assert sorted(made) == sorted([1.0, fitted, m.calibration_t])
    for bins in (11, 3, 30, 10):
        made.clear()
        m.set_param("bins", bins)
        got = m.calibration(run)
        assert made == []  # no temperature scored again (fresh() below scores them anew)
        assert len(got.manual.bins.counts) == len(got.before.bins.counts) == bins
        same_calibration(got, fresh())
    made.clear()
    m.set_param("calibration_t", 2.5)
    got = m.calibration(run)
    assert made == [2.5]
    same_calibration(got, fresh())
    made.clear()
    m.set_param("epoch", 2)  # other weights: other logits, every temperature again
    got = m.calibration(run)
    assert sorted(made) == sorted([1.0, got.fitted_t, 2.5])
    same_calibration(got, fresh(2))
    assert not np.array_equal(got.before.bins.confidence, first.before.bins.confidence, equal_nan=True)


@pytest.fixture
def short_students(monkeypatch):
    """Students of 6 epochs, not 60 (the config travels to the child with the inputs)."""
    from dataclasses import replace

    monkeypatch.setattr(results, "STUDENT", replace(results.STUDENT, epochs=6))


def test_a_drag_asks_for_the_students_of_the_setting_it_rests_on(qtbot, make_view, lab, monkeypatch,
                                                                  short_students):
    m = lab.models["learning"]
    for name, value in {"epochs": 4, "hidden": 16, "student_examples": 30}.items():
        m.set_param(name, value)
    monkeypatch.setattr(view_module, "STUDENTS_REST_MS", 60_000)  # every move below is within the rest
    view = make_view("learning")
    view.select_tab("distil")
    qtbot.waitUntil(lambda: m.trained, timeout=WAIT_MS)
    asked = []
    real = view.students_job.request
    monkeypatch.setattr(view.students_job, "request", lambda key, inputs, **kw: asked.append((key, kw)) or real(
        key, inputs, **kw))
    qtbot.waitUntil(lambda: not view.redraw_pending)
    run = m.training_run()
    view._students_asked = -float("inf")  # a rest before the drag
    m.set_param("distil_t", 3.0)
    qtbot.waitUntil(lambda: len(asked) == 1, timeout=WAIT_MS)  # after a rest: at once
    first = m.students_key(run)
    assert [key for key, _ in asked] == [first]
    for t in (5.0, 7.0, 6.0):  # a drag
        m.set_param("distil_t", t)
        qtbot.waitUntil(lambda: not view.redraw_pending)
    qtbot.waitUntil(lambda: view._students_timer.isActive())
    assert [key for key, _ in asked] == [first]  # none asked for during the drag
    assert not view.students_job.busy  # and the first stopped (unless it had finished)
    view._students_timer.setInterval(1)
    view._students_timer.start()  # the sliders rest
    qtbot.waitUntil(lambda: m.students_for(run) is not None, timeout=WAIT_MS)
    last = m.students_key(run)
    assert [key for key, _ in asked] == [first, last] and last != first
    # asked with again=True: a setting stopped during an earlier drag and come back to is trained again
    assert asked[-1][1].get("again") is True
    here = drain(results.train_students(*m.students_inputs(run)))
    got = m.students_for(run)
    assert got.temperature == 6.0
    for a, b in ((got.hard, here.hard), (got.soft, here.soft)):
        np.testing.assert_array_equal(a.history["val_accuracy"], b.history["val_accuracy"])
    qtbot.waitUntil(lambda: view.distil.students.data(1)[0].size > 0, timeout=WAIT_MS)
    np.testing.assert_array_equal(view.distil.students.data(1)[1], here.soft.history["val_accuracy"])
    # one more move after a rest goes at once again, for its own setting
    view._students_asked = -float("inf")
    m.set_param("distil_t", 9.0)
    qtbot.waitUntil(lambda: len(asked) == 3, timeout=WAIT_MS)
    assert asked[-1][0] == m.students_key(run) not in (first, last)
    qtbot.waitUntil(lambda: m.students_for(run) is not None, timeout=WAIT_MS)
    assert m.students_for(run).temperature == 9.0
