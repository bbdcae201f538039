"""The Learning view's model (no Qt): the digits, the split, the run, and what each tab computes.

References are independent: scikit-learn's own loader and calibration curve,
SciPy's bounded scalar search on a NLL written with scipy.special, plain
NumPy for the cosine similarities, the weights' own logits for accuracies.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax as sp_log_softmax

import compute
from gui.model.learning import LearningModel, results
from gui.model.learning import data as dataset
from tests.conftest import run_main

#: A short run: the tests that need no particular outcome train only this long.
SHORT = {"epochs": 6, "hidden": 16}


def short_model(**params) -> LearningModel:
    m = LearningModel()
    for name, value in {**SHORT, **params}.items():
        m.set_param(name, value)
    return m


@pytest.fixture(scope="module")
def default_run():
    m = LearningModel()
    return m, m.training_run()


def test_the_bundled_digits_are_scikit_learns():
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    x, y = sklearn_datasets.load_digits(return_X_y=True)
    d = dataset.load_digits()
    np.testing.assert_array_equal(d.images.reshape(len(y), -1), x)
    np.testing.assert_array_equal(d.labels, y)
    assert d.images.shape == (1797, 8, 8) and d.x.max() == 1.0 and d.x.min() == 0.0


def test_without_the_bundled_file_the_loader_asks_scikit_learn(monkeypatch):
    dataset.load_digits.cache_clear()
    monkeypatch.setattr(dataset, "_bundled_file", lambda: None)
    try:
        d = dataset.load_digits()
        assert len(d) == 1797
    finally:
        dataset.load_digits.cache_clear()


@pytest.mark.parametrize("seed", [0, 7])
def test_the_split_is_a_seeded_partition_60_20_20(seed):
    s = dataset.split(seed)
    parts = [s.train, s.val, s.test]
    assert [len(p) for p in parts] == [1078, 359, 360]
    everything = np.concatenate(parts)
    assert sorted(everything.tolist()) == list(range(1797))
    again = dataset.split(seed)
    assert all(np.array_equal(a, b) for a, b in zip(parts, [again.train, again.val, again.test]))
    other = dataset.split(seed + 1)
    assert not np.array_equal(s.test, other.test)


def test_training_is_reproducible_bit_for_bit_and_the_seed_matters():
    a, b = short_model().training_run(), short_model().training_run()
    for name in compute.TRAIN_HISTORY:
        assert np.array_equal(a.history[name], b.history[name]), name
    for name in a.params[-1]:
        assert np.array_equal(a.params[-1][name], b.params[-1][name])
    c = short_model(seed=3).training_run()
    assert not np.array_equal(a.history["train_loss"], c.history["train_loss"])


def test_the_default_run_is_fitted_as_scipy_fits_it_and_scaling_lowers_the_test_nll(default_run):
    m, run = default_run
    assert run.finished and run.epochs_done == m.epochs
    d, s = m.digits(), m.split()
    params = run.at(m.epochs)
    z_val = compute.classifier_logits(params, d.x[s.val])
    y_val = d.labels[s.val]

    def nll(t):
        return -sp_log_softmax(z_val / t, axis=1)[np.arange(len(y_val)), y_val].mean()

    reference = minimize_scalar(nll, bounds=results.T_FIT, method="bounded", options={"xatol": 1e-9}).x
    c = m.calibration(run)
    assert c.fitted_t == pytest.approx(reference, rel=1e-5)
    assert c.after.nll < c.before.nll  # temperature scaling helps on the test split
    assert c.after.accuracy == c.before.accuracy  # and changes no prediction
    z_test = compute.classifier_logits(params, d.x[s.test])
    y_test = d.labels[s.test]
    expected = -sp_log_softmax(z_test / c.fitted_t, axis=1)[np.arange(len(y_test)), y_test].mean()
    assert c.after.nll == pytest.approx(expected, rel=1e-12)


def test_the_reliability_bins_are_scikit_learns_calibration_curve(default_run):
    calibration = pytest.importorskip("sklearn.calibration")
    m, run = default_run
    c = m.calibration(run)
    d, s = m.digits(), m.split()
    p = compute.softmax(compute.classifier_logits(run.at(m.epochs), d.x[s.test]) / c.manual_t, axis=1)
    correct = (p.argmax(axis=1) == d.labels[s.test]).astype(int)
    accuracy, confidence = calibration.calibration_curve(correct, p.max(axis=1), n_bins=m.bins)
    full = c.manual.bins.counts > 0
    np.testing.assert_allclose(c.manual.bins.accuracy[full], accuracy, rtol=1e-12)
    np.testing.assert_allclose(c.manual.bins.confidence[full], confidence, rtol=1e-12)


def same_calibration(a: results.CalibrationResult, b: results.CalibrationResult) -> None:
    assert (a.epoch, a.fitted_t, a.manual_t) == (b.epoch, b.fitted_t, b.manual_t)
    for name in ("temperatures", "ece", "nll", "val_nll"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for name in ("before", "after", "manual"):
        ra, rb = getattr(a, name), getattr(b, name)
        assert (ra.temperature, ra.nll, ra.brier, ra.accuracy) == (rb.temperature, rb.nll, rb.brier, rb.accuracy)
        for field in ("edges", "counts", "confidence", "accuracy"):
            np.testing.assert_array_equal(getattr(ra.bins, field), getattr(rb.bins, field))


def test_the_calibrate_knobs_reuse_the_fit_and_give_what_a_fresh_computation_gives(monkeypatch):
    """T by hand and the bin count recompute only what they change (the fit and the T sweep's
    confidences are cached per run and epoch); every result equals the uncached one, bit for bit."""
    m = short_model()
    run = m.training_run()
    fresh_fit = results.calibration_fit
    fits = []
    monkeypatch.setattr(results, "calibration_fit", lambda *args: fits.append(args[1]) or fresh_fit(*args))
    for t, bins in [(1.0, 10), (2.5, 10), (0.5, 7), (0.5, 15), (3.0, 15)]:
        m.set_param("calibration_t", t)
        m.set_param("bins", bins)
        got = m.calibration(run)
        same_calibration(got, results.calibration_result(run, m.epoch, m.digits(), m.split(), t, bins,
                                                         fresh_fit(run, m.epoch, m.digits(), m.split())))
        assert got.manual_t == t and len(got.manual.bins.counts) == bins
    first = m.epoch
    assert fits == [first]  # fitted once for all five settings
    m.set_param("epoch", 3)  # another epoch is another fit
    same_calibration(m.calibration(run), results.calibration_result(
        run, 3, m.digits(), m.split(), m.calibration_t, m.bins, fresh_fit(run, 3, m.digits(), m.split())))
    assert fits == [first, 3]


def test_the_epoch_shown_picks_the_weights_every_tab_uses():
    m = short_model()
    run = m.training_run()
    m.set_param("epoch", 2)
    g = m.digit_predictions(run)
    d, s = m.digits(), m.split()
    p = compute.softmax(compute.classifier_logits(run.params[2], d.x[s.test]), axis=1)
    assert g.epoch == 2
    np.testing.assert_array_equal(g.all_probabilities, p)
    wrong = p.argmax(axis=1) != d.labels[s.test]
    assert g.mistakes == int(wrong.sum())
    shown_wrong = g.predicted != g.labels
    assert shown_wrong[: min(g.mistakes, len(shown_wrong))].all()  # the mistakes come first
    m.set_param("epoch", 200)  # past the end: the end
    assert m.shown_epoch == m.epochs and m.digit_predictions(run).epoch == m.epochs


def test_the_students_learn_from_the_teachers_soft_targets_at_t():
    m = short_model(student_examples=60, distil_t=3.0, distil_alpha=0.7)
    run = m.training_run()
    st = m.students(run)
    d, s = m.digits(), m.split()
    assert np.array_equal(st.examples, s.train[:60])
    teacher = compute.classifier_logits(run.at(m.epochs), d.x[st.examples])
    student = compute.classifier_logits(st.soft.params[0], d.x[st.examples])
    loss, _ = compute.distillation_loss(student, teacher, d.labels[st.examples], 3.0, 0.7)
    assert st.soft.history["train_loss"][0] == pytest.approx(loss.mean(), rel=1e-12)
    for r, report in ((st.hard, st.hard_test), (st.soft, st.soft_test)):
        z = compute.classifier_logits(r.at(r.epochs_done), d.x[s.test])
        assert report.accuracy == pytest.approx((z.argmax(axis=1) == d.labels[s.test]).mean())
    r = m.distil(run)
    z = compute.classifier_logits(run.at(m.epochs), d.x[r.example:r.example + 1])[0]
    np.testing.assert_allclose(r.soft_t, np.exp(z / 3.0) / np.exp(z / 3.0).sum(), rtol=1e-12)


def test_the_distillation_t_reuses_the_teachers_logits_and_gives_a_fresh_result(monkeypatch):
    m = short_model(student_examples=40)
    run = m.training_run()
    d, s = m.digits(), m.split()
    fresh_logits = results.distil_logits
    asked = []
    monkeypatch.setattr(results, "distil_logits", lambda *args: asked.append(args[3:]) or fresh_logits(*args))
    for t in (1.0, 2.0, 4.0, 7.5):
        m.set_param("distil_t", t)
        r = m.distil(run)
        fresh = results.distil_result(run.at(m.epoch), d, s, 40, t, m.example, fresh_logits(
            run.at(m.epoch), d, s, 40, m.example))
        for name in ("soft_1", "soft_t", "seed_1", "seed_t"):
            np.testing.assert_array_equal(getattr(r, name), getattr(fresh, name))
        assert (r.dark_1, r.dark_t, r.temperature) == (fresh.dark_1, fresh.dark_t, t)
        zs = compute.classifier_logits(run.at(m.epoch), d.x[s.train[:40]])
        lp = sp_log_softmax(zs / t, axis=1)  # entropy -sum p log p, from SciPy's log-softmax
        assert r.dark_t == pytest.approx(float((-(np.exp(lp) * lp).sum(axis=1)).mean()), rel=1e-9)
    assert asked == [(40, m.example)]  # the teacher's logits once, for every T
    m.set_param("student_examples", 20)
    m.distil(run)
    assert asked == [(40, m.example), (20, m.example)]


def test_the_articles_teacher_softened_at_t_4():
    soft = compute.soft_targets(probabilities=results.SEED_TEACHER, temperature=4.0)
    p = np.array(results.SEED_TEACHER) ** 0.25
    np.testing.assert_allclose(soft, p / p.sum(), rtol=1e-14)
    assert soft.round(3).tolist() == [0.564, 0.255, 0.181]


@pytest.mark.parametrize("embedding", ["pixels", "model"])
def test_the_contrast_batch_is_the_cosine_of_two_noisy_views(embedding):
    m = short_model(embedding=embedding, contrast_batch=8, contrast_noise=0.2, contrast_tau=0.1)
    run = m.training_run()
    k = m.contrast(run)
    d, s = m.digits(), m.split()
    rng = np.random.default_rng(m.seed)
    x = d.x[s.test[:8]]
    views = [x + 0.2 * rng.normal(size=x.shape) for _ in range(2)]
    if embedding == "model":
        views = [compute.classifier_features(run.at(m.epochs), v) for v in views]
    e1, e2 = (v / np.linalg.norm(v, axis=1, keepdims=True) for v in views)
    np.testing.assert_allclose(k.similarity, e1 @ e2.T, rtol=1e-12, atol=1e-15)
    rows = sp_log_softmax(k.similarity / 0.1, axis=1)
    cols = sp_log_softmax(k.similarity / 0.1, axis=0)
    expected = -(np.diag(rows).mean() + np.diag(cols).mean()) / 2
    assert k.info.loss == pytest.approx(expected, rel=1e-12)


def test_the_controls_that_apply_and_the_ranges_they_offer():
    m = LearningModel()
    assert m.applies("hidden") and not m.applies("focal_gamma") and not m.applies("convention")
    m.set_param("classifier", "linear")
    m.set_param("loss", "focal")
    m.set_param("label_smoothing", 0.1)
    assert not m.applies("hidden") and m.applies("focal_gamma") and m.applies("convention")
    m.set_param("epochs", 12)
    assert m.bounds("epoch") == (0, 12) and m.value_in_use("epoch") == 12
    assert m.bounds("example") == (0, 359)
    with pytest.raises(ValueError, match="learning_rate"):
        m.set_param("learning_rate", 0.0)


def test_the_headless_export_holds_the_run_and_its_calibration(tmp_path):
    from gui.export import read_npz

    result = run_main("export", "--view", "learning", "--epochs", "4", "--hidden", "16", "--seed", "2",
                      "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    data = read_npz(tmp_path / "learning.npz")
    m = short_model(epochs=4, seed=2)
    run = m.training_run()
    history = data["history"]
    assert data["history__columns"].tolist() == ["epoch", *compute.TRAIN_HISTORY]
    for i, name in enumerate(compute.TRAIN_HISTORY):
        np.testing.assert_array_equal(history[:, i + 1], run.history[name])
    np.testing.assert_array_equal(data["weights_W2"], run.at(4)["W2"])
    assert data["calibration"][1, 0] == pytest.approx(m.calibration(run).fitted_t, rel=1e-12)
    for name in ("history", "reliability", "students", "test_predictions"):
        assert (tmp_path / f"learning_{name}.csv").is_file(), name
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs and all(p.startswith("learning_") for p in pngs)
    assert sorted(tmp_path.glob("*.svg"))


# -- the child process the view trains in ------------------------------------------------------------
def _drain(steps):
    partial = []
    while True:
        try:
            partial.append(next(steps)[1].epochs_done)
        except StopIteration as stop:
            return stop.value, partial


def test_the_child_process_trains_the_same_run_bit_for_bit():
    from gui.model.learning import worker

    m = short_model(epochs=5)
    here = m.training_run()
    there, partial = _drain(worker.process_steps(m.train_inputs()))
    assert worker.FALLBACK is None
    assert partial == [1, 2, 3, 4, 5] and there.finished
    for name in compute.TRAIN_HISTORY:
        assert np.array_equal(here.history[name], there.history[name]), name
    for a, b in zip(here.params, there.params, strict=True):
        assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_run_closed_early_leaves_the_child_ready_for_the_next():
    from gui.model.learning import worker

    m = short_model(epochs=30)
    steps = worker.process_steps(m.train_inputs())
    next(steps)
    next(steps)
    steps.close()  # the job was cancelled: the child stops after its epoch
    m2 = short_model(epochs=3, seed=9)
    run, _ = _drain(worker.process_steps(m2.train_inputs()))
    assert worker.FALLBACK is None and run.epochs_done == 3
    np.testing.assert_array_equal(run.history["train_loss"], m2.training_run().history["train_loss"])


def test_a_dead_child_falls_back_to_this_process_and_says_why():
    from gui.model.learning import worker

    m = short_model(epochs=4)
    steps = worker.process_steps(m.train_inputs())
    next(steps)
    worker.WORKER._process.kill()  # the child dies in the middle of a run
    worker.WORKER._process.join(5)
    run, _ = _drain(steps)
    assert run.finished and worker.FALLBACK  # the reason is kept for the view to show
    np.testing.assert_array_equal(run.history["val_nll"], m.training_run().history["val_nll"])
    run, _ = _drain(worker.process_steps(m.train_inputs()))  # and the next run has a child again
    assert worker.FALLBACK is None


def test_a_failing_run_fails_in_the_child_as_it_would_here():
    from dataclasses import replace

    from gui.model.learning import worker

    m = short_model(epochs=2)
    config, *rest = m.train_inputs()
    bad = (replace(config, class_weights=(1.0, 2.0)), *rest)  # two weights for ten classes
    bad[0].__dict__["loss"] = "weighted"
    with pytest.raises(worker.TrainingFailed, match="weights"):
        _drain(worker.process_steps(bad))
    run, _ = _drain(worker.process_steps(m.train_inputs()))  # the child is still there
    assert run.finished and worker.FALLBACK is None
