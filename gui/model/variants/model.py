"""The Variants view's model: its parameters, what each tab computes (cached), the export."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

from gui.model.base import ExportArray, ViewModel, choice, param
from gui.model.scores import ScoreRow
from gui.model.texts import tr
from gui.model.variants import attention as att
from gui.model.variants import rows
from gui.model.variants.export import export_arrays

ROW_SOURCES = ("scores", "random")
#: The parameters each tab uses (the seed's on every tab: all draw from it); the row tab's variant
#: switches and their knobs sit under its bars, the others in the control column.
TAB_PARAMS: dict[str, tuple[str, ...]] = {
    "row": ("row", "row_n", "needle", "scale", "sink_logit", "sink_tokens", "window"),
    "length": ("row", "row_n", "needle", "scale", "ssmax_s", "logn_length"),
    "softcap": ("row", "row_n", "needle", "scale", "cap"),
    "alibi": ("alibi_heads", "alibi_head"),
    "sigmoid": ("sigmoid_n",),
    "qk_norm": ("qk_d", "qk_scale", "qk_gain"),
}
#: The row's source: on the row tabs, in a box of their own.
SOURCE_PARAMS = ("row", "row_n", "needle", "scale")
#: The row tab's check boxes ("show", variant) and knobs ("param", name), as they are laid out under
#: its bars, two to a row.
SWITCH_GRID: tuple[tuple[tuple[str, str] | None, ...], ...] = (
    (("show", "softmax_one"), ("show", "softcap")),
    (("show", "ssmax"), ("show", "logn")),
    (("show", "sink"), ("param", "sink_logit")),
    (("show", "sink_tokens"), ("param", "sink_tokens")),
    (None, ("param", "window")),
)
#: Tabs that read the row (the row's source is shown on them).
ROW_TABS = ("row", "length", "softcap")
#: Tabs that read the shared scores when the row is the shared one (the score table is shown on them;
#: the length tab's rows are always needle among noise).
SCORE_TABS = ("row", "softcap")
#: Parameters used only by one variant of the row tab: greyed while it is switched off.
VARIANT_PARAMS = {"sink_logit": "sink", "sink_tokens": "sink_tokens", "window": "sink_tokens"}
#: The variants shown at first (and after a reset).
DEFAULT_SHOWN = ("softmax_one", "sink", "softcap", "ssmax")


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
    sink_logit: float = param(1.0, minimum=-10.0, maximum=10.0)
    sink_tokens: int = param(1, minimum=0, maximum=16, integer=True)
    window: int = param(2, minimum=1, maximum=rows.MAX_N, log=True, integer=True)
    cap: float = param(30.0, minimum=1.0, maximum=100.0)
    ssmax_s: float = param(0.5, minimum=0.1, maximum=2.0)
    logn_length: int = param(512, minimum=8, maximum=rows.MAX_N, log=True, integer=True)
    alibi_heads: int = param(8, minimum=1, maximum=16, integer=True)
    alibi_head: int = param(1, minimum=1, maximum=16, integer=True)
    sigmoid_n: int = param(32, minimum=4, maximum=256, log=True, integer=True)
    qk_d: int = param(64, minimum=4, maximum=512, log=True, integer=True)
    qk_scale: float = param(1.0, minimum=0.1, maximum=100.0, log=True)
    qk_gain: float = param(1.0, minimum=0.1, maximum=10.0, log=True)

    #: The variants the row tab draws beside softmax, in METHODS order (view state, saved in sessions).
    shown: tuple[str, ...] = DEFAULT_SHOWN

    def __post_init__(self) -> None:
        self._cache: dict[str, tuple[tuple, Any]] = {}

    # -- which variants the row tab shows --------------------------------------------------------
    def set_shown(self, variants: Iterable[str]) -> None:
        """Show exactly ``variants`` beside softmax (any order, none at all is fine)."""
        wanted = set(variants)
        unknown = sorted(wanted - set(rows.VARIANTS))
        if unknown:
            raise ValueError(tr("variants.error.unknown", names=", ".join(unknown), variants=", ".join(rows.VARIANTS)))
        shown = tuple(v for v in rows.VARIANTS if v in wanted)
        if shown != self.shown:
            self.shown = shown

    def show_variant(self, variant: str, on: bool) -> None:
        self.set_shown(set(self.shown) | {variant} if on else set(self.shown) - {variant})

    def toggle(self, variant: str) -> None:
        self.show_variant(variant, variant not in self.shown)

    def extra_state(self) -> dict[str, Any]:
        return {} if self.shown == DEFAULT_SHOWN else {"shown": list(self.shown)}

    def check_extra_state(self, state: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(state) - {"shown"})
        if unknown:
            raise ValueError(tr("variants.state.unknown", names=", ".join(unknown)))
        shown = state.get("shown", list(DEFAULT_SHOWN))
        if not isinstance(shown, list) or not all(isinstance(v, str) for v in shown):
            raise ValueError(tr("variants.state.not_list"))
        if set(shown) - set(rows.VARIANTS):
            raise ValueError(tr("variants.error.unknown", names=", ".join(sorted(set(shown) - set(rows.VARIANTS))),
                                variants=", ".join(rows.VARIANTS)))
        return {"shown": tuple(v for v in rows.VARIANTS if v in shown)}

    def apply_extra_state(self, checked: dict[str, Any]) -> None:
        self.set_shown(checked.get("shown", DEFAULT_SHOWN))

    def reset(self) -> None:
        super().reset()
        self.shown = DEFAULT_SHOWN

    # -- inputs ---------------------------------------------------------------------------------
    def applies(self, name: str) -> bool:
        """The synthetic row's length only for it; a variant's own knobs only while it is on."""
        if name == "row_n":
            return self.row == "random"
        if name in VARIANT_PARAMS:
            return VARIANT_PARAMS[name] in self.shown
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
        return ("softmax",) + self.shown

    def row_values(self, scores: ScoreRow) -> tuple[np.ndarray, tuple[str, ...]]:
        """The row before the scale: the shared scores, or the needle among the seed's noise."""
        if self.row == "scores":
            return scores.values, scores.labels
        return rows.synthetic_row(self.row_n, self.needle, self.seed), tuple(str(i + 1) for i in range(self.row_n))


    # -- the tabs' results ---------------------------------------------------------------------
    def _row_key(self, scores: ScoreRow) -> tuple:
        source = (scores.values.tobytes(), scores.labels) if self.row == "scores" else (
            self.row_n, self.needle, self.seed)
        return (self.row, source, self.scale)

    def row_logits(self, scores: ScoreRow) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
        """The row's logits (scale times the row), its labels and the positions its bars show."""
        def make() -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
            values, labels = self.row_values(scores)
            x = rows.scaled(values, self.scale)
            return x, labels, rows.shown_indices(x)

        return self._cached("logits", self._row_key(scores), make)

    def row_result(self, scores: ScoreRow) -> rows.RowResult:
        """Every method's weights of the row: each method's kept until the row or its own knobs change
        (a sink logit move recomputes the sink's weights, not all seven)."""
        row_key = self._row_key(scores)
        knobs = self.knobs()

        def make() -> rows.RowResult:
            x, labels, shown = self.row_logits(scores)
            weights = {m: self._cached(f"weights.{m}", (row_key,) + tuple(getattr(knobs, f) for f in fields),
                                       lambda m=m: rows.variant_weight(m, x, knobs))
                       for m, fields in rows.METHOD_KNOBS.items()}
            return rows.RowResult(labels, x, weights, shown, self.selected())

        return self._cached("row", (row_key, knobs, self.selected()), make)

    def result(self, scores: ScoreRow) -> rows.RowResult:
        """The row tab's result (the view's main result)."""
        return self.row_result(scores)

    def current_n(self, scores: ScoreRow) -> int:
        return len(scores) if self.row == "scores" else self.row_n

    def length_result(self) -> rows.LengthResult:
        """The Length tab's curves; each method's curve is kept until its own inputs change (an SSMax s
        move recomputes SSMax's curve, not softmax's and log-n's)."""
        base = (self.needle, self.seed, self.scale)
        s, length = self.ssmax_s, self.logn_length

        def make() -> rows.LengthResult:
            xs = self._cached("length_rows", base, lambda: rows.length_rows(*base))
            soft = self._cached("length.softmax", base, lambda: rows.length_curve("softmax", xs, s, length))
            curves = {"softmax": soft,
                      "ssmax": self._cached("length.ssmax", base + (s,),
                                            lambda: rows.length_curve("ssmax", xs, s, length)),
                      "logn": self._cached("length.logn", base + (length,),
                                           lambda: rows.length_curve("logn", xs, s, length, soft))}
            return rows.LengthResult(rows.LENGTHS, {m: c[0] for m, c in curves.items()},
                                     {m: c[1] for m, c in curves.items()}, self.needle, self.scale)

        return self._cached("length", base + (s, length), make)

    def softcap_result(self, scores: ScoreRow) -> rows.SoftcapResult:
        return self._cached("softcap", (self._row_key(scores), self.cap),
                            lambda: rows.softcap_result(self.row_logits(scores)[0], self.cap))

    def alibi_result(self) -> att.AlibiResult:
        key = (self.alibi_heads, self.alibi_head, self.seed)
        return self._cached("alibi", key, lambda: att.alibi_result(*key))

    def sigmoid_result(self) -> att.SigmoidResult:
        curves = self._cached("sigmoid_curves", (self.seed,), lambda: att.sigmoid_curves(self.seed))
        return self._cached("sigmoid", (self.sigmoid_n, self.seed),
                            lambda: att.sigmoid_result(self.sigmoid_n, self.seed, curves))

    def qk_result(self) -> att.QkResult:
        """QK-norm's panels: the curves without QK-norm are kept while only the gain moves; at input
        scale 1 the plain logits reuse the curves' product q kᵀ."""
        d, scale, gain, seed = self.qk_d, self.qk_scale, self.qk_gain, self.seed

        def qk() -> tuple[np.ndarray, np.ndarray]:
            return self._cached("qk_inputs", (d, seed), lambda: att.qk_inputs(d, seed))

        def product() -> np.ndarray:
            return self._cached("qk_product", (d, seed), lambda: att.qk_product(qk()))

        def curves() -> tuple[np.ndarray, ...]:
            basis = self._cached("qk_basis", (d, seed), lambda: att.qk_basis(d, seed, qk(), product()))
            plain = self._cached("qk_plain", (d, seed), lambda: att.qk_plain_curves(d, seed, basis))
            normed = self._cached("qk_normed", (d, gain, seed), lambda: att.qk_normed_curves(d, gain, seed, basis))
            return plain[0], normed[0], plain[1], normed[1]

        def result() -> att.QkResult:
            both = self._cached("qk_curves", (d, gain, seed), curves)
            plain = self._cached("qk_plain_logits", (d, scale, seed),
                                 lambda: att.qk_plain_logits(d, scale, seed, qk(),
                                                             product() if scale == 1.0 else None))
            return att.qk_result(d, scale, gain, seed, both, qk(), plain)

        return self._cached("qk", (d, scale, gain, seed), result)

    # -- export -----------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow) -> dict[str, ExportArray]:
        return export_arrays(self, scores)
