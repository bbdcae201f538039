"""The Variants view's row tabs: the row under each variant, its length, soft-capping."""

from __future__ import annotations

import numpy as np

from gui.format import fmt
from gui.model.texts import tr
from gui.model.variants import GEMMA_CAPS, LENGTH_METHODS, METHODS, LengthResult, RowResult, SoftcapResult
from gui.widgets.bar_chart import BarChart
from gui.widgets.curves import Curves

#: Each method's colour (softmax is the grey reference).
COLOURS: dict[str, str | int] = {"softmax": "secondary", "softmax_one": 0, "sink": 1, "sink_tokens": 2,
                                 "softcap": 3, "ssmax": 4, "logn": 5}


def method_name(method: str) -> str:
    return tr(f"variants.method.{method}")


def bar_range(heights: list[np.ndarray]) -> tuple[float, float]:
    """0 to a little above the tallest finite bar (weights of a long row are small; 1.12 at most)."""
    tops = [float(np.max(h[np.isfinite(h)])) for h in heights if np.isfinite(h).any()]
    top = max(tops, default=1.0)
    return -0.01 * max(top, 0.05), min(max(top * 1.12, 0.05), 1.12)


class RowBars(BarChart):
    """The row's weights under softmax and each variant switched on; each legend entry says its row sum.

    A click on a legend entry switches that variant (through the model).
    """

    def __init__(self):
        super().__init__(tr("variants.row.title"), [(method_name(m), COLOURS[m]) for m in METHODS],
                         y_label=tr("plot.probs.y"), legend_columns=4, clickable_legend=True)

    def show_result(self, r: RowResult, knobs: dict[str, str]) -> None:
        """``knobs``: the value of a knob set on another tab, by method (shown in its legend entry).

        The labels are laid out once, after every change (not after each of them)."""
        with self.batched():
            for i, m in enumerate(METHODS):
                name = (method_name(m) if m not in knobs
                        else tr("variants.row.knob", name=method_name(m), knob=knobs[m]))
                self.set_series_name(i, tr("variants.row.series", name=name, sum=fmt(r.total(m), 3)))
            self.set_shown([m in r.selected for m in METHODS])
            idx = r.shown
            heights = [r.weights[m][idx] for m in METHODS]
            self.set_y_range(*bar_range([h for h, m in zip(heights, METHODS) if m in r.selected]))
            self.set_data([r.labels[i] for i in idx], heights)
        title = "variants.row.title" if idx.size == r.n else "variants.row.title_top"
        self.set_title(tr(title, shown=idx.size, n=f"{r.n:,}"))


class LengthPlot(Curves):
    """The largest weight (or the entropy) of needle-among-noise rows against n, for softmax, SSMax, log-n."""

    def __init__(self, quantity: str):
        self.quantity = quantity
        series = [(method_name(m), COLOURS[m], "wide" if m == "softmax" else "solid") for m in LENGTH_METHODS]
        if quantity == "entropy":
            series.append((tr("variants.length.uniform"), "secondary", "dash"))
        super().__init__(tr(f"variants.length.{quantity}.title"), series, x_label=tr("variants.length.x"),
                         y_label=tr(f"variants.length.{quantity}.y"), log_x=True, x_range=(2, 65_536),
                         legend_columns=4, x_name="n", y_name=tr(f"variants.length.{quantity}.name"))

    def show_result(self, r: LengthResult, n_now: int) -> None:
        values = r.top if self.quantity == "top" else r.entropy
        for i, m in enumerate(LENGTH_METHODS):
            self.set_curve(i, r.n, values[m])
        if self.quantity == "entropy":
            self.set_curve(len(LENGTH_METHODS), r.n, r.log_n)
            self.set_y_range(0.0, float(r.log_n[-1]) * 1.05)
        else:
            self.set_y_range(0.0, 1.05)
        self.set_now(n_now)


class SoftcapCurve(Curves):
    """cap·tanh(x/cap) against x beside the identity and hard clipping, Gemma 2's caps marked."""

    def __init__(self):
        super().__init__(tr("variants.softcap.title"),
                         [(tr("variants.softcap.soft"), "accent", "solid"),
                          (tr("variants.softcap.identity"), "secondary", "dash"),
                          (tr("variants.softcap.clip"), 4, "dot")],
                         x_label=tr("variants.softcap.x"), y_label=tr("variants.softcap.y"),
                         x_range=(-150.0, 150.0), x_name="x", y_name="y")
        self.gemma = [self.add_line(tr(f"variants.softcap.gemma_{int(c)}"), position=0.02) for c in GEMMA_CAPS]
        for line, c in zip(self.gemma, GEMMA_CAPS):
            self.set_line(line, c)
        self.set_y_range(-110.0, 110.0)

    def show_result(self, r: SoftcapResult) -> None:
        self.set_curve(0, r.x, r.capped)
        self.set_curve(1, r.x, r.x)
        self.set_curve(2, r.x, r.clipped)
        self.set_now(None)


class SoftcapGrad(Curves):
    """The derivative of soft-capping beside hard clipping's (1 inside, 0 outside)."""

    def __init__(self):
        super().__init__(tr("variants.softcap_grad.title"),
                         [(tr("variants.softcap.soft"), "accent", "solid"), (tr("variants.softcap.clip"), 4, "dot")],
                         x_label=tr("variants.softcap.x"), y_label=tr("variants.softcap_grad.y"),
                         x_range=(-150.0, 150.0), x_name="x", y_name=tr("variants.softcap_grad.name"))
        self.set_y_range(-0.05, 1.1)

    def show_result(self, r: SoftcapResult) -> None:
        self.set_curve(0, r.x, r.grad)
        self.set_curve(1, r.x, r.clip_grad)


class SoftcapBars(BarChart):
    """The row's weights before and after soft-capping its scores."""

    def __init__(self):
        super().__init__(tr("variants.softcap_bars.title"),
                         [(tr("variants.softcap_bars.before"), "secondary"),
                          (tr("variants.softcap_bars.after"), COLOURS["softcap"])],
                         y_label=tr("plot.probs.y"))

    def show_result(self, r: SoftcapResult, labels: tuple[str, ...]) -> None:
        idx = r.shown
        heights = [r.before[idx], r.after[idx]]
        with self.batched():  # one label layout for the range and the bars
            self.set_y_range(*bar_range(heights))
            self.set_data([labels[i] for i in idx], heights)
        self.set_title(tr("variants.softcap_bars.title_top", cap=f"{r.cap:g}"))
