"""The Variants view's model: its parameters, what each tab computes (cached), the export."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

from gui.model.base import ExportArray, ViewModel, choice, param
from gui.model.scores import ScoreRow
from gui.model.variants import attention as att
from gui.model.variants import rows
from gui.model.variants.export import export_arrays

ROW_SOURCES = ("scores", "random")
SWITCH = ("off", "on")
#: The parameters each tab's controls show (the seed shows on every tab: all draw from it).
TAB_PARAMS: dict[str, tuple[str, ...]] = {
    "row": ("row", "row_n", "needle", "scale", "softmax_one_on", "sink_on", "sink_logit", "sink_tokens_on",
            "sink_tokens", "window", "softcap_on", "cap", "ssmax_on", "ssmax_s", "logn_on", "logn_length"),
    "length": ("row", "row_n", "needle", "scale", "ssmax_s", "logn_length"),
    "softcap": ("row", "row_n", "needle", "scale", "cap"),
    "alibi": ("alibi_heads", "alibi_head"),
    "sigmoid": ("sigmoid_n",),
    "qk_norm": ("qk_d", "qk_scale", "qk_gain"),
}
#: The row's source: on the row tabs, in a box of their own.
SOURCE_PARAMS = ("row", "row_n", "needle", "scale")
#: Tabs that read the row (and show the shared score table when the row is the shared one).
ROW_TABS = ("row", "length", "softcap")
#: Parameters used only by one variant of the row tab: greyed while it is switched off.
VARIANT_PARAMS = {"sink_logit": "sink_on", "sink_tokens": "sink_tokens_on", "window": "sink_tokens_on"}


@evented
@dataclass
class VariantsModel(ViewModel):
    name: ClassVar[str] = "variants"
    TAB_NAMES: ClassVar[tuple[str, ...]] = tuple(TAB_PARAMS)
    row: str = choice("scores", ROW_SOURCES)
    row_n: int = param(4096, minimum=8, maximum=rows.MAX_N, log=True, integer=True)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True, control="spin")
    needle: float = param(6.0, minimum=0.0, maximum=20.0)
    scale: float = param(1.0, minimum=0.1, maximum=100.0, log=True)
    softmax_one_on: str = choice("on", SWITCH)
    sink_on: str = choice("on", SWITCH)
    sink_logit: float = param(1.0, minimum=-10.0, maximum=10.0)
    sink_tokens_on: str = choice("off", SWITCH)
    sink_tokens: int = param(1, minimum=0, maximum=16, integer=True)
    window: int = param(2, minimum=1, maximum=rows.MAX_N, log=True, integer=True)
    softcap_on: str = choice("on", SWITCH)
    cap: float = param(30.0, minimum=1.0, maximum=100.0)
    ssmax_on: str = choice("on", SWITCH)
    ssmax_s: float = param(0.5, minimum=0.1, maximum=2.0)
    logn_on: str = choice("off", SWITCH)
    logn_length: int = param(512, minimum=8, maximum=rows.MAX_N, log=True, integer=True)
    alibi_heads: int = param(8, minimum=1, maximum=16, integer=True)
    alibi_head: int = param(1, minimum=1, maximum=16, integer=True)
    sigmoid_n: int = param(32, minimum=4, maximum=256, log=True, integer=True)
    qk_d: int = param(64, minimum=4, maximum=512, log=True, integer=True)
    qk_scale: float = param(1.0, minimum=0.1, maximum=100.0, log=True)
    qk_gain: float = param(1.0, minimum=0.1, maximum=10.0, log=True)

    def __post_init__(self) -> None:
        self._cache: dict[str, tuple[tuple, Any]] = {}

    # -- inputs ---------------------------------------------------------------------------------
    def applies(self, name: str) -> bool:
        """The synthetic row's length only for it; a variant's own knobs only while it is on."""
        if name == "row_n":
            return self.row == "random"
        if name in VARIANT_PARAMS:
            return getattr(self, VARIANT_PARAMS[name]) == "on"
        return True

    def bounds(self, name: str) -> tuple[float, float]:
        if name == "alibi_head":
            return 1, self.alibi_heads
        return super().bounds(name)

    def value_in_use(self, name: str) -> Any:
        if name == "alibi_head":
            return min(self.alibi_head, self.alibi_heads)
        return super().value_in_use(name)

    @staticmethod
    def tab_params(tab: str) -> tuple[str, ...]:
        return TAB_PARAMS[tab]

    def knobs(self) -> rows.VariantKnobs:
        return rows.VariantKnobs(self.cap, self.sink_logit, self.sink_tokens, self.window, self.ssmax_s,
                                 self.logn_length)

    def selected(self) -> tuple[str, ...]:
        """softmax and the variants switched on, in the bars' order."""
        return tuple(m for m in rows.METHODS if m == "softmax" or getattr(self, rows.SWITCHES[m]) == "on")

    def row_values(self, scores: ScoreRow) -> tuple[np.ndarray, tuple[str, ...]]:
        """The row before the scale: the shared scores, or the needle among the seed's noise."""
        if self.row == "scores":
            return scores.values, scores.labels
        return rows.synthetic_row(self.row_n, self.needle, self.seed), tuple(str(i + 1) for i in range(self.row_n))

    def _cached(self, name: str, key: tuple, make) -> Any:
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = make()
        self._cache[name] = (key, value)
        return value

    # -- the tabs' results ---------------------------------------------------------------------
    def _row_key(self, scores: ScoreRow) -> tuple:
        source = (scores.values.tobytes(), scores.labels) if self.row == "scores" else (
            self.row_n, self.needle, self.seed)
        return (self.row, source, self.scale)

    def row_result(self, scores: ScoreRow) -> rows.RowResult:
        def make() -> rows.RowResult:
            values, labels = self.row_values(scores)
            return rows.row_result(values, labels, self.knobs(), self.scale, self.selected())

        return self._cached("row", (self._row_key(scores), self.knobs(), self.selected()), make)

    def result(self, scores: ScoreRow) -> rows.RowResult:
        """The row tab's result (the view's main result)."""
        return self.row_result(scores)

    def current_n(self, scores: ScoreRow) -> int:
        return len(scores) if self.row == "scores" else self.row_n

    def length_result(self) -> rows.LengthResult:
        key = (self.needle, self.seed, self.scale, self.ssmax_s, self.logn_length)
        return self._cached("length", key, lambda: rows.length_result(*key))

    def softcap_result(self, scores: ScoreRow) -> rows.SoftcapResult:
        return self._cached("softcap", (self._row_key(scores), self.cap),
                            lambda: rows.softcap_result(self.row_result(scores).logits, self.cap))

    def alibi_result(self) -> att.AlibiResult:
        key = (self.alibi_heads, self.alibi_head, self.seed)
        return self._cached("alibi", key, lambda: att.alibi_result(*key))

    def sigmoid_result(self) -> att.SigmoidResult:
        curves = self._cached("sigmoid_curves", (self.seed,), lambda: att.sigmoid_curves(self.seed))
        return self._cached("sigmoid", (self.sigmoid_n, self.seed),
                            lambda: att.sigmoid_result(self.sigmoid_n, self.seed, curves))

    def qk_result(self) -> att.QkResult:
        curves = self._cached("qk_curves", (self.qk_d, self.qk_gain, self.seed),
                              lambda: att.qk_curves(self.qk_d, self.qk_gain, self.seed))
        return self._cached("qk", (self.qk_d, self.qk_scale, self.qk_gain, self.seed),
                            lambda: att.qk_result(self.qk_d, self.qk_scale, self.qk_gain, self.seed, curves))

    # -- export -----------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        return export_arrays(self, scores)
