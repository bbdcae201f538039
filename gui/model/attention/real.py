"""The model source's core: one layer of a real model's attention, as the view's tools read it (no Qt).

The weights are the model's own (``llm.AttentionResult.weights``), every
head of the chosen layer; the mask is the one the model used (causal, and
a sliding window where one applies).  Where the lab recomputed the layer
(GPT-2 and the Llama family), q, k and v are the ones captured from the
model, the scores ``q kᵀ`` times the layer's own scale, so the step table
replays the softmax of a real row.  Where it did not, there are no q and
k: the scores shown are ``log`` of the weights (softmax gives the weights
back exactly), and a note says so.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import compute
from gui.model.base import ExportArray
from gui.model.llm import ModelError
from gui.model.llm_source import Outcome, Request, check_model, unavailable_reason
from gui.model.texts import tr

if TYPE_CHECKING:
    from gui.model.attention.core import AttentionCore, CoreInputs
    from gui.model.llm import AttentionResult as ModelResult


def clamp_layer(result: ModelResult | None, layer: int) -> int:
    """The 1-based layer shown: ``layer`` within the result's layers (1 without a result)."""
    if result is None:
        return 1
    return min(max(int(layer), 1), result.n_layers)


def head_dim(result: ModelResult) -> int:
    return int(result.q.shape[-1]) if result.q is not None else 0


def layer_scale(result: ModelResult, layer: int) -> float:
    """The factor layer ``layer`` (0-based) multiplies ``q kᵀ`` by (1 for log-weight scores)."""
    if result.scale is None:
        return 1.0
    return float(result.scale[layer])


def scaling_name(result: ModelResult, layer: int) -> str:
    """"sqrt_dk" when the layer scales by 1/√d_k, "custom" when by something else, "none" without q, k."""
    if result.q is None:
        return "none"
    d = head_dim(result)
    return "sqrt_dk" if math.isclose(layer_scale(result, layer), 1.0 / math.sqrt(d), rel_tol=1e-9) else "custom"


def model_core(inp: CoreInputs) -> AttentionCore:
    """The core of layer ``inp.layer`` of ``inp.llm`` (a pure function of the snapshot; thread-safe)."""
    from gui.model.attention.core import HIST_SAMPLE, AttentionCore, HeadParts
    from gui.model.attention.statistics import HIST_BINS

    a = inp.llm
    layer = clamp_layer(a, inp.layer) - 1
    heads, n = a.n_heads, a.n_tokens
    weights = np.asarray(a.weights[layer], dtype=np.float64)
    allowed = np.broadcast_to(np.asarray(a.mask[layer], dtype=bool), (heads, n, n))
    if a.q is not None:
        q, k, v = (np.asarray(x[layer], dtype=np.float64) for x in (a.q, a.k, a.v))
        scale = layer_scale(a, layer)
        raw, scores, _lab, _out = compute.attention_parts(q, k, v, scale=scale, mask=allowed[0])
        output = weights @ v
        note = ""
    else:  # no q and k: the scores are the log weights (softmax of them is the weights)
        q = k = v = np.zeros((heads, n, 0))
        scale = 1.0
        with np.errstate(divide="ignore"):
            raw = scores = np.where(allowed, np.log(weights), -np.inf)
        output = np.zeros((heads, n, 0))
        note = tr("models.attention.note.log_scores")
    seen = allowed & np.isfinite(scores)  # the scores each softmax took
    sample_raw, sample_scaled = raw[seen], scores[seen]
    stride = max(1, sample_raw.size // HIST_SAMPLE)
    sample_raw, sample_scaled = sample_raw[::stride], sample_scaled[::stride]
    top = float(max(np.abs(sample_raw).max(initial=0.0), np.abs(sample_scaled).max(initial=0.0), 1e-12))
    edges = np.linspace(-top, top, HIST_BINS + 1)
    size = max(sample_raw.size, 1)
    labels = tuple(a.tokens)
    d = q.shape[2]
    return AttentionCore(
        q_labels=labels, k_labels=labels, q=q, k=k, v=v, scale=scale, raw=raw, scores=scores,
        parts=HeadParts.given(weights, output), allowed=allowed, empty_rows=np.zeros((heads, n), dtype=bool),
        memory=int(compute.attention_memory(n, n, d, d, heads=heads)),
        hist_edges=edges, hist_raw=np.histogram(sample_raw, edges)[0] / size,
        hist_scaled=np.histogram(sample_scaled, edges)[0] / size,
        std_raw=float(sample_raw.std()) if sample_raw.size else 0.0,
        std_scaled=float(sample_scaled.std()) if sample_scaled.size else 0.0,
        note=note, layer=layer, real=a,
    )


def recompute_text(result: ModelResult, layer: int) -> tuple[str, str]:
    """The recomputation readout: (the line for layer ``layer``, 0-based, and overall; a per-layer tooltip)."""
    d = result.recompute_max_abs_diff
    if not result.recomputed:
        return tr("models.attention.recompute.none"), result.note
    line = tr("models.attention.recompute.value", layer=layer + 1, diff=f"{d[layer]:.1e}",
              overall=f"{result.max_abs_diff:.1e}", layers=result.n_layers)
    rows = "\n".join(tr("models.attention.recompute.row", layer=i + 1, diff=f"{x:.2e}") for i, x in enumerate(d))
    return line, f"{result.note}\n{rows}"


class ModelSourceState:
    """The model source's part of :class:`gui.model.attention.AttentionModel` (mixed in before ViewModel).

    The model's fields ``source``, ``model``, ``prompt`` and ``layer`` and
    its ``llm`` (a :class:`gui.model.llm_source.ModelSource`) are read here.
    The result shown (:attr:`llm_shown`) is the current request's when it
    ran, else the last one that worked, so the previous result stays on
    screen while a new prompt runs or after a model failed.
    """

    #: What the model itself fixes while the model source is shown (their controls are greyed).
    MODEL_FIXED = ("n", "heads", "d_k", "seed", "scaling", "temperature", "causal", "padding")

    def model_request(self) -> Request:
        return Request(self.model, self.prompt)

    @property
    def shown_outcome(self) -> Outcome | None:
        """The run the view shows: the current request's if it worked, else the last that did (or None)."""
        current = self.llm.outcome(self.model_request())
        return current if current is not None and current.ok else self.llm.latest

    @property
    def llm_shown(self) -> ModelResult | None:
        """The real model's attention the view shows (None before any run worked)."""
        shown = self.shown_outcome
        return shown.result if shown is not None else None

    @property
    def model_current(self) -> bool:
        """Whether the result shown is the current model's on the current prompt."""
        return self.llm.result(self.model_request()) is not None

    def model_applies(self, name: str) -> bool | None:
        """Whether ``name`` applies because of the model source (None: not the model source's to say)."""
        if name == "layer":
            return self.source == "model"
        if self.source == "model" and name in self.MODEL_FIXED:
            return False
        return None

    def model_value_in_use(self, name: str):
        """What the model fixes ``name`` to (the layer clamped to the model's; None where nothing is used)."""
        a = self.llm_shown if self.source == "model" else None
        if name == "layer":
            return clamp_layer(a, self.layer) if self.source == "model" else None
        if a is None:
            return getattr(self, name)
        layer = clamp_layer(a, self.layer) - 1
        d = head_dim(a)
        values = {"n": a.n_tokens, "heads": a.n_heads, "d_k": d or None, "seed": None, "causal": "on",
                  "padding": 0, "scaling": scaling_name(a, layer), "temperature": 1.0 / layer_scale(a, layer)}
        return values[name]

    def check_model_param(self, name: str, value) -> None:
        """ValueError for a model folder that is not there, or the model source without the extra."""
        if name == "model" and isinstance(value, str):
            check_model(value)
        if name == "source" and value == "model":
            reason = unavailable_reason()
            if reason is not None:
                raise ValueError(reason)

    def update_from_dict(self, values: dict) -> None:
        """As ViewModel's, with the model source's checks first (one change for model and prompt)."""
        for name, value in values.items():
            self.check_model_param(name, value)
        super().update_from_dict(values)

    def ensure_model_result(self) -> None:
        """Run the current model on the current prompt here unless done; ModelError if it fails."""
        if self.source != "model" or not self.model.strip():
            return
        outcome = self.llm.run_now(self.model_request())
        if not outcome.ok:
            raise ModelError(outcome.error)

    def model_arrays(self, r) -> dict[str, ExportArray]:
        """``model_attention`` (L, H, n, n), ``tokens`` and ``recompute_max_abs_diff`` (L,), when a model is shown.

        The CSVs hold the shown head's weights, the token ids by token, and one difference per layer.
        """
        a = r.core.real
        if a is None:
            return {}
        tokens = tuple(a.tokens)
        return {
            "model_attention": ExportArray(np.asarray(a.weights[r.core.layer, r.head]), tokens, tokens,
                                           npz_data=a.weights),
            "tokens": ExportArray(np.asarray(a.ids), ("id",), tokens, npz_data=np.array(tokens, dtype=str)),
            "recompute_max_abs_diff": ExportArray(np.asarray(a.recompute_max_abs_diff), ("max_abs_diff",),
                                                  tuple(str(i + 1) for i in range(a.n_layers))),
        }
