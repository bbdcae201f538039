"""Calibration of softmax classifiers: reliability bins, ECE, NLL, Brier, temperature scaling.

Plain NumPy.  A classifier is calibrated when, of the predictions made with
confidence ``c``, a fraction ``c`` are right.  Modern networks are often
over-confident (Guo et al. 2017); dividing every logit by one temperature
``T`` fitted on held-out data (temperature scaling) changes no prediction and
often fixes most of it.

* :func:`reliability_bins`: predictions grouped by their confidence (the
  largest probability) into ``n_bins`` equal-width bins of ``[0, 1]``, with
  their counts, mean confidence and accuracy.  The bins are
  ``[0, 1/n], (1/n, 2/n], ..., ((n-1)/n, 1]``, as Guo et al. define them and
  as ``sklearn.calibration.calibration_curve(strategy="uniform")`` assigns them.
* :func:`expected_calibration_error` (ECE): ``sum_b (n_b / N) |acc_b - conf_b|``;
  :func:`max_calibration_error` (MCE): the largest gap over non-empty bins.
* :func:`negative_log_likelihood` and :func:`brier_score` of the logits at a
  temperature (mean over rows; Brier is ``sum_i (p_i - y_i)^2`` per row).
* :func:`fit_temperature`: the ``T`` in ``[t_min, t_max]`` that minimises the
  NLL, by golden-section search on ``log T`` (the NLL is convex in ``1/T``,
  so it has one minimum on the interval).
* :func:`calibration_report`: all of the above at one temperature;
  :func:`temperature_sweep`: the NLL and ECE at many temperatures at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from compute._softmax import log_softmax

__all__ = [
    "CalibrationReport",
    "ReliabilityBins",
    "brier_score",
    "calibration_report",
    "expected_calibration_error",
    "fit_temperature",
    "max_calibration_error",
    "negative_log_likelihood",
    "reliability_bins",
    "sweep_confidences",
    "sweep_ece",
    "temperature_sweep",
]

#: The golden ratio's conjugate, (sqrt(5) - 1) / 2.
_INV_PHI = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class ReliabilityBins:
    """Predictions grouped by confidence: one entry per bin (empty bins have count 0 and NaN means)."""

    edges: np.ndarray  # n_bins + 1
    counts: np.ndarray  # int
    confidence: np.ndarray  # mean confidence in the bin
    accuracy: np.ndarray  # fraction right in the bin

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def gaps(self) -> np.ndarray:
        """|accuracy - confidence| per bin (NaN for empty bins)."""
        return np.abs(self.accuracy - self.confidence)

    @property
    def ece(self) -> float:
        full = self.counts > 0
        return float((self.counts[full] * self.gaps[full]).sum() / max(self.n, 1))

    @property
    def mce(self) -> float:
        full = self.counts > 0
        return float(self.gaps[full].max()) if full.any() else 0.0


def _labels(labels: ArrayLike, n: int, k: int) -> np.ndarray:
    t = np.asarray(labels)
    if t.shape != (n,) or t.dtype.kind not in "iu":
        raise ValueError(f"labels must be {n} integer classes, got shape {t.shape} dtype {t.dtype}")
    if n and (t.min() < 0 or t.max() >= k):
        raise ValueError(f"labels must be in [0, {k})")
    return t.astype(np.intp)


def _logits(logits: ArrayLike) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or z.shape[1] < 1:
        raise ValueError(f"logits must be (rows, classes), got shape {z.shape}")
    return z


def _check_temperature(temperature: float) -> float:
    t = float(temperature)
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    return t


def reliability_bins(confidence: ArrayLike, correct: ArrayLike, n_bins: int = 15) -> ReliabilityBins:
    """Bin ``confidence`` (in [0, 1]) into ``n_bins`` equal bins; the accuracy of ``correct`` in each."""
    c = np.asarray(confidence, dtype=np.float64).reshape(-1)
    ok = np.asarray(correct, dtype=bool).reshape(-1)
    if c.shape != ok.shape:
        raise ValueError("confidence and correct must have the same length")
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    if c.size and (np.isnan(c).any() or c.min() < 0 or c.max() > 1):
        raise ValueError("confidences must be in [0, 1]")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.searchsorted(edges[1:-1], c, side="left")  # (a, b], the first [0, b]: sklearn's assignment
    counts = np.bincount(which, minlength=n_bins)
    sums = np.bincount(which, weights=c, minlength=n_bins)
    hits = np.bincount(which, weights=ok.astype(np.float64), minlength=n_bins)
    with np.errstate(all="ignore"):
        conf = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        acc = np.where(counts > 0, hits / np.maximum(counts, 1), np.nan)
    return ReliabilityBins(edges, counts, conf, acc)


def _probabilities(logits: np.ndarray, temperature: float) -> tuple[np.ndarray, np.ndarray]:
    lp = log_softmax(logits / temperature, axis=-1)
    return lp, np.exp(lp)


def expected_calibration_error(logits: ArrayLike, labels: ArrayLike, temperature: float = 1.0,
                               n_bins: int = 15) -> float:
    z = _logits(logits)
    return calibration_report(z, labels, temperature, n_bins).ece


def max_calibration_error(logits: ArrayLike, labels: ArrayLike, temperature: float = 1.0,
                          n_bins: int = 15) -> float:
    z = _logits(logits)
    return calibration_report(z, labels, temperature, n_bins).mce


def negative_log_likelihood(logits: ArrayLike, labels: ArrayLike, temperature: float = 1.0) -> float:
    """The mean of ``-log softmax(logits / T)[label]`` over the rows."""
    z = _logits(logits)
    t = _labels(labels, z.shape[0], z.shape[1])
    lp = log_softmax(z / _check_temperature(temperature), axis=-1)
    return float(-lp[np.arange(len(t)), t].mean())


def brier_score(logits: ArrayLike, labels: ArrayLike, temperature: float = 1.0) -> float:
    """The mean over rows of ``sum_i (p_i - y_i)^2``, ``p = softmax(logits / T)``, ``y`` one-hot."""
    z = _logits(logits)
    t = _labels(labels, z.shape[0], z.shape[1])
    _, p = _probabilities(z, _check_temperature(temperature))
    r = p.copy()
    r[np.arange(len(t)), t] -= 1.0
    return float((r * r).sum(axis=-1).mean())


def fit_temperature(logits: ArrayLike, labels: ArrayLike, t_min: float = 0.05, t_max: float = 20.0,
                    tol: float = 1e-7) -> float:
    """The temperature in ``[t_min, t_max]`` minimising :func:`negative_log_likelihood`.

    Golden-section search over ``log T`` until the bracket is narrower than
    ``tol`` (relative); the NLL is unimodal in ``T`` (convex in ``1/T``).
    """
    z = _logits(logits)
    t = _labels(labels, z.shape[0], z.shape[1])
    lo, hi = math.log(_check_temperature(t_min)), math.log(_check_temperature(t_max))
    if lo >= hi:
        raise ValueError(f"t_min must be below t_max, got {t_min!r} and {t_max!r}")
    rows = np.arange(len(t))

    def nll(log_t: float) -> float:
        lp = log_softmax(z / math.exp(log_t), axis=-1)
        return float(-lp[rows, t].mean())

    a, b = lo, hi
    c, d = b - _INV_PHI * (b - a), a + _INV_PHI * (b - a)
    fc, fd = nll(c), nll(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _INV_PHI * (b - a)
            fc = nll(c)
        else:
            a, c, fc = c, d, fd
            d = a + _INV_PHI * (b - a)
            fd = nll(d)
    best = (a + b) / 2
    # an end of the interval may be better than any inside point (a monotone NLL)
    candidates = [(nll(best), best), (nll(lo), lo), (nll(hi), hi)]
    return math.exp(min(candidates)[1])


@dataclass(frozen=True)
class CalibrationReport:
    """A classifier's calibration at one temperature."""

    temperature: float
    bins: ReliabilityBins
    nll: float
    brier: float
    accuracy: float

    @property
    def ece(self) -> float:
        return self.bins.ece

    @property
    def mce(self) -> float:
        return self.bins.mce


@dataclass(frozen=True)
class CalibrationScores:
    """What :func:`calibration_report` needs of ``softmax(logits / T)`` whatever the bins: each row's
    confidence and whether its top class is right, and the NLL, Brier score and accuracy."""

    temperature: float
    confidence: np.ndarray  # (rows,): the largest probability
    correct: np.ndarray  # (rows,) bool
    nll: float
    brier: float
    accuracy: float


def calibration_scores(logits: ArrayLike, labels: ArrayLike, temperature: float = 1.0) -> CalibrationScores:
    """The part of :func:`calibration_report` that does not depend on the bins (for a caller that bins
    the same predictions several ways: :func:`report_from_scores`)."""
    z = _logits(logits)
    t = _labels(labels, z.shape[0], z.shape[1])
    temp = _check_temperature(temperature)
    lp, p = _probabilities(z, temp)
    rows = np.arange(len(t))
    predicted = p.argmax(axis=-1)
    correct = predicted == t
    r = p.copy()
    r[rows, t] -= 1.0
    return CalibrationScores(temp, p.max(axis=-1), correct, float(-lp[rows, t].mean()),
                             float((r * r).sum(axis=-1).mean()), float(correct.mean()))


def report_from_scores(scores: CalibrationScores, n_bins: int = 15) -> CalibrationReport:
    """:func:`calibration_report` of the predictions ``scores`` describes, in ``n_bins`` bins."""
    bins = reliability_bins(scores.confidence, scores.correct, n_bins)
    return CalibrationReport(scores.temperature, bins, scores.nll, scores.brier, scores.accuracy)


def calibration_report(logits: ArrayLike, labels: ArrayLike, temperature: float = 1.0,
                       n_bins: int = 15) -> CalibrationReport:
    """Reliability bins, ECE, MCE, NLL, Brier score and accuracy of ``softmax(logits / T)``."""
    return report_from_scores(calibration_scores(logits, labels, temperature), n_bins)


def temperature_sweep(logits: ArrayLike, labels: ArrayLike, temperatures: ArrayLike,
                      n_bins: int = 15) -> tuple[np.ndarray, np.ndarray]:
    """``(nll, ece)`` of ``softmax(logits / T)`` for every ``T`` of ``temperatures``, in one pass.

    The same numbers as :func:`calibration_report` at each temperature (a
    test checks it), computed over a ``(temperatures, rows, classes)`` array.
    :func:`sweep_confidences` and :func:`sweep_ece` are its two halves, for a
    caller that bins the same sweep several ways.
    """
    nll, confidence, correct = sweep_confidences(logits, labels, temperatures)
    return nll, sweep_ece(confidence, correct, n_bins)


def sweep_confidences(logits: ArrayLike, labels: ArrayLike,
                      temperatures: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(nll, confidence, correct)`` of ``softmax(logits / T)`` for every ``T``: the NLL per T,
    the top probability ``(temperatures, rows)`` and whether the top class is right ``(rows,)``
    (the same at every T > 0).  The part of :func:`temperature_sweep` that does not depend on the bins."""
    z = _logits(logits)
    t = _labels(labels, z.shape[0], z.shape[1])
    temps = np.asarray(temperatures, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(temps)) or np.any(temps <= 0):
        raise ValueError("temperatures must be positive numbers")
    rows = np.arange(len(t))
    lp = log_softmax(z[None, :, :] / temps[:, None, None], axis=-1)
    nll = -lp[:, rows, t].mean(axis=1)
    confidence = np.exp(lp.max(axis=-1))  # (temperatures, rows)
    correct = (z.argmax(axis=1) == t).astype(np.float64)
    return nll, confidence, correct


def sweep_ece(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """The ECE at each temperature from :func:`sweep_confidences`' ``confidence`` and ``correct``."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    n_temps, n = confidence.shape
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.searchsorted(edges[1:-1], confidence, side="left")
    flat = which + n_bins * np.arange(n_temps)[:, None]
    size = n_bins * n_temps
    sums = np.bincount(flat.ravel(), weights=confidence.ravel(), minlength=size).reshape(n_temps, n_bins)
    hits = np.bincount(flat.ravel(), weights=np.broadcast_to(correct, confidence.shape).ravel(),
                       minlength=size).reshape(n_temps, n_bins)
    return np.abs(hits - sums).sum(axis=1) / max(n, 1)  # sum_b (n_b / N) |acc_b - conf_b|
