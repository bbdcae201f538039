"""The Log-domain view's model: LogSumExp as a smooth max, its gradient, log_softmax, sigmoid.

Four panels share the score row s (K scores):

* the smooth max T·LSE(s/T) over the temperatures of CURVE_T, between its
  bounds max(s) and max(s) + T ln K, and the soft-min −T·LSE(−s/T) between
  min(s) − T ln K and min(s); the readouts give LSE(s) and its bounds at T = 1;
* the gradient of T·LSE(s/T) at the current T: softmax(s/T) beside central
  finite differences;
* log_softmax(c·s) against log(softmax(c·s)) in float64 and in float32, at
  T = 1; the spread c (this panel only) pushes small weights below the
  float range;
* the two-class case: σ(s₁ − s₂) against softmax([s₁, s₂])₁ for the first
  two scores, and over d in [−20, 20] (wider if |s₁ − s₂| is larger).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, param
from gui.model.scores import ScoreRow
from gui.model.temperature import CURVE_T

#: A naive log-probability whose relative error to log_softmax exceeds this has lost digits.
DIGIT_LOSS = 1e-6
#: The sigmoid curve spans d in [-SIGMOID_HALF_WIDTH, SIGMOID_HALF_WIDTH] (wider to reach |d|).
SIGMOID_HALF_WIDTH = 20.0
SIGMOID_POINTS = 401
#: ... but never wider than this (a larger |d| is not marked on the plots).
SIGMOID_MAX_HALF_WIDTH = 1e6
#: The most scores the finite-difference gradient check takes (it runs 2K rows of K: 1.6 GB and
#: 16 s at K = 10,000); above it the check's column is NaN and the view says "too large".
GRADIENT_CHECK_LIMIT = 1024

LSE_COLUMNS = ("T", "T_LSE_s_over_T", "max_s", "max_s_plus_T_ln_K",
               "softmin", "min_s_minus_T_ln_K", "min_s")
GRADIENT_COLUMNS = ("softmax_s_over_T", "finite_difference", "abs_difference")
TABLE_COLUMNS = ("c_times_s", "log_softmax", "log_of_softmax_float64", "log_of_softmax_float32",
                 "rel_error_float64", "rel_error_float32")
SIGMOID_COLUMNS = ("d", "sigmoid_d", "softmax_d_0_first", "sigmoid_minus_softmax",
                   "naive_sigmoid_minus_softmax")
SUMMARY_COLUMNS = ("temperature", "spread", "K", "lse", "max", "max_plus_ln_K", "softmin", "min",
                   "min_minus_ln_K", "smooth_max_at_T", "smooth_min_at_T", "max_abs_gradient_diff",
                   "d", "sigmoid_d", "softmax_pair_first")


def relative_error(value: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|value − reference| / |reference|; 0 where they are equal (also both −inf or 0), inf
    where the reference is 0 and the value is not, NaN where the reference is NaN."""
    with np.errstate(all="ignore"):
        rel = np.abs(value - reference) / np.abs(reference)
        return np.where(value == reference, 0.0, rel)


@dataclass(frozen=True)
class LseCurves:
    """The smooth max and min over CURVE_T, with their bounds."""

    t: np.ndarray
    smooth_max: np.ndarray  # T·LSE(s/T)
    max_lo: np.ndarray  # max(s)
    max_hi: np.ndarray  # max(s) + T ln K
    smooth_min: np.ndarray  # −T·LSE(−s/T)
    min_lo: np.ndarray  # min(s) − T ln K
    min_hi: np.ndarray  # min(s)

    def table(self) -> np.ndarray:
        return np.column_stack([self.t, self.smooth_max, self.max_lo, self.max_hi,
                                self.smooth_min, self.min_lo, self.min_hi])


@dataclass(frozen=True)
class LogTable:
    """log_softmax(c·s) against log(softmax(c·s)) in float64 and float32."""

    spread: float
    scores: np.ndarray  # c·s
    stable: np.ndarray  # compute.log_softmax, float64
    naive64: np.ndarray  # np.log(compute.softmax(c·s)), float64
    naive32: np.ndarray  # np.log(compute.softmax(float32(c·s))), float32 widened to float64

    @property
    def rel64(self) -> np.ndarray:
        return relative_error(self.naive64, self.stable)

    @property
    def rel32(self) -> np.ndarray:
        return relative_error(self.naive32, self.stable)

    @staticmethod
    def underflowed(naive: np.ndarray, stable: np.ndarray) -> np.ndarray:
        """Cells where the naive log is −inf but the stable one is not (the weight became 0)."""
        return (naive == -np.inf) & (stable != -np.inf)

    @staticmethod
    def lost_digits(naive: np.ndarray, stable: np.ndarray) -> np.ndarray:
        """Finite naive cells more than DIGIT_LOSS away (relatively) from the stable value."""
        rel = relative_error(naive, stable)
        return np.isfinite(naive) & ~(rel <= DIGIT_LOSS)

    def table(self) -> np.ndarray:
        return np.column_stack([self.scores, self.stable, self.naive64, self.naive32,
                                self.rel64, self.rel32])


@dataclass(frozen=True)
class SigmoidCheck:
    """σ(d) against softmax([d, 0])₁ over a grid of d, and for the first two scores."""

    d: np.ndarray
    sigmoid: np.ndarray
    softmax: np.ndarray
    naive: np.ndarray  # the textbook 1 / (1 + e^−d), for scale
    pair: tuple[float, float] | None  # (s₁, s₂), None for a one-score row
    pair_d: float  # s₁ − s₂ (NaN without a pair)
    pair_sigmoid: float  # σ(s₁ − s₂)
    pair_softmax: float  # softmax([s₁, s₂])₁

    @property
    def difference(self) -> np.ndarray:
        return self.sigmoid - self.softmax

    @property
    def naive_difference(self) -> np.ndarray:
        return self.naive - self.softmax

    @property
    def pair_difference(self) -> float:
        with np.errstate(invalid="ignore"):
            return self.pair_sigmoid - self.pair_softmax

    def table(self) -> np.ndarray:
        return np.column_stack([self.d, self.sigmoid, self.softmax, self.difference,
                                self.naive_difference])


@dataclass(frozen=True)
class LogDomainResult:
    labels: tuple[str, ...]
    values: np.ndarray
    temperature: float
    lse: float  # LSE(s) at T = 1 (compute.logsumexp)
    max: float
    max_log_k: float  # max(s) + ln K
    softmin: float  # −LSE(−s) at T = 1
    min: float
    min_log_k: float  # min(s) − ln K
    smooth_max_t: float  # T·LSE(s/T) at the current T
    smooth_min_t: float
    curves: LseCurves
    grad_softmax: np.ndarray  # softmax(s/T)
    grad_fd: np.ndarray  # finite differences of T·LSE(s/T)
    log_table: LogTable
    sigmoid: SigmoidCheck

    @property
    def k(self) -> int:
        return len(self.values)

    @property
    def grad_difference(self) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.abs(self.grad_softmax - self.grad_fd)

    @property
    def grad_max_difference(self) -> float:
        """The largest |softmax − finite difference| over the entries where both exist (NaN if none)."""
        diff = self.grad_difference
        ok = np.isfinite(diff)
        return float(diff[ok].max()) if ok.any() else math.nan


@evented
@dataclass
class LogDomainModel(ViewModel):
    name: ClassVar[str] = "log-domain"
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    spread: float = param(1.0, minimum=1.0, maximum=1000.0, log=True)

    def __post_init__(self) -> None:
        self._curve_key: bytes | None = None
        self._curves: LseCurves | None = None
        self._sigmoid_key: float | None = None
        self._sigmoid_grid: tuple[np.ndarray, ...] | None = None
        #: What the scores alone give (LSE at T = 1, the extremes, the sigmoid check), and the log table
        #: of the scores and the spread: kept while those stay the same (a temperature move reuses both).
        self._fixed_key: bytes | None = None
        self._fixed: tuple | None = None
        self._table_key: tuple | None = None
        self._table: LogTable | None = None

    # -- the pieces, each computed from the scores alone or with one parameter ----------------
    def lse_curves(self, x: np.ndarray) -> LseCurves:
        """The smooth max and min and their bounds over CURVE_T; cached on the scores."""
        key = x.tobytes()
        if key != self._curve_key or self._curves is None:
            t = CURVE_T
            with np.errstate(all="ignore"):
                log_k = math.log(len(x))
                mx, mn = np.max(x), np.min(x)
                self._curves = LseCurves(
                    t=t,
                    smooth_max=compute.smooth_max_curve(x, t),
                    max_lo=np.full_like(t, mx),
                    max_hi=mx + t * log_k,
                    smooth_min=compute.smooth_min_curve(x, t),
                    min_lo=mn - t * log_k,
                    min_hi=np.full_like(t, mn),
                )
            self._curve_key = key
        return self._curves

    def log_table(self, x: np.ndarray) -> LogTable:
        """log_softmax(c·s) against the naive logs; cached on the scores and the spread."""
        key = (x.tobytes(), x.dtype.str, self.spread)
        if key != self._table_key or self._table is None:
            self._table = self._make_log_table(x)
            self._table_key = key
        return self._table

    def _make_log_table(self, x: np.ndarray) -> LogTable:
        with np.errstate(all="ignore"):
            scores = self.spread * x
            naive64 = np.log(compute.softmax(scores))
            naive32 = np.log(compute.softmax(scores.astype(np.float32))).astype(np.float64)
        return LogTable(self.spread, scores, compute.log_softmax(scores), naive64, naive32)

    def sigmoid_grid(self, half_width: float) -> tuple[np.ndarray, ...]:
        """(d, σ(d), softmax([d, 0])₁, 1/(1 + e^−d)) over [−half_width, half_width]; cached."""
        if half_width != self._sigmoid_key or self._sigmoid_grid is None:
            d = np.linspace(-half_width, half_width, SIGMOID_POINTS)
            with np.errstate(all="ignore"):
                naive = 1.0 / (1.0 + np.exp(-d))
            pairs = np.column_stack([d, np.zeros_like(d)])
            self._sigmoid_grid = (d, compute.sigmoid(d), compute.softmax(pairs)[:, 0], naive)
            self._sigmoid_key = half_width
        return self._sigmoid_grid

    def sigmoid_check(self, x: np.ndarray) -> SigmoidCheck:
        pair = None
        pd = ps = pm = math.nan
        half = SIGMOID_HALF_WIDTH
        if len(x) >= 2:
            pair = (float(x[0]), float(x[1]))
            with np.errstate(all="ignore"):
                pd = float(x[0] - x[1])
            ps = float(compute.sigmoid(pd))
            pm = float(compute.softmax(x[:2])[0])
            if math.isfinite(pd) and abs(pd) > half:
                # whole numbers, so the cached grid is reused while d moves a little
                half = float(math.ceil(min(abs(pd) * 1.05, SIGMOID_MAX_HALF_WIDTH)))
        d, sig, soft, naive = self.sigmoid_grid(half)
        return SigmoidCheck(d, sig, soft, naive, pair, pd, ps, pm)

    # -- everything ----------------------------------------------------------------------------
    def fixed(self, x: np.ndarray) -> tuple[float, float, float, float, SigmoidCheck]:
        """(LSE(s), −LSE(−s), max(s), min(s), the sigmoid check): what neither the temperature nor the
        spread changes; cached on the scores."""
        key = x.tobytes() + x.dtype.str.encode()
        if key != self._fixed_key or self._fixed is None:
            with np.errstate(all="ignore"):
                mx, mn = float(np.max(x)), float(np.min(x))
            self._fixed = (float(compute.logsumexp(x)), -float(compute.logsumexp(-x)), mx, mn,
                           self.sigmoid_check(x))
            self._fixed_key = key
        return self._fixed

    def result(self, scores: ScoreRow) -> LogDomainResult:
        x = scores.values
        t = self.temperature
        log_k = math.log(len(x))
        lse, softmin, mx, mn, sigmoid = self.fixed(x)
        if len(x) <= GRADIENT_CHECK_LIMIT:
            probs, fd = compute.lse_gradient_check(x, temperature=t)
        else:
            probs, fd = compute.softmax(x, temperature=t), np.full(len(x), np.nan)
        return LogDomainResult(
            labels=scores.labels,
            values=x,
            temperature=t,
            lse=lse,
            max=mx,
            max_log_k=mx + log_k,
            softmin=softmin,
            min=mn,
            min_log_k=mn - log_k,
            smooth_max_t=float(compute.smooth_max(x, t)),
            smooth_min_t=float(compute.smooth_min(x, t)),
            curves=self.lse_curves(x),
            grad_softmax=probs,
            grad_fd=fd,
            log_table=self.log_table(x),
            sigmoid=sigmoid,
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        s = r.sigmoid
        summary = [
            self.temperature, self.spread, r.k, r.lse, r.max, r.max_log_k, r.softmin, r.min,
            r.min_log_k, r.smooth_max_t, r.smooth_min_t, r.grad_max_difference,
            s.pair_d, s.pair_sigmoid, s.pair_softmax,
        ]
        return {
            "lse_curves": ExportArray(r.curves.table(), LSE_COLUMNS),
            "gradient_check": ExportArray(
                np.column_stack([r.grad_softmax, r.grad_fd, r.grad_difference]), GRADIENT_COLUMNS, r.labels
            ),
            "log_softmax_table": ExportArray(r.log_table.table(), TABLE_COLUMNS, r.labels),
            "sigmoid_curve": ExportArray(s.table(), SIGMOID_COLUMNS),
            "summary": ExportArray(np.array([summary], dtype=np.float64), SUMMARY_COLUMNS),
        }
