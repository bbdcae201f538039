"""The Calculator view's model: one row of scores through softmax, step by step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, param
from gui.model.scores import ScoreRow

STEP_COLUMNS = ("s", "s/T", "e^(s/T)", "s/T - max", "e^(s/T - max)", "alpha", "log alpha")


@dataclass(frozen=True)
class CalculatorResult:
    labels: tuple[str, ...]
    steps: compute.SoftmaxSteps
    raw_exps: np.ndarray  # e^(s/T) without the shift: overflows where real code would
    entropy: float
    perplexity: float
    argmax: int | None

    @property
    def max_weight(self) -> float:
        return float(self.steps.probs[self.argmax]) if self.argmax is not None else float("nan")

    def table(self) -> np.ndarray:
        s = self.steps
        return np.column_stack(
            [s.scores, s.scaled, self.raw_exps, s.shifted, s.exps, s.probs, s.log_probs]
        )


@evented
@dataclass
class CalculatorModel(ViewModel):
    name: ClassVar[str] = "calculator"
    temperature: float = param(1.0, minimum=0.01, maximum=100.0, log=True)

    def result(self, scores: ScoreRow) -> CalculatorResult:
        steps = compute.softmax_steps(scores.values, temperature=self.temperature)
        with np.errstate(over="ignore"):
            raw = np.exp(steps.scaled)
        probs = steps.probs
        argmax = None if np.isnan(probs).any() else int(np.argmax(probs))
        return CalculatorResult(
            labels=scores.labels,
            steps=steps,
            raw_exps=raw,
            entropy=float(compute.entropy(probs)),
            perplexity=float(compute.perplexity(probs)),
            argmax=argmax,
        )

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        r = self.result(scores)
        return {
            "steps": ExportArray(r.table(), STEP_COLUMNS, r.labels),
            "probs": ExportArray(r.steps.probs, ("alpha",), r.labels),
            "summary": ExportArray(
                np.array([[self.temperature, r.entropy, r.perplexity, r.max_weight]]),
                ("temperature", "entropy_nats", "perplexity", "max_weight"),
            ),
        }
