"""The Learning view's shortcuts give what a fresh computation gives, and a changed input is not served stale.

* the Distil tab's students train in their own child process (the same function, bit for bit);
* the digits' inputs are divided by 16 once;
* the Contrast tab keeps the batch's similarities and τ curves while only τ moves;
* the Calibrate tab's bin counts lay their labels out once per redraw (as the calls one by one do).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import compute
from gui.model.base import drain
from gui.model.learning import LearningModel, results, worker
from gui.model.learning import data as dataset
from gui.model.learning.model import students_job

WAIT_MS = 60_000


@pytest.fixture(autouse=True)
def short_students(monkeypatch):
    """Students of 6 epochs, not 60 (the config travels to the child with the inputs)."""
    from dataclasses import replace

    monkeypatch.setattr(results, "STUDENT", replace(results.STUDENT, epochs=6))


def short_model(**params) -> LearningModel:
    m = LearningModel()
    for name, value in {"epochs": 4, "hidden": 16, **params}.items():
        m.set_param(name, value)
    return m


def _same_run(a: compute.TrainRun, b: compute.TrainRun) -> None:
    assert a.config == b.config
    for name in compute.TRAIN_HISTORY:
        np.testing.assert_array_equal(a.history[name], b.history[name], err_msg=name)
    for pa, pb in zip(a.params, b.params, strict=True):
        assert pa.keys() == pb.keys()
        for k in pa:
            np.testing.assert_array_equal(pa[k], pb[k])
    np.testing.assert_array_equal(a.class_weights, b.class_weights)


def _same_students(a: results.Students, b: results.Students) -> None:
    assert (a.temperature, a.alpha) == (b.temperature, b.alpha)
    np.testing.assert_array_equal(a.examples, b.examples)
    _same_run(a.hard, b.hard)
    _same_run(a.soft, b.soft)
    for ra, rb in ((a.hard_test, b.hard_test), (a.soft_test, b.soft_test)):
        assert (ra.nll, ra.ece, ra.accuracy, ra.brier) == (rb.nll, rb.ece, rb.accuracy, rb.brier)
        np.testing.assert_array_equal(ra.bins.counts, rb.bins.counts)


# -- the students' child process -------------------------------------------------------------------
def test_the_students_job_trains_in_its_own_child_the_students_trained_here():
    m = short_model(student_examples=30, distil_t=3.0, distil_alpha=0.6)
    run = m.training_run()
    inputs = m.students_inputs(run)
    d, s = m.digits(), m.split()
    # the teacher's logits passed in are the Distil tab's (cached) logits of the students' digits, and the
    # students trained on them are the students trained on logits computed afresh
    np.testing.assert_array_equal(inputs[-1], compute.classifier_logits(run.at(m.epoch), d.x[s.train[:30]]))
    assert inputs[-1] is m._distil_logits(run)[1][1]
    here = drain(results.train_students(*inputs))
    _same_students(here, drain(results.train_students(*inputs[:-1])))
    there = drain(students_job(inputs))
    child = worker.STUDENTS_WORKER._process
    assert child is not None and child.is_alive()  # not the fallback
    assert worker.WORKER._process is None or worker.WORKER._process.pid != child.pid
    if hasattr(os, "getpriority"):  # it yields the cores to the window
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == min(mine + worker.STUDENTS_NICE, 19)
    _same_students(there, here)
    # the soft student did learn from the teacher's soft targets: its first loss is the distillation loss
    teacher = compute.classifier_logits(run.at(m.epoch), d.x[here.examples])
    student = compute.classifier_logits(there.soft.params[0], d.x[here.examples])
    loss, _ = compute.distillation_loss(student, teacher, d.labels[here.examples], 3.0, 0.6)
    assert there.soft.history["train_loss"][0] == pytest.approx(float(loss.mean()), rel=1e-12)
    assert not np.array_equal(there.soft.history["train_loss"], there.hard.history["train_loss"])


def test_a_students_job_closed_early_leaves_their_child_ready_for_the_next():
    m = short_model(student_examples=40)
    run = m.training_run()
    steps = students_job(m.students_inputs(run))
    fractions = [next(steps), next(steps)]
    assert 0 < fractions[0] < fractions[1] < 0.5  # the hard student, epoch by epoch
    steps.close()  # a new T was asked for: the child stops after its epoch
    m.set_param("distil_t", 6.0)
    there = drain(students_job(m.students_inputs(run)))
    assert worker.STUDENTS_WORKER._process is not None
    _same_students(there, drain(results.train_students(*m.students_inputs(run))))
    assert there.temperature == 6.0


def test_a_distillation_run_in_the_child_is_the_run_here():
    m = short_model()
    run = m.training_run()
    d, s = m.digits(), m.split()
    rows = s.train[:25]
    config = compute.TrainConfig(model="linear", epochs=3, learning_rate=0.5, batch_size=8, temperature=2.0,
                                 alpha=0.5, seed=4)
    teacher = compute.classifier_logits(run.at(m.epoch), d.x[rows])
    inputs = (config, d.x[rows], d.labels[rows], d.x[s.val], d.labels[s.val], 10, teacher)
    there = drain(worker.student_steps(inputs))
    here = compute.train_classifier(config, d.x[rows], d.labels[rows], d.x[s.val], d.labels[s.val],
                                    teacher=teacher, n_classes=10)
    _same_run(there, here)
    _same_run(drain(worker.local_steps(inputs)), here)
    plain = drain(worker.local_steps(inputs[:6]))  # without the teacher: plain cross-entropy
    assert not np.array_equal(plain.history["train_loss"], here.history["train_loss"])


# -- the digits ------------------------------------------------------------------------------------
def test_the_inputs_are_the_pixels_over_16_computed_once_and_read_only():
    d = dataset.load_digits()
    assert d.x is d.x
    np.testing.assert_array_equal(d.x, np.asarray(d.images, dtype=float).reshape(len(d), 64) / 16.0)
    with pytest.raises(ValueError):
        d.x[0, 0] = 1.0


# -- the Contrast tab ------------------------------------------------------------------------------
def _same_contrast(a: results.ContrastResult, b: results.ContrastResult) -> None:
    assert a.tau == b.tau and a.info.loss == b.info.loss
    for name in ("indices", "similarity", "taus", "losses", "positive"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.info.row_probabilities, b.info.row_probabilities)
    np.testing.assert_array_equal(a.info.grad, b.info.grad)


@pytest.mark.parametrize("embedding", ["model", "pixels"])
def test_a_tau_move_reuses_the_batch_and_gives_a_fresh_result(monkeypatch, embedding):
    m = short_model(embedding=embedding, contrast_batch=8)
    run = m.training_run()
    fresh_pairs = results.contrast_pairs
    made = []
    monkeypatch.setattr(results, "contrast_pairs", lambda *args: made.append(args[3:]) or fresh_pairs(*args))

    def fresh() -> results.ContrastResult:  # the whole computation, with nothing passed in (and not counted)
        params = run.at(m.epoch) if m.embedding == "model" else None
        with monkeypatch.context() as plain:
            plain.setattr(results, "contrast_pairs", fresh_pairs)
            return results.contrast_result(params, m.digits(), m.split(), m.contrast_batch, m.contrast_noise,
                                           m.contrast_tau, m.seed)

    for tau in (0.07, 0.2, 0.03, 0.9):
        m.set_param("contrast_tau", tau)
        got = m.contrast(run)
        assert got.tau == tau
        _same_contrast(got, fresh())
    assert len(made) == 1  # one batch for the four τ
    made.clear()
    for name, value in (("contrast_noise", 0.5), ("contrast_batch", 12), ("seed", 3)):
        m.set_param(name, value)
        got = m.contrast(run if name != "seed" else m.training_run())
        assert len(made) == 1, name  # a changed input makes a new batch
        made.clear()
        _same_contrast(got, fresh() if name != "seed" else got)
    assert len(m.contrast(m.training_run()).indices) == 12


def test_a_new_epoch_gives_the_model_embedding_a_new_batch():
    m = short_model(contrast_batch=6)
    run = m.training_run()
    m.set_param("epoch", 1)
    early = m.contrast(run)
    m.set_param("epoch", 4)
    late = m.contrast(run)
    assert not np.array_equal(early.similarity, late.similarity)
    _same_contrast(late, results.contrast_result(run.at(4), m.digits(), m.split(), 6, m.contrast_noise,
                                                 m.contrast_tau, m.seed))
    m.set_param("embedding", "pixels")  # the pixels do not depend on the epoch
    pixels = m.contrast(run)
    m.set_param("epoch", 1)
    assert m.contrast(run) is pixels


# -- the Distil tab --------------------------------------------------------------------------------
def test_a_distillation_t_move_reuses_what_t_1_shows_and_gives_a_fresh_result(monkeypatch):
    m = short_model(student_examples=30)
    run = m.training_run()
    fresh_at_one = results.distil_at_one
    made = []
    monkeypatch.setattr(results, "distil_at_one", lambda logits: made.append(1) or fresh_at_one(logits))

    def fresh() -> results.DistilResult:  # nothing passed in (and not counted)
        with monkeypatch.context() as plain:
            plain.setattr(results, "distil_at_one", fresh_at_one)
            return results.distil_result(run.at(m.epoch), m.digits(), m.split(), m.student_examples,
                                         m.distil_t, m.example)

    def same(a: results.DistilResult, b: results.DistilResult) -> None:
        for name in ("soft_1", "soft_t", "seed_1", "seed_t"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert (a.temperature, a.example, a.label, a.dark_1, a.dark_t) == (
            b.temperature, b.example, b.label, b.dark_1, b.dark_t)

    for t in (2.0, 9.0, 1.0, 15.0):
        m.set_param("distil_t", t)
        same(m.distil(run), fresh())
    assert len(made) == 1
    one = m.distil(run)
    for name, value in (("example", 7), ("student_examples", 50), ("epoch", 2)):
        m.set_param(name, value)
        got = m.distil(run)
        same(got, fresh())
        assert len(made) == 2, name  # a new digit, new students' digits or new weights: T = 1 again
        made.clear()
        made.append(1)
    assert not np.array_equal(got.soft_1, one.soft_1) and got.dark_1 != one.dark_1
    d = m.digits()
    z = compute.classifier_logits(run.at(2), d.x[got.example:got.example + 1])[0]
    np.testing.assert_allclose(got.soft_1, np.exp(z - z.max()) / np.exp(z - z.max()).sum(), rtol=1e-12)


# -- the view --------------------------------------------------------------------------------------
def test_the_bin_counts_drawn_at_once_are_the_counts_drawn_call_by_call(qtbot, make_view, lab):
    from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

    from gui.views.learning.plots import BinCounts
    from gui.widgets.bar_chart import BarChart

    m = lab.models["learning"]
    for name, value in {"epochs": 4, "hidden": 16, "student_examples": 20}.items():
        m.set_param(name, value)
    m.training_run()  # here, so that the view starts no training child
    view = make_view("learning")
    view.select_tab("calibrate")
    chart = view.calibrate.counts
    qtbot.waitUntil(lambda: chart.heights[0].size == m.bins and not view.redraw_pending, timeout=WAIT_MS)
    reference = BinCounts()
    holder = QWidget()  # a closed pyqtgraph plot drops its PlotItem: the holder is what gets closed
    qtbot.addWidget(holder)
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(reference)
    holder.resize(chart.size())
    holder.show()
    qtbot.waitExposed(holder)
    for plot in (chart, reference):  # an axis widens for long tick labels and never narrows: the same width
        plot.getPlotItem().getAxis("left").setWidth(48)
    for bins in (17, 4, 30, 10):  # (10 first is no change: the default)
        before = view.redraw_count
        m.set_param("bins", bins)  # the view redraws its tab on screen (the throttle's leading edge or later)
        qtbot.waitUntil(lambda n=before: view.redraw_count > n and not view.redraw_pending, timeout=WAIT_MS)
        QApplication.processEvents()
        c = m.calibration(m.training_run())
        counts = [rep.bins.counts.astype(float) for rep in (c.before, c.after, c.manual)]
        assert len(chart.heights[0]) == bins
        for drawn, expected in zip(chart.heights, counts):
            np.testing.assert_array_equal(drawn, expected)
        edges = c.before.bins.edges
        labels = [f"{edges[i]:.2g}–{edges[i + 1]:.2g}" for i in range(bins)]
        holder.resize(chart.size())  # the view's grid may have resized the chart (new tick labels)
        QApplication.processEvents()
        BarChart.set_data(reference, labels, counts)  # one call after the other, each laying out
        BarChart.set_y_range(reference, 0.0, max(float(max(x.max() for x in counts)), 1.0) * 1.15)
        QApplication.processEvents()
        assert reference.size() == chart.size()
        assert chart.getPlotItem().viewRange() == reference.getPlotItem().viewRange()
        assert chart.value_texts(visible_only=True) == reference.value_texts(visible_only=True)
        assert chart.value_texts() == reference.value_texts()


def test_the_students_arrive_from_their_child_and_are_drawn(qtbot, make_view, lab):
    m = lab.models["learning"]
    for name, value in {"epochs": 4, "hidden": 16, "student_examples": 30}.items():
        m.set_param(name, value)
    view = make_view("learning")
    view.select_tab("distil")
    qtbot.waitUntil(lambda: m.trained, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: m.students_for(m.training_run()) is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: view.distil.students.data(1)[0].size > 0, timeout=WAIT_MS)
    run = m.training_run()
    here = drain(results.train_students(*m.students_inputs(run)))
    _same_students(m.students_for(run), here)
    np.testing.assert_array_equal(view.distil.students.data(1)[1], here.soft.history["val_accuracy"])
    np.testing.assert_array_equal(view.distil.students.data(0)[1], here.hard.history["val_accuracy"])
    text = view.readouts["learning.readout.student_accuracy"].text()
    assert f"{100 * here.soft_test.accuracy:.1f}" in text and f"{100 * here.hard_test.accuracy:.1f}" in text
