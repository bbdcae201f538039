"""The Normalizers view's model: one row of scores through seven ways of making weights.

Every property in the table is measured on the current scores, not typed
in: the weights are checked for sign and sum, recomputed after a shift of
every score, compared pairwise with the scores' order, and differentiated
numerically from both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, param
from gui.model.scores import ScoreRow
from gui.model.texts import tr

METHODS = ("softmax", "linear", "shifted_linear", "hardmax", "sparsemax", "entmax", "sigmoid")
PROPERTIES = ("nonnegative", "sums_to_one", "shift_invariant", "order_kept", "all_positive", "differentiable")

SHIFT = 1.0  # the constant added to every score to test shift invariance
SUM_TOL = 1e-6  # entmax's bisection meets the sum to 1e-6
#: At most this many scores are stepped up and down for the "differentiable" column: the
#: probes are (2k + 1) rows of n, so above the limit a sample of k scores is stepped
#: (the view says so) and the work grows with n, never with n².
PROBE_LIMIT = 128


def _order_kept(x: np.ndarray, w: np.ndarray) -> bool:
    """A higher score always gets a strictly higher weight (sorted, so n log n, not n²).

    Along the scores in rising order, every weight must exceed the largest
    weight of all strictly lower scores.
    """
    order = np.argsort(x, kind="stable")
    xs, ws = x[order], w[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])  # first index of each distinct score
    if len(starts) < 2:
        return True
    group_max = np.maximum.reduceat(ws, starts)
    group_min = np.minimum.reduceat(ws, starts)
    below = np.maximum.accumulate(group_max)[:-1]  # the largest weight under each next group
    return bool(np.all(group_min[1:] > below))


def probed_indices(x: np.ndarray) -> np.ndarray:
    """The scores stepped for the difference quotients: all of them up to PROBE_LIMIT, else
    the PROBE_LIMIT/2 largest (where sparse methods have their support and their kinks) and a
    strided sample of the rest, PROBE_LIMIT in all."""
    n = len(x)
    if n <= PROBE_LIMIT:
        return np.arange(n)
    top = np.argsort(-np.nan_to_num(x, nan=-np.inf), kind="stable")[: PROBE_LIMIT // 2]
    rest = np.setdiff1d(np.arange(n), top)
    spread = rest[np.linspace(0, len(rest) - 1, PROBE_LIMIT - len(top)).round().astype(np.intp)]
    return np.union1d(top, spread)


def _probes(x: np.ndarray) -> tuple[np.ndarray, float, int]:
    """The rows every property needs, so each method runs once on one batch.

    Row 0 is x shifted by SHIFT; rows 1..k step score j up by h, rows
    k+1..2k step it down by h, for the k scores of :func:`probed_indices`.
    """
    n = len(x)
    h = 1e-5 * max(1.0, float(np.max(np.abs(x))))
    picked = probed_indices(x)
    steps = np.zeros((len(picked), n))
    steps[np.arange(len(picked)), picked] = h
    return np.vstack([x + SHIFT, x + steps, x - steps]), h, len(picked)


def _differentiable(forward_rows: np.ndarray, backward_rows: np.ndarray, w: np.ndarray, h: float) -> bool:
    """One-sided difference quotients agree (no kink here) and are not all zero."""
    forward = (forward_rows - w) / h
    backward = (w - backward_rows) / h
    if not (np.all(np.isfinite(forward)) and np.all(np.isfinite(backward))):
        return False
    if not np.allclose(forward, backward, rtol=1e-2, atol=1e-3):
        return False
    return bool(np.any(np.abs(forward) > 1e-6))


@dataclass(frozen=True)
class NormalizersResult:
    labels: tuple[str, ...]
    weights: np.ndarray  # (methods, n)
    properties: np.ndarray  # (methods, properties) of bool
    #: The scores are finite and sum to exactly 0: s/Σs divides by zero (its NaN reads "÷0").
    zero_sum: bool = False
    #: How many scores the "differentiable" column stepped (all n up to PROBE_LIMIT).
    probed: int = 0

    @property
    def sampled(self) -> bool:
        """More than PROBE_LIMIT scores: differentiability was measured on a strided sample."""
        return self.probed < len(self.labels)

    def weights_of(self, method: str) -> np.ndarray:
        return self.weights[METHODS.index(method)]


@evented
@dataclass
class NormalizersModel(ViewModel):
    name: ClassVar[str] = "normalizers"
    alpha: float = param(1.5, minimum=1.0, maximum=3.0)
    #: The methods the plot draws and the export holds, in METHODS order (view state, saved in sessions).
    shown: tuple[str, ...] = METHODS

    # -- which methods are shown ------------------------------------------------------
    def set_shown(self, methods: Iterable[str]) -> None:
        """Show exactly ``methods`` (any order, at least one, each one of METHODS)."""
        wanted = set(methods)
        unknown = sorted(wanted - set(METHODS))
        if unknown:
            raise ValueError(tr("normalizers.error.unknown", names=", ".join(unknown), methods=", ".join(METHODS)))
        if not wanted:
            raise ValueError(tr("normalizers.error.none_shown"))
        shown = tuple(m for m in METHODS if m in wanted)
        if shown != self.shown:
            self.shown = shown

    def show_method(self, method: str, on: bool) -> None:
        """Show or hide one method (hiding the last shown one raises ValueError)."""
        self.set_shown(set(self.shown) | {method} if on else set(self.shown) - {method})

    def toggle(self, method: str) -> None:
        self.show_method(method, method not in self.shown)

    def extra_state(self) -> dict[str, Any]:
        return {} if self.shown == METHODS else {"shown": list(self.shown)}

    def check_extra_state(self, state: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(state) - {"shown"})
        if unknown:
            raise ValueError(tr("normalizers.state.unknown", names=", ".join(unknown)))
        shown = state.get("shown", list(METHODS))
        if not isinstance(shown, list) or not all(isinstance(m, str) for m in shown):
            raise ValueError(tr("normalizers.state.not_list"))
        if not shown or set(shown) - set(METHODS):
            raise ValueError(tr("normalizers.state.bad_names", methods=", ".join(METHODS)))
        return {"shown": tuple(m for m in METHODS if m in shown)}

    def apply_extra_state(self, checked: dict[str, Any]) -> None:
        self.set_shown(checked.get("shown", METHODS))

    def reset(self) -> None:
        super().reset()
        self.shown = METHODS

    def functions(self) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
        alpha = self.alpha
        return {
            "softmax": compute.softmax,
            "linear": compute.linear_normalize,
            "shifted_linear": compute.shifted_linear_normalize,
            "hardmax": compute.hardmax,
            "sparsemax": compute.sparsemax,
            "entmax": lambda x: compute.entmax(x, alpha),
            "sigmoid": compute.sigmoid,
        }

    def properties_of(self, f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, w: np.ndarray) -> list[bool]:
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(w))):
            return [False] * len(PROPERTIES)
        rows, h, n = _probes(x)
        return self._measured(x, w, f(rows), h, n)  # every method works row by row along the last axis

    def weights_and_properties(self, f: Callable[[np.ndarray], np.ndarray], x: np.ndarray
                               ) -> tuple[np.ndarray, list[bool]]:
        """``f(x)`` and its measured properties (:meth:`properties_of`), from one call of ``f``.

        ``f`` runs once on x stacked over its probe rows: every method works
        row by row along the last axis, so row 0 is bit for bit ``f(x)`` (an
        entmax bisection runs once, not twice).
        """
        if x.dtype != np.float64 or not np.all(np.isfinite(x)):
            w = np.asarray(f(x), dtype=np.float64)
            return w, self.properties_of(f, x, w)
        rows, h, n = _probes(x)
        out = f(np.vstack([x, rows]))
        w = np.array(out[0], dtype=np.float64)
        if not np.all(np.isfinite(w)):
            return w, [False] * len(PROPERTIES)
        return w, self._measured(x, w, out[1:], h, n)

    @staticmethod
    def _measured(x: np.ndarray, w: np.ndarray, out: np.ndarray, h: float, n: int) -> list[bool]:
        """The properties of the weights ``w`` of x, given f of x's probe rows (``out``, of :func:`_probes`)."""
        shifted = out[0]
        return [
            bool(np.all(w >= 0)),
            bool(abs(w.sum() - 1.0) <= SUM_TOL),
            bool(np.all(np.isfinite(shifted)) and np.allclose(shifted, w, rtol=1e-6, atol=1e-9)),
            _order_kept(x, w),
            bool(np.all(w > 0)),
            _differentiable(out[1 : n + 1], out[n + 1 :], w, h),
        ]

    def result(self, scores: ScoreRow) -> NormalizersResult:
        x = scores.values
        weights, props = [], []
        # only entmax depends on α: the other methods' weights and measured properties are kept per row
        key = (x.tobytes(), x.shape)
        fixed = getattr(self, "_fixed", None)
        if fixed is None or fixed[0] != key:
            fixed = self._fixed = (key, {})
        for name, f in self.functions().items():
            if name != "entmax" and name in fixed[1]:
                w, p = fixed[1][name]
            else:
                w, p = self.weights_and_properties(f, x)
                if name != "entmax":
                    fixed[1][name] = (w, p)
            weights.append(w)
            props.append(p)
        zero_sum = bool(np.all(np.isfinite(x)) and x.sum() == 0.0)
        probed = len(probed_indices(x))
        return NormalizersResult(scores.labels, np.array(weights), np.array(props, dtype=bool), zero_sum, probed)

    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        """The shown methods' weights (tokens down, methods across) and their measured properties."""
        r = self.result(scores)
        rows = [METHODS.index(m) for m in self.shown]
        return {
            "weights": ExportArray(r.weights[rows].T.copy(), self.shown, r.labels),
            "properties": ExportArray(r.properties[rows].astype(np.float64), PROPERTIES, self.shown),
        }
