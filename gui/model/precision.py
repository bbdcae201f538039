"""The Precision view's model: the same softmax in four formats and three formulas.

Every weight shown is computed in its format by :func:`compute.softmax_in`
(bfloat16 emulated), never in float64 and rounded, so the inf, NaN and
exact zeros are the ones real code in that format gets.  The float64
reference for the errors is :func:`compute.softmax`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, choice, param
from gui.model.scores import MAX_SCORES, ScoreRow
from gui.model.texts import tr

DTYPES = compute.PRECISION_DTYPES
METHODS = compute.SOFTMAX_METHODS
#: Mask values, as (choice name, value); None is the format's own lowest finite value.
MASKS: tuple[tuple[str, float | None], ...] = (
    ("minus_inf", -math.inf),
    ("minus_1e9", -1e9),
    ("minus_1e4", -1e4),
    ("minus_65504", -65504.0),
    ("lowest", None),
)
MASK_NAMES = tuple(name for name, _ in MASKS)

#: Scales at which the largest score is drawn (log-spaced, 1..1000, the slider's travel).
CURVE_SCALE = np.logspace(0.0, 3.0, 121)
#: Random rows in the float32 sum-error experiment.
SUM_ROWS = 2000
EPS32 = float(np.finfo(np.float32).eps)
SUM_BINS = 40


def _counts(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NaN, ±inf and exact-zero counts over the last axis."""
    return np.isnan(w).sum(axis=-1), np.isinf(w).sum(axis=-1), (w == 0).sum(axis=-1)


def masked_rows(logits: np.ndarray, masked: tuple[int, ...], dtype: str) -> np.ndarray:
    """One row per mask value: ``logits`` with the ``masked`` positions replaced (masked_fill).

    "lowest" is ``dtype``'s own lowest finite value; the others are the same
    float64 number for every format and are rounded by :func:`compute.softmax_in`
    (so -1e9 becomes -inf in float16).
    """
    rows = np.tile(logits, (len(MASKS), 1))
    idx = list(masked)
    for k, (_name, value) in enumerate(MASKS):
        rows[k, idx] = compute.lowest_finite(dtype) if value is None else value
    return rows


@dataclass(frozen=True)
class SumErrors:
    """|Σα − 1| of max-shifted float32 softmax over SUM_ROWS random rows, plain and renormalised.

    The sums are taken in float64 (exact to ~1e-13 for these rows), so they
    measure how far the float32 weights themselves are from adding up to 1,
    not the error of a float32 summation.
    """

    length: int
    seed: int
    plain: np.ndarray  # |sum - 1| per row, float64
    renormalised: np.ndarray
    edges: np.ndarray  # histogram bin edges in units of float32 eps
    counts_plain: np.ndarray
    counts_renormalised: np.ndarray


def sum_errors(length: int, seed: int) -> SumErrors:
    """The experiment behind the histogram: scores ~ N(0, 1), float32 throughout."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((SUM_ROWS, length), dtype=np.float32)
    p = compute.softmax_in(x, "float32", "max_shifted")
    q = compute.renormalize_in(p, "float32")
    plain = np.abs(p.sum(axis=-1, dtype=np.float64) - 1.0)
    renormalised = np.abs(q.sum(axis=-1, dtype=np.float64) - 1.0)
    top = max(float(plain.max()), float(renormalised.max())) / EPS32
    top = max(1.0, math.ceil(top * 4) / 4)  # a quarter of eps, at least one eps
    edges = np.linspace(0.0, top, SUM_BINS + 1)
    return SumErrors(
        length, seed, plain, renormalised, edges,
        np.histogram(plain / EPS32, edges)[0], np.histogram(renormalised / EPS32, edges)[0],
    )


@dataclass(frozen=True)
class PrecisionResult:
    labels: tuple[str, ...]
    logits: np.ndarray  # scores * scale, float64
    reference: np.ndarray  # compute.softmax(logits), float64
    weights: np.ndarray  # (dtype, method, token): softmax_in results as float64 (exact)
    max_error: np.ndarray  # (dtype, method): max |w - reference|
    sum_error: np.ndarray  # (dtype, method): |sum(w) - 1|
    nan_count: np.ndarray  # (dtype, method) ints
    inf_count: np.ndarray
    zero_count: np.ndarray
    overflow: np.ndarray  # (dtype,) compute.overflow_threshold
    underflow: np.ndarray  # (dtype,) compute.underflow_threshold
    lowest: np.ndarray  # (dtype,) compute.lowest_finite
    max_score: float  # the largest unscaled score
    break_scale: np.ndarray  # (dtype,) overflow / max_score; NaN when max_score <= 0 or not finite
    curve_scale: np.ndarray
    curve_top: np.ndarray  # max_score * curve_scale
    masked: tuple[int, ...]  # the masked positions that exist in this row, 0-based
    mask_weights: np.ndarray  # (dtype, mask value, token), with the selected method
    mask_nan: np.ndarray  # (dtype, mask value)
    mask_zero: np.ndarray

    def cell(self, dtype: str, method: str) -> np.ndarray:
        return self.weights[DTYPES.index(dtype), METHODS.index(method)]


@evented
@dataclass
class PrecisionModel(ViewModel):
    name: ClassVar[str] = "precision"
    scale: float = param(1.0, minimum=1.0, maximum=1000.0, log=True)
    dtype: str = choice("float16", DTYPES)
    method: str = choice("max_shifted", METHODS)
    mask_value: str = choice("minus_1e9", MASK_NAMES)
    length: int = param(64, minimum=2, maximum=4096, integer=True)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True)
    masked: tuple[int, ...] = ()  # view state: the masked token positions, 0-based

    def __post_init__(self) -> None:
        self._sum_errors: SumErrors | None = None

    # -- the masked tokens are the user's work: saved in sessions, set by lessons ----------------------
    def extra_state(self) -> dict[str, Any]:
        return {"masked": list(self.masked)} if self.masked else {}

    def check_extra_state(self, state: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(state) - {"masked"})
        if unknown:
            raise ValueError(tr("error.state.none_kept", view=self.name, names=", ".join(unknown)))
        masked = state.get("masked", [])
        if not isinstance(masked, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 0 <= i < MAX_SCORES for i in masked
        ):
            raise ValueError(tr("precision.error.masked", limit=MAX_SCORES, got=repr(masked)[:60]))
        return {"masked": tuple(sorted(set(masked)))}

    def apply_extra_state(self, checked: dict[str, Any]) -> None:
        self.masked = checked.get("masked", ())

    def sum_errors(self) -> SumErrors:
        """The float32 sum experiment, cached on (length, seed): the scale does not touch it."""
        cached = self._sum_errors
        if cached is None or (cached.length, cached.seed) != (self.length, self.seed):
            cached = self._sum_errors = sum_errors(self.length, self.seed)
        return cached

    def result(self, scores: ScoreRow) -> PrecisionResult:
        values = scores.values
        n = len(values)
        logits = values * self.scale
        reference = compute.softmax(logits)
        weights = np.array([[compute.softmax_in(logits, d, m) for m in METHODS] for d in DTYPES],
                           dtype=np.float64)
        with np.errstate(invalid="ignore"):  # inf - inf where a format overflowed: NaN error
            max_error = np.abs(weights - reference).max(axis=-1)
        sum_error = np.abs(weights.sum(axis=-1) - 1.0)
        nan, inf, zero = _counts(weights)

        infos = [compute.precision_info(d) for d in DTYPES]
        overflow = np.array([i.overflow for i in infos])
        top = float(values.max())
        if math.isfinite(top) and top > 0:
            break_scale = overflow / top
            curve_top = top * CURVE_SCALE
        else:
            break_scale = np.full(len(DTYPES), np.nan)
            curve_top = np.full(len(CURVE_SCALE), np.nan)

        masked = tuple(sorted({i for i in self.masked if 0 <= i < n}))
        mask_weights = np.array(
            [compute.softmax_in(masked_rows(logits, masked, d), d, self.method) for d in DTYPES],
            dtype=np.float64,
        )
        mask_nan, _, mask_zero = _counts(mask_weights)
        return PrecisionResult(
            labels=scores.labels, logits=logits, reference=reference, weights=weights,
            max_error=max_error, sum_error=sum_error, nan_count=nan, inf_count=inf, zero_count=zero,
            overflow=overflow, underflow=np.array([i.underflow for i in infos]),
            lowest=np.array([i.lowest for i in infos]), max_score=top, break_scale=break_scale,
            curve_scale=CURVE_SCALE, curve_top=curve_top, masked=masked,
            mask_weights=mask_weights, mask_nan=mask_nan, mask_zero=mask_zero,
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        s = self.sum_errors()
        n = len(r.labels)
        weight_cols = tuple(f"w[{label}]" for label in r.labels)
        grid = np.column_stack([
            r.weights.reshape(-1, n), r.max_error.ravel(), r.sum_error.ravel(),
            r.nan_count.ravel(), r.inf_count.ravel(), r.zero_count.ravel(),
        ]).astype(np.float64)
        mask_flags = np.zeros(n)
        mask_flags[list(r.masked)] = 1.0
        lines = np.column_stack([r.overflow, r.underflow, r.lowest, r.break_scale])
        return {
            "grid": ExportArray(
                grid, (*weight_cols, "max_abs_error", "abs_sum_minus_1", "nan_count", "inf_count", "zero_count"),
                tuple(f"{d}/{m}" for d in DTYPES for m in METHODS),
            ),
            "reference": ExportArray(np.column_stack([r.logits, r.reference]),
                                     ("logit", "softmax_float64"), r.labels),
            "thresholds": ExportArray(
                lines, ("overflow_threshold", "underflow_threshold", "lowest_finite", "naive_break_scale"),
                DTYPES,
            ),
            "scale_curve": ExportArray(np.column_stack([r.curve_scale, r.curve_top]),
                                       ("scale", "max_score_times_scale")),
            "mask": ExportArray(
                np.column_stack([r.mask_weights.reshape(-1, n), r.mask_nan.ravel(), r.mask_zero.ravel()])
                .astype(np.float64),
                (*weight_cols, "nan_count", "zero_count"),
                tuple(f"{d}/{m}" for d in DTYPES for m in MASK_NAMES),
            ),
            "mask_positions": ExportArray(mask_flags, ("masked",), r.labels),
            "sum_error_hist": ExportArray(
                np.column_stack([s.edges[:-1], s.edges[1:], s.counts_plain, s.counts_renormalised])
                .astype(np.float64),
                ("bin_lo_eps", "bin_hi_eps", "rows_plain", "rows_renormalised"),
            ),
            "summary": ExportArray(
                np.array([[
                    self.scale, r.max_score, self.length, self.seed,
                    s.plain.mean(), s.plain.max(), s.renormalised.mean(), s.renormalised.max(),
                ]]),
                ("scale", "max_score", "length", "seed",
                 "mean_abs_sum_minus_1", "max_abs_sum_minus_1",
                 "mean_abs_sum_minus_1_renormalised", "max_abs_sum_minus_1_renormalised"),
            ),
        }
