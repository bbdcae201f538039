"""The Learning view: training in the background with live curves, the tabs drawing the model's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QTimer

import compute
from gui.model.learning import TAB_PARAMS
from gui.model.learning import data as dataset

WAIT_MS = 60_000


def set_params(model, **params):
    for name, value in params.items():
        model.set_param(name, value)


def test_training_runs_in_the_background_and_the_curves_grow_while_it_runs(qtbot, lab):
    from gui import registry

    m = lab.models["learning"]
    set_params(m, epochs=40, hidden=32)
    drawn_partial: list[int] = []
    ticks = [0]
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    view = registry.get("learning").widget_class()(lab.scores, m)
    qtbot.addWidget(view)
    original = view.train.show_result

    def spy(run, epoch, epochs):
        if run is not None and not run.finished:
            drawn_partial.append(run.epochs_done)
        original(run, epoch, epochs)

    view.train.show_result = spy
    view.resize(1280, 800)
    view.show()
    qtbot.waitUntil(lambda: m.trained, timeout=WAIT_MS)
    timer.stop()
    view.flush()
    # partial runs were drawn before the end, in order, and the window's event loop kept running
    assert drawn_partial and drawn_partial == sorted(drawn_partial) and max(drawn_partial) < 40
    assert ticks[0] >= 1  # the timer on the GUI thread fired while the child trained
    run = m.training_run()
    x, y = view.train.loss.data(0)
    np.testing.assert_array_equal(x, np.arange(41.0))
    np.testing.assert_allclose(10.0 ** y, run.history["train_loss"], rtol=1e-12)  # a log axis
    _, grad = view.train.grad.data(1)
    np.testing.assert_allclose(10.0 ** grad, run.history["grad_true_mse"], rtol=1e-12)  # a log axis
    assert "training" in view.readouts["learning.readout.train_loss"].text()
    assert view.progress.value() == 1000


def test_a_new_setting_while_training_restarts_the_run_with_it(qtbot, make_view, lab):
    m = lab.models["learning"]
    set_params(m, epochs=30, hidden=16)
    view = make_view("learning")
    qtbot.waitUntil(lambda: m.current_run() is not None, timeout=WAIT_MS)
    m.set_param("learning_rate", 0.2)
    view.flush()
    assert m.trained and m.training_run().config.learning_rate == 0.2
    np.testing.assert_allclose(10.0 ** view.train.loss.data(0)[1], m.training_run().history["train_loss"],
                               rtol=1e-12)


def test_every_tab_draws_the_models_results_at_the_epoch_shown(qtbot, make_view, lab):
    m = lab.models["learning"]
    set_params(m, epochs=8, hidden=16, student_examples=40)
    view = make_view("learning")
    assert view.tab_names() == tuple(TAB_PARAMS)
    view.transport.go_to(5)
    assert m.epoch == 5
    view.flush()
    run = m.training_run()
    assert view.train.loss.now_line.value() == 5

    view.select_tab("calibrate")
    view.flush()
    assert set(view.plots()) == {"reliability", "bin_counts", "ece_curve", "nll_curve"}
    assert view.groups["calibrate"].isVisible() and not view.groups["train"].isVisible()
    c = m.calibration(run)
    d, s = m.digits(), m.split()
    z_val = compute.classifier_logits(run.params[5], d.x[s.val])
    assert c.fitted_t == pytest.approx(compute.fit_temperature(z_val, d.labels[s.val]), rel=1e-12)
    heights = np.asarray(view.calibrate.reliability.bars.opts["height"])
    np.testing.assert_array_equal(heights, np.nan_to_num(c.manual.bins.accuracy))
    np.testing.assert_array_equal(view.calibrate.ece.data(0)[1], c.ece)
    assert float(view.readouts["learning.readout.fitted_t"].text()) == pytest.approx(c.fitted_t, abs=5e-4)
    m.set_param("calibration_t", 2.0)
    view.flush()
    assert view.calibrate.ece.now_line.value() == pytest.approx(np.log10(2.0))

    view.select_tab("distil")
    view.flush()
    st = m.students(run)
    np.testing.assert_array_equal(view.distil.students.data(1)[1], st.soft.history["val_accuracy"])
    np.testing.assert_allclose(view.distil.seed.heights[1], compute.soft_targets(
        probabilities=[0.95, 0.04, 0.01], temperature=m.distil_t))
    assert "distilled" in view.readouts["learning.readout.student_accuracy"].text()

    view.select_tab("contrast")
    view.flush()
    k = m.contrast(run)
    np.testing.assert_array_equal(view.contrast.matrix.matrix, k.info.row_probabilities)
    assert view.contrast.loss.now_line.value() == pytest.approx(np.log10(m.contrast_tau))

    view.select_tab("digits")
    view.flush()
    g = m.digit_predictions(run)
    assert g.epoch == 5 and len(view.digits.texts()) == len(g.indices) == 12
    first = view.digits.texts()[0]
    assert first.startswith(str(g.labels[0]))


def test_without_the_digits_the_view_says_why_and_keeps_working(qtbot, make_view, lab, monkeypatch):
    def missing():
        raise dataset.DataMissing("The Learning view needs scikit-learn's bundled digits: pip install scikit-learn")

    monkeypatch.setattr(dataset, "load_digits", missing)
    m = lab.models["learning"]
    m._runs.clear()
    view = make_view("learning")
    messages = []
    view.status.connect(messages.append)
    m.set_param("epochs", 3)
    qtbot.waitUntil(lambda: bool(messages), timeout=5000)
    assert "scikit-learn" in messages[-1]
    assert m.current_run() is None
