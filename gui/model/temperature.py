"""The Temperature view's model: the same scores at temperature T and at T = 1."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, param
from gui.model.scores import ScoreRow

#: Temperatures at which the entropy curve is sampled (log-spaced, 0.01..100).
CURVE_T = np.logspace(-2.0, 2.0, 241)


@dataclass(frozen=True)
class TemperatureResult:
    labels: tuple[str, ...]
    logits: np.ndarray  # scale * scores
    probs: np.ndarray  # softmax(logits / T)
    probs_t1: np.ndarray  # softmax(logits)
    entropy: float
    curve_t: np.ndarray
    curve_entropy: np.ndarray
    entropy_cold: float  # limit T -> 0: ln(number of tied maxima); 0 for a unique max
    entropy_hot: float  # limit T -> infinity: ln(n)
    gap: float | None  # scale * (top - runner-up)
    ratio: float | None  # p_top / p_runner-up as computed
    ratio_formula: float | None  # e^(gap / T)


@evented
@dataclass
class TemperatureModel(ViewModel):
    name: ClassVar[str] = "temperature"
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)
    scale: float = param(1.0, minimum=0.1, maximum=10.0, log=True)

    def __post_init__(self) -> None:
        self._curve_key: tuple | None = None
        self._curve: np.ndarray | None = None

    def entropy_curve(self, logits: np.ndarray) -> np.ndarray:
        """Entropy of softmax(logits, temperature=T) for every T in CURVE_T.

        Cached, since dragging T does not change it.  One 2-D pass
        (:func:`compute.softmax_over_temperatures`), the same bits as one
        softmax call per T.
        """
        key = logits.tobytes()
        if key != self._curve_key:
            self._curve = compute.entropy(compute.softmax_over_temperatures(logits, CURVE_T))
            self._curve_key = key
        return self._curve

    def result(self, scores: ScoreRow) -> TemperatureResult:
        logits = scores.values * self.scale
        probs = compute.softmax(logits, temperature=self.temperature)
        finite = bool(np.all(np.isfinite(logits)))
        top = scores.top_two()
        gap = ratio = formula = None
        if top is not None:
            gap = float(logits[top[0]] - logits[top[1]])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = float(probs[top[0]] / probs[top[1]])
            with np.errstate(over="ignore"):
                formula = float(np.exp(gap / self.temperature))
        n_max = int(np.sum(logits == logits.max())) if finite else 0
        return TemperatureResult(
            labels=scores.labels,
            logits=logits,
            probs=probs,
            probs_t1=compute.softmax(logits),
            entropy=float(compute.entropy(probs)),
            curve_t=CURVE_T,
            curve_entropy=self.entropy_curve(logits),
            entropy_cold=math.log(n_max) if finite else float("nan"),
            entropy_hot=math.log(len(logits)),
            gap=gap,
            ratio=ratio,
            ratio_formula=formula,
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        nan = float("nan")
        return {
            "probs": ExportArray(
                np.column_stack([r.logits, r.probs, r.probs_t1]),
                ("logit", "p_at_T", "p_at_T1"),
                r.labels,
            ),
            "entropy_curve": ExportArray(
                np.column_stack([r.curve_t, r.curve_entropy]), ("T", "entropy_nats")
            ),
            "summary": ExportArray(
                np.array(
                    [[
                        self.temperature,
                        self.scale,
                        r.entropy,
                        nan if r.gap is None else r.gap,
                        nan if r.ratio is None else r.ratio,
                        nan if r.ratio_formula is None else r.ratio_formula,
                    ]]
                ),
                ("temperature", "scale", "entropy_nats", "gap", "p1_over_p2", "exp_gap_over_T"),
            ),
        }
