"""The Variants view's attention tabs: ALiBi, sigmoid attention, QK-norm."""

from __future__ import annotations

import numpy as np

from gui.model.texts import tr
from gui.model.variants import AlibiResult, QkResult, SigmoidResult
from gui.widgets import unchanged
from gui.widgets.bar_chart import BarChart
from gui.widgets.curves import Curves
from gui.widgets.heatmap import Heatmap


def queries(n: int) -> list[str]:
    return [f"q{i + 1}" for i in range(n)]


def keys(n: int) -> list[str]:
    return [f"k{j + 1}" for j in range(n)]


class Matrix(Heatmap):
    """A square matrix of one head: weights in 0..1 (viridis) or a bias (diverging around 0)."""

    def __init__(self, title_key: str, *, weights: bool = True):
        self.title_key = title_key
        super().__init__(tr(title_key), diverging=not weights, value_name=tr(f"{title_key}.value"))

    def show_matrix(self, m: np.ndarray, **title) -> None:
        n = m.shape[0]
        self.set_matrix(m, queries(n), keys(m.shape[1]))
        if title:
            self.set_title(tr(self.title_key, **title))


class SlopeBars(BarChart):
    """ALiBi's slope of every head."""

    def __init__(self):
        super().__init__(tr("variants.alibi.slopes.title"), [(tr("variants.alibi.slope"), "accent")],
                         y_label=tr("variants.alibi.slope"), percent=False, value_name="m")

    def show_result(self, r: AlibiResult) -> None:
        with self.batched():  # one label layout for the range and the bars
            self.set_y_range(0.0, float(r.slopes.max()) * 1.15)
            self.set_data([str(h + 1) for h in range(r.heads)], [r.slopes])


class AlibiPanels:
    """The bias of the head shown, every head's slope, and the weights of random q, k without and with it."""

    def __init__(self):
        self.bias = Matrix("variants.alibi.bias.title", weights=False)
        self.slopes = SlopeBars()
        self.plain = Matrix("variants.alibi.plain.title")
        self.biased = Matrix("variants.alibi.biased.title")

    def plots(self) -> dict[str, object]:
        return {"alibi_bias": self.bias, "alibi_slopes": self.slopes, "alibi_plain": self.plain,
                "alibi_biased": self.biased}

    def show_result(self, r: AlibiResult) -> None:
        self.bias.show_matrix(r.head_bias, head=r.head)
        self.slopes.show_result(r)
        self.plain.show_matrix(r.plain)
        self.biased.show_matrix(r.biased, head=r.head)


class RowSums(Curves):
    """Each query's row sum: free under sigmoid attention, exactly 1 under softmax."""

    def __init__(self):
        super().__init__(tr("variants.sigmoid.sums.title"),
                         [(tr("variants.sigmoid.sigmoid"), 0, "solid"), (tr("variants.sigmoid.softmax"), "secondary",
                                                                          "dash")],
                         x_label=tr("variants.sigmoid.query"), y_label=tr("variants.sigmoid.sum"),
                         x_name=tr("variants.sigmoid.query"), y_name="Σ")

    def show_result(self, r: SigmoidResult) -> None:
        q = np.arange(1, r.n + 1, dtype=float)
        self.set_curve(0, q, r.sigmoid_sums)
        self.set_curve(1, q, r.softmax_sums)
        self.getPlotItem().setXRange(0.5, r.n + 0.5, padding=0)
        self.set_y_range(0.0, max(1.2, float(r.sigmoid_sums.max()) * 1.1))


class SumCurve(Curves):
    """The mean row sum against n: with b = -log n it stays near 1; without a bias it grows like n/2."""

    def __init__(self):
        super().__init__(tr("variants.sigmoid.curve.title"),
                         [(tr("variants.sigmoid.with_bias"), 0, "solid"), (tr("variants.sigmoid.no_bias"), 4, "dot"),
                          (tr("variants.sigmoid.softmax"), "secondary", "dash")],
                         x_label=tr("variants.sigmoid.n"), y_label=tr("variants.sigmoid.mean_sum"), log_x=True,
                         log_y=True, x_range=(4, 4096), x_name="n", y_name="Σ")

    def show_result(self, r: SigmoidResult) -> None:
        n = r.curve_n.astype(float)
        self.set_curve(0, n, r.curve_sum)
        self.set_curve(1, n, r.curve_sum_b0)
        self.set_curve(2, n, np.ones_like(n))
        self.set_y_range(0.1, float(r.curve_sum_b0.max()) * 1.5)
        self.set_now(r.n)


class SigmoidPanels:
    def __init__(self):
        self.sigmoid = Matrix("variants.sigmoid.map.title")
        self.softmax = Matrix("variants.sigmoid.softmax_map.title")
        self.sums = RowSums()
        self.curve = SumCurve()

    def plots(self) -> dict[str, object]:
        return {"sigmoid_weights": self.sigmoid, "sigmoid_softmax": self.softmax, "sigmoid_sums": self.sums,
                "sigmoid_curve": self.curve}

    def show_result(self, r: SigmoidResult) -> None:
        self.sigmoid.show_matrix(r.sigmoid, n=r.n)
        self.softmax.show_matrix(r.softmax)
        self.sums.show_result(r)
        self.curve.show_result(r)


class Histogram(Curves):
    """The logits' histogram without and with QK-norm, its bound ±√d·g² marked."""

    def __init__(self):
        super().__init__(tr("variants.qk.hist.title"),
                         [(tr("variants.qk.plain"), "secondary", "solid"), (tr("variants.qk.normed"), 0, "solid")],
                         x_label=tr("variants.qk.logit"), y_label=tr("variants.qk.count"),
                         x_name=tr("variants.qk.logit"), y_name=tr("variants.qk.count"))
        self.bounds = [self.add_line(tr("variants.qk.bound_line"), angle=90, position=0.9), self.add_line(angle=90)]
        self._view: tuple | None = None  # the x and y ranges asked for last (unpadded)

    def show_result(self, r: QkResult) -> None:
        unchanged.set_curve(self.curves[0], r.edges, r.plain_counts.astype(float), stepMode="center")
        unchanged.set_curve(self.curves[1], r.edges, r.normed_counts.astype(float), stepMode="center")
        for line, sign in zip(self.bounds, (-1, 1)):
            self.set_line(line, sign * r.bound)
        top = float(max(r.plain_counts.max(), r.normed_counts.max()))
        y = (0.0, top * 1.1)
        # the bound stays in sight while it is near the data (far off, it would squash the histogram)
        top = float(r.edges[-1])
        reach = r.bound if r.bound <= 3 * top else top
        x = (-max(top, reach), max(top, reach))
        if (x, y) != self._view:  # both axes in one move (each move re-lays the axes out), none if the same
            self._view = (x, y)
            self.getPlotItem().setRange(xRange=padded(x, 0.03), yRange=padded(y, 0.02), padding=0)


def padded(span: tuple[float, float], padding: float) -> tuple[float, float]:
    """``span`` widened by ``padding`` of its length each side, as pyqtgraph's setRange pads it."""
    lo, hi = min(span), max(span)
    p = (hi - lo) * padding
    return lo - p, hi + p


class ScaleCurve(Curves):
    """The largest |logit| (log-log) or the mean attention entropy against the input scale."""

    def __init__(self, quantity: str):
        self.quantity = quantity
        series = [(tr("variants.qk.plain"), "secondary", "solid"), (tr("variants.qk.normed"), 0, "solid")]
        series.append((tr(f"variants.qk.{quantity}.limit"), 4, "dot"))
        super().__init__(tr(f"variants.qk.{quantity}.title"), series, x_label=tr("variants.qk.scale"),
                         y_label=tr(f"variants.qk.{quantity}.y"), log_x=True, log_y=quantity == "max",
                         x_range=(0.1, 100.0), x_name=tr("variants.qk.scale"), y_name=tr(f"variants.qk.{quantity}.y"))

    def show_result(self, r: QkResult) -> None:
        if self.quantity == "max":
            self.set_curve(0, r.scales, r.plain_max)
            self.set_curve(1, r.scales, r.normed_max)
            self.set_curve(2, r.scales, np.full_like(r.scales, r.bound))
            lo = max(float(min(r.plain_max.min(), r.normed_max.min())) * 0.5, 1e-6)
            self.set_y_range(lo, float(max(r.plain_max.max(), r.bound)) * 2)
        else:
            limit = np.log(r.plain.shape[1])
            self.set_curve(0, r.scales, r.plain_entropy)
            self.set_curve(1, r.scales, r.normed_entropy)
            self.set_curve(2, r.scales, np.full_like(r.scales, limit))
            self.set_y_range(0.0, float(limit) * 1.08)
        self.set_now(r.scale)


class QkPanels:
    def __init__(self):
        self.hist = Histogram()
        self.max = ScaleCurve("max")
        self.entropy = ScaleCurve("entropy")

    def plots(self) -> dict[str, object]:
        return {"qk_histogram": self.hist, "qk_max": self.max, "qk_entropy": self.entropy}

    def show_result(self, r: QkResult) -> None:
        self.hist.show_result(r)
        self.max.show_result(r)
        self.entropy.show_result(r)
