"""Tests for compute._calibration: reliability bins, ECE/MCE, NLL, Brier score, temperature scaling.

References: scikit-learn's calibration_curve and log_loss, plain Python loops
over the bin rule, torch's cross-entropy, and SciPy's bounded scalar
minimiser for the fitted temperature.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special as sps
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from sklearn.calibration import calibration_curve
from sklearn.metrics import log_loss

from compute import (
    CalibrationReport,
    brier_score,
    calibration_report,
    expected_calibration_error,
    fit_temperature,
    max_calibration_error,
    negative_log_likelihood,
    reliability_bins,
    sweep_confidences,
    sweep_ece,
    temperature_sweep,
)


def classifier_data(seed, n=400, k=4, scale=1.0):
    """Logits and labels drawn from softmax(logits): calibrated at scale 1; scale > 1 over-confident."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    p = sps.softmax(z, axis=1)
    labels = np.array([rng.choice(k, p=row) for row in p])
    return z * scale, labels


def loop_bins(confidence, correct, n_bins):
    """Counts, mean confidence and accuracy per bin: (a, b] for every bin, the first one [0, b]."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    members = [[] for _ in range(n_bins)]
    for c, ok in zip(confidence, correct, strict=True):
        for b in range(n_bins):
            if edges[b] < c <= edges[b + 1] or (b == 0 and c == edges[0]):
                members[b].append((c, ok))
                break
    counts = [len(m) for m in members]
    conf = [math.fsum(c for c, _ in m) / len(m) if m else math.nan for m in members]
    acc = [sum(bool(ok) for _, ok in m) / len(m) if m else math.nan for m in members]
    return np.array(counts), np.array(conf), np.array(acc)


def loop_ece_mce(confidence, correct, n_bins):
    counts, conf, acc = loop_bins(confidence, correct, n_bins)
    n = len(confidence)
    gaps = [abs(a - c) for a, c, m in zip(acc, conf, counts, strict=True) if m]
    ece = math.fsum(m / n * abs(a - c) for a, c, m in zip(acc, conf, counts, strict=True) if m)
    return ece, max(gaps)


def confidences(z, labels, temperature=1.0):
    p = sps.softmax(z / temperature, axis=1)
    return p.max(axis=1), p.argmax(axis=1) == labels


def scipy_temperature(z, labels, bounds=(0.05, 20.0)):
    rows = np.arange(len(labels))

    def nll(t):
        return -sps.log_softmax(z / t, axis=1)[rows, labels].mean()

    res = minimize_scalar(nll, bounds=bounds, method="bounded", options={"xatol": 1e-10})
    return res.x, nll


# --------------------------------------------------------------------------
# reliability bins
# --------------------------------------------------------------------------
@pytest.mark.parametrize("n_bins", [1, 5, 10, 15])
def test_reliability_bins_match_sklearn_and_loop(n_bins):
    z, labels = classifier_data(n_bins, scale=2.0)
    conf, correct = confidences(z, labels)
    bins = reliability_bins(conf, correct, n_bins)
    assert bins.counts.shape == (n_bins,) and bins.n == len(conf)
    np.testing.assert_allclose(bins.edges, np.linspace(0, 1, n_bins + 1), rtol=0, atol=0)
    prob_true, prob_pred = calibration_curve(correct, conf, n_bins=n_bins, strategy="uniform")
    full = bins.counts > 0
    np.testing.assert_allclose(bins.accuracy[full], prob_true, rtol=1e-12)
    np.testing.assert_allclose(bins.confidence[full], prob_pred, rtol=1e-12)
    counts, mean_conf, acc = loop_bins(conf, correct, n_bins)
    np.testing.assert_array_equal(bins.counts, counts)
    np.testing.assert_allclose(bins.confidence, mean_conf, rtol=1e-12)  # NaN where empty, both
    np.testing.assert_allclose(bins.accuracy, acc, rtol=1e-12)
    assert np.all(np.isnan(bins.gaps[~full]))


def test_reliability_bins_edges_follow_the_rule():
    """Values on the edges: (a, b] bins, the first one closed at 0 (the plain loop decides)."""
    n_bins = 10
    edges = np.linspace(0, 1, n_bins + 1)
    conf = np.concatenate([edges, edges[1:-1] - 1e-12, [0.0, 1.0]])
    correct = np.arange(len(conf)) % 3 == 0
    bins = reliability_bins(conf, correct, n_bins)
    counts, mean_conf, acc = loop_bins(conf, correct, n_bins)
    np.testing.assert_array_equal(bins.counts, counts)
    np.testing.assert_allclose(bins.confidence, mean_conf, rtol=1e-12)
    np.testing.assert_allclose(bins.accuracy, acc, rtol=1e-12)
    assert bins.counts[-1] == 2  # 1.0 twice (0.9 belongs to the bin below)
    assert bins.counts[0] == 4  # 0.0 twice, 0.1 and 0.1 - 1e-12
    # the edges go where scikit-learn puts them
    prob_true, _ = calibration_curve(correct, conf, n_bins=n_bins, strategy="uniform")
    np.testing.assert_allclose(bins.accuracy[bins.counts > 0], prob_true, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), n_bins=st.integers(1, 20))
def test_reliability_bins_ece_mce_match_loop(seed, n, n_bins):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0, 1, size=n)
    conf[rng.uniform(size=n) < 0.2] = rng.choice(np.linspace(0, 1, n_bins + 1))  # some on the edges
    correct = rng.uniform(size=n) < conf
    bins = reliability_bins(conf, correct, n_bins)
    counts, _, _ = loop_bins(conf, correct, n_bins)
    np.testing.assert_array_equal(bins.counts, counts)
    ece, mce = loop_ece_mce(conf, correct, n_bins)
    assert bins.ece == pytest.approx(ece, rel=1e-12, abs=1e-15)
    assert bins.mce == pytest.approx(mce, rel=1e-12, abs=1e-15)
    assert 0 <= bins.ece <= bins.mce * (1 + 1e-12) and bins.mce <= 1  # ece = n g / n may round up


@pytest.mark.parametrize("n_bins", [5, 15])
def test_ece_and_mce_of_logits_match_loop(n_bins):
    z, labels = classifier_data(3, scale=3.0)
    for t in (1.0, 2.5):
        conf, correct = confidences(z, labels, t)
        ece, mce = loop_ece_mce(conf, correct, n_bins)
        assert expected_calibration_error(z, labels, t, n_bins) == pytest.approx(ece, rel=1e-10)
        assert max_calibration_error(z, labels, t, n_bins) == pytest.approx(mce, rel=1e-10)


def test_reliability_bins_bad_arguments():
    with pytest.raises(ValueError, match="same length"):
        reliability_bins([0.5, 0.6], [True])
    with pytest.raises(ValueError, match="n_bins"):
        reliability_bins([0.5], [True], n_bins=0)
    for bad in ([1.01], [-0.01], [float("nan")]):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            reliability_bins(bad, [True])
    empty = reliability_bins([], [], 4)
    assert empty.n == 0 and empty.ece == 0.0 and empty.mce == 0.0


# --------------------------------------------------------------------------
# NLL and Brier score
# --------------------------------------------------------------------------
@pytest.mark.parametrize("t", [0.5, 1.0, 3.0])
def test_nll_matches_sklearn_and_torch(t):
    torch = pytest.importorskip("torch")
    z, labels = classifier_data(5, n=200, k=5)
    want = log_loss(labels, sps.softmax(z / t, axis=1), labels=np.arange(5))
    assert negative_log_likelihood(z, labels, t) == pytest.approx(want, rel=1e-10)
    ce = torch.nn.functional.cross_entropy(torch.tensor(z / t), torch.tensor(labels)).item()
    assert negative_log_likelihood(z, labels, t) == pytest.approx(ce, rel=1e-12)


@pytest.mark.parametrize("t", [0.5, 1.0, 3.0])
def test_brier_score_matches_loop(t):
    z, labels = classifier_data(6, n=100, k=3)
    p = sps.softmax(z / t, axis=1)
    rows = []
    for row, label in zip(p, labels, strict=True):
        rows.append(math.fsum((pi - (i == label)) ** 2 for i, pi in enumerate(row)))
    assert brier_score(z, labels, t) == pytest.approx(math.fsum(rows) / len(rows), rel=1e-12)


def test_nll_and_brier_bad_arguments():
    z = np.zeros((3, 2))
    for fn in (negative_log_likelihood, brier_score, calibration_report, fit_temperature):
        with pytest.raises(ValueError, match="labels"):
            fn(z, [0, 1])  # wrong length
        with pytest.raises(ValueError, match="labels"):
            fn(z, [0, 1, 2])  # class 2 of 2
        with pytest.raises(ValueError, match="labels"):
            fn(z, [0.0, 1.0, 0.0])  # not integers
        with pytest.raises(ValueError, match="logits"):
            fn(np.zeros(3), [0, 1, 0])
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="temperature"):
            negative_log_likelihood(z, [0, 1, 0], bad)
        with pytest.raises(ValueError, match="temperature"):
            brier_score(z, [0, 1, 0], bad)
    with pytest.raises(ValueError, match="t_min"):
        fit_temperature(z, [0, 1, 0], t_min=2.0, t_max=2.0)


# --------------------------------------------------------------------------
# temperature scaling
# --------------------------------------------------------------------------
@pytest.mark.parametrize(("scale", "side"), [(1.0, "near 1"), (3.0, "over"), (1 / 3, "under")])
def test_fit_temperature_matches_scipy(scale, side):
    z, labels = classifier_data(8, n=500, scale=scale)
    t = fit_temperature(z, labels)
    want, nll = scipy_temperature(z, labels)
    assert t == pytest.approx(want, rel=1e-4)
    assert negative_log_likelihood(z, labels, t) <= nll(want) + 1e-12
    assert negative_log_likelihood(z, labels, t) <= negative_log_likelihood(z, labels, 1.0)
    if side == "over":  # over-confident logits are cooled down
        assert t > 1.5
    elif side == "under":
        assert t < 0.6
    else:
        assert 0.7 < t < 1.4


def test_fit_temperature_at_a_bound():
    # every prediction right: the NLL falls all the way down to the smallest temperature
    z = np.array([[3.0, 0.0, -1.0], [0.0, 2.0, 1.0], [-2.0, 0.0, 4.0], [1.0, -1.0, 0.0]])
    labels = np.array([0, 1, 2, 0])
    want, _ = scipy_temperature(z, labels, bounds=(0.05, 20.0))
    assert want == pytest.approx(0.05, rel=1e-6)  # the reference agrees that it is the bound
    assert fit_temperature(z, labels) == pytest.approx(want, rel=1e-4)
    assert fit_temperature(z, labels, t_min=0.2, t_max=5.0) == pytest.approx(0.2, rel=1e-4)
    # constant logits: every temperature is as good; a result inside the interval
    assert 0.05 <= fit_temperature(np.zeros((4, 3)), labels) <= 20.0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), t=st.floats(0.05, 20.0))
def test_temperature_scaling_keeps_accuracy(seed, t):
    z, labels = classifier_data(seed, n=50, k=4, scale=2.0)
    want = float((z.argmax(axis=1) == labels).mean())
    assert calibration_report(z, labels, t).accuracy == want
    assert calibration_report(z, labels, 1.0).accuracy == want


def test_calibration_report_is_consistent():
    z, labels = classifier_data(9, n=300, scale=2.5)
    t = fit_temperature(z, labels)
    for temp, n_bins in ((1.0, 15), (t, 10)):
        report = calibration_report(z, labels, temp, n_bins)
        assert isinstance(report, CalibrationReport)
        assert report.temperature == temp
        assert report.nll == pytest.approx(negative_log_likelihood(z, labels, temp), rel=1e-14)
        assert report.brier == pytest.approx(brier_score(z, labels, temp), rel=1e-14)
        assert report.ece == pytest.approx(expected_calibration_error(z, labels, temp, n_bins), rel=1e-14)
        assert report.mce == pytest.approx(max_calibration_error(z, labels, temp, n_bins), rel=1e-14)
        conf, correct = confidences(z, labels, temp)
        assert report.accuracy == pytest.approx(correct.mean(), rel=1e-15)
        counts, _, acc = loop_bins(conf, correct, n_bins)
        np.testing.assert_array_equal(report.bins.counts, counts)
        np.testing.assert_allclose(report.bins.accuracy, acc, rtol=1e-12)
    # the fitted temperature makes these over-confident logits better calibrated
    assert calibration_report(z, labels, t).ece < calibration_report(z, labels, 1.0).ece


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 25))
def test_temperature_sweep_matches_a_report_per_temperature(seed, n_bins):
    """Each T of the sweep is the report of softmax(z / T): NLL against SciPy's log_softmax, ECE
    against expected_calibration_error at that T, and the two halves give the one-pass result."""
    z, labels = classifier_data(seed % 1000, n=120, k=5, scale=1.5)
    temps = np.geomspace(0.2, 5.0, 7)
    nll, ece = temperature_sweep(z, labels, temps, n_bins)
    for i, t in enumerate(temps):
        lp = sps.log_softmax(z / t, axis=1)
        assert nll[i] == pytest.approx(-lp[np.arange(len(labels)), labels].mean(), rel=1e-9, abs=1e-12)
        assert ece[i] == pytest.approx(expected_calibration_error(z, labels, temperature=t, n_bins=n_bins),
                                       rel=1e-9, abs=1e-12)
    n2, confidence, correct = sweep_confidences(z, labels, temps)
    np.testing.assert_array_equal(n2, nll)
    np.testing.assert_array_equal(sweep_ece(confidence, correct, n_bins), ece)


def test_temperature_sweep_bad_arguments():
    z, labels = classifier_data(0, n=20, k=3)
    with pytest.raises(ValueError, match="temperatures"):
        temperature_sweep(z, labels, [1.0, 0.0])
    with pytest.raises(ValueError, match="n_bins"):
        temperature_sweep(z, labels, [1.0], 0)
    with pytest.raises(ValueError, match="n_bins"):
        sweep_ece(np.full((1, 3), 0.5), np.ones(3), 0)
