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


@dataclass(frozen=True)
class GradientsResult:
    labels: tuple[str, ...]
    probs: np.ndarray
    jacobian: np.ndarray  # d p_i / d s_j
    column: int  # 0-based index of the column shown as bars (clamped to the row)
    target: int  # 0-based index of the target class (clamped to the row)
    smoothed: np.ndarray  # the target distribution y
    grad: np.ndarray  # p - y
    loss: float
    curve_t: np.ndarray
    curve_max: np.ndarray  # the largest |d p_i / d s_j| at each temperature

    @property
    def column_values(self) -> np.ndarray:
        return self.jacobian[:, self.column]

    @property
    def max_entry(self) -> float:
        return float(np.max(np.abs(self.jacobian)))


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
            probs = compute.softmax_over_temperatures(x, CURVE_T)
            jac = compute.softmax_jacobian(probs) / CURVE_T[:, None, None]
            with np.errstate(invalid="ignore"):
                self._curve = np.abs(jac).max(axis=(1, 2))
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
        return GradientsResult(
            labels=scores.labels,
            probs=probs,
            jacobian=compute.softmax_jacobian(probs) / t,
            column=min(self.column, n) - 1,
            target=target,
            smoothed=compute.smoothed_target(n, target, **kw),
            grad=compute.cross_entropy_grad(logits, target, **kw),
            loss=float(compute.cross_entropy(logits, target, **kw)),
            curve_t=CURVE_T,
            curve_max=self.saturation_curve(x),
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        return {
            "jacobian": ExportArray(r.jacobian, r.labels, r.labels),
            "column": ExportArray(r.column_values, (f"d alpha / d s[{r.labels[r.column]}]",), r.labels),
            "cross_entropy": ExportArray(np.column_stack([r.probs, r.smoothed, r.grad]), ("p", "y", "p - y"), r.labels),
            "saturation": ExportArray(np.column_stack([r.curve_t, r.curve_max]), ("T", "max_abs_jacobian")),
            "summary": ExportArray(
                np.array([[self.temperature, r.loss, self.label_smoothing, r.target + 1, r.column + 1, r.max_entry]]),
                ("temperature", "cross_entropy", "label_smoothing", "target", "column", "max_abs_jacobian"),
            ),
        }
