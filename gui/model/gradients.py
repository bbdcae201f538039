"""The Gradients view's model: the softmax Jacobian and the cross-entropy gradient.

With temperature T the weights are p = softmax(s / T), so the Jacobian with
respect to the scores is (diag(p) - p pᵀ) / T.  The cross-entropy is taken
on the temperature-scaled logits z = s / T, whose gradient is p - y.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, choice, param
from gui.model.scores import ScoreRow
from gui.model.temperature import CURVE_T

CONVENTIONS = ("others", "pytorch")
#: The most scores whose full n x n Jacobian the view builds, draws and exports (32 MiB at the
#: limit).  Above it the heatmap says "too large for this view", the export holds no "jacobian",
#: and the column, the largest entry and the row sums are computed without the matrix.
JACOBIAN_LIMIT = 2048
_ROW_BLOCK = 512  # rows of the Jacobian built at a time for the row sums above the limit


@dataclass(frozen=True)
class GradientsResult:
    labels: tuple[str, ...]
    probs: np.ndarray
    jacobian: np.ndarray | None  # d p_i / d s_j; None above JACOBIAN_LIMIT scores
    column: int  # 0-based index of the column shown as bars (clamped to the row)
    target: int  # 0-based index of the target class (clamped to the row)
    smoothed: np.ndarray  # the target distribution y
    grad: np.ndarray  # p - y
    loss: float
    curve_t: np.ndarray
    curve_max: np.ndarray  # the largest |d p_i / d s_j| at each temperature
    column_values: np.ndarray  # d p_i / d s_column
    max_entry: float  # the largest |d p_i / d s_j|
    row_sums: np.ndarray  # Σ_j d p_i / d s_j (0 up to rounding)

    @property
    def too_large(self) -> bool:
        """More than JACOBIAN_LIMIT scores: no full Jacobian was built."""
        return self.jacobian is None


def max_abs_entry(probs: np.ndarray) -> np.ndarray:
    """max |diag(p) - p pᵀ| over the last axis, without the n x n matrix.

    The entries are p_i (1 - p_i) on the diagonal and -p_i p_j off it, so the
    largest is the larger of the diagonal's maximum and the product of the two
    largest p (rounding is monotone, so this is the matrix's maximum bit for bit).
    """
    p = np.asarray(probs, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        diag = np.max(np.abs(p * (1 - p)), axis=-1)
        if p.shape[-1] < 2:
            return diag
        top = np.sort(p, axis=-1)[..., -2:]
        off = np.abs(top[..., 0] * top[..., 1])
        both = np.maximum(diag, off)
        return np.where(np.isnan(p).any(axis=-1), np.nan, both)


def jacobian_row_sums(probs: np.ndarray, t: float) -> np.ndarray:
    """Row sums of softmax_jacobian(p) / t, built a block of rows at a time (memory O(n))."""
    n = len(probs)
    out = np.empty(n)
    for start in range(0, n, _ROW_BLOCK):
        rows = np.arange(start, min(start + _ROW_BLOCK, n))
        with np.errstate(all="ignore"):
            block = -(probs[rows, None] * probs[None, :])
            block[np.arange(len(rows)), rows] = probs[rows] * (1 - probs[rows])
            out[rows] = (block / t).sum(axis=1)
    return out


@evented
@dataclass
class GradientsModel(ViewModel):
    name: ClassVar[str] = "gradients"
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    label_smoothing: float = param(0.0, minimum=0.0, maximum=0.5)
    # 1-based, as the tokens are numbered on screen and on the command line
    target: int = param(1, minimum=1, maximum=9999, integer=True)
    column: int = param(1, minimum=1, maximum=9999, integer=True)
    convention: str = choice("others", CONVENTIONS)

    def __post_init__(self) -> None:
        self._curve_key: bytes | None = None
        self._curve: np.ndarray | None = None

    def saturation_curve(self, x: np.ndarray) -> np.ndarray:
        """max |Jacobian entry| of softmax(x / T) over CURVE_T; cached on the scores."""
        key = x.tobytes()
        if key != self._curve_key:
            probs = compute.softmax_over_temperatures(x, CURVE_T)  # 241 x n, never 241 x n x n
            with np.errstate(invalid="ignore"):
                self._curve = max_abs_entry(probs) / CURVE_T
            self._curve_key = key
        return self._curve

    def result(self, scores: ScoreRow) -> GradientsResult:
        x = scores.values
        n = len(x)
        t = self.temperature
        probs = compute.softmax(x, temperature=t)
        target = min(self.target, n) - 1
        logits = x / t
        kw = {"label_smoothing": self.label_smoothing, "convention": self.convention}
        column = min(self.column, n) - 1
        if n <= JACOBIAN_LIMIT:
            jacobian = compute.softmax_jacobian(probs) / t
            column_values = jacobian[:, column]
            max_entry = float(np.max(np.abs(jacobian)))
            row_sums = jacobian.sum(axis=1)
        else:
            jacobian = None
            with np.errstate(all="ignore"):
                column_values = -(probs * probs[column]) / t
                column_values[column] = probs[column] * (1 - probs[column]) / t
            max_entry = float(max_abs_entry(probs) / t)
            row_sums = jacobian_row_sums(probs, t)
        return GradientsResult(
            labels=scores.labels,
            probs=probs,
            jacobian=jacobian,
            column=column,
            target=target,
            smoothed=compute.smoothed_target(n, target, **kw),
            grad=compute.cross_entropy_grad(logits, target, **kw),
            loss=float(compute.cross_entropy(logits, target, **kw)),
            curve_t=CURVE_T,
            curve_max=self.saturation_curve(x),
            column_values=column_values,
            max_entry=max_entry,
            row_sums=row_sums,
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        jacobian = {} if r.too_large else {"jacobian": ExportArray(r.jacobian, r.labels, r.labels)}
        return {
            **jacobian,
            "column": ExportArray(r.column_values, (f"d alpha / d s[{r.labels[r.column]}]",), r.labels),
            "cross_entropy": ExportArray(np.column_stack([r.probs, r.smoothed, r.grad]), ("p", "y", "p - y"), r.labels),
            "saturation": ExportArray(np.column_stack([r.curve_t, r.curve_max]), ("T", "max_abs_jacobian")),
            "summary": ExportArray(
                np.array([[self.temperature, r.loss, self.label_smoothing, r.target + 1, r.column + 1, r.max_entry]]),
                ("temperature", "cross_entropy", "label_smoothing", "target", "column", "max_abs_jacobian"),
            ),
        }
