"""Bar plots of the Sampling view: the top tokens before and after the knobs, and the shared bar kinds.

:class:`FitBars` are grouped bars whose y range fits the tallest bar;
:class:`StageBars` add to the hover text which knob cut the token under
the mouse (a :class:`compute.Stage`, one UI text per stage).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import Qt, Signal

from compute import Stage
from gui.model.sampling import SamplingResult
from gui.model.texts import tr
from gui.widgets.bar_chart import BarChart


def stage_text(code: int) -> str:
    """The UI text of a stage code: ``sampling.stage.kept``, ``sampling.stage.top_k``, ..."""
    return tr(f"sampling.stage.{Stage(int(code)).name.lower()}")


def _top(h: np.ndarray) -> float:
    """``float(np.nan_to_num(h).max())`` (NaN as 0, ±inf as the largest finite floats), the finite case quicker."""
    h = np.asarray(h)
    return float(h.max()) if np.isfinite(h).all() else float(np.nan_to_num(h).max())


class FitBars(BarChart):
    """Grouped bars (without value labels unless asked for); the y range fits the tallest bar."""

    def __init__(self, title: str, series, **kwargs):
        kwargs.setdefault("value_labels", False)
        super().__init__(title, series, **kwargs)

    def show_bars(self, labels: Sequence[str], heights: Sequence[np.ndarray]) -> None:
        top = max((_top(h) for h in heights if np.size(h)), default=1.0)
        with self.batched():  # one label layout and one range move for both
            self.set_data(labels, heights)
            self.set_y_range(0.0, top * 1.15 if top > 0 else 1.0)


class StageBars(FitBars):
    """Bars over tokens; the hover text says which knob cut the token (or that it was kept)."""

    def __init__(self, title: str, series, **kwargs):
        self.stages: np.ndarray = np.zeros(0, dtype=np.int8)
        super().__init__(title, series, **kwargs)

    def show_stage_bars(self, labels: Sequence[str], heights: Sequence[np.ndarray], stages: np.ndarray) -> None:
        self.stages = np.asarray(stages)
        self.show_bars(labels, heights)

    def _describe_bar(self, x: float, y: float) -> str:
        text = super()._describe_bar(x, y)
        i = int(round(x))
        if text and 0 <= i < self.stages.size:
            text += " — " + stage_text(self.stages[i])
        return text


class TokenPlot(StageBars):
    """The most probable tokens: softmax(z / T) beside what is sampled from after the cuts.

    ``barClicked(i)`` fires on a left click over token ``i`` of those shown
    (the model source appends that token to the generate strip).
    """

    barClicked = Signal(int)

    def __init__(self):
        super().__init__(tr("sampling.bars.title"), [(tr("sampling.bars.before"), "secondary"),
                                                     (tr("sampling.bars.after"), "accent")],
                         y_label=tr("sampling.bars.y"), value_labels=True)
        self.scene().sigMouseClicked.connect(self._clicked)

    def _clicked(self, event) -> None:
        vb = self.getPlotItem().getViewBox()
        pos = event.scenePos()
        if event.button() != Qt.MouseButton.LeftButton or not vb.sceneBoundingRect().contains(pos):
            return
        i = int(round(vb.mapSceneToView(pos).x()))
        if 0 <= i < self.stages.size:
            self.barClicked.emit(i)

    def show_result(self, r: SamplingResult) -> None:
        ids = r.shown
        self.show_stage_bars(r.labels, [r.probs[ids], r.filtered[ids]], r.stage[ids])
