"""A real model's attention on a prompt, and the lab's own recomputation of it.

:func:`attention_steps` runs the model once with ``output_attentions`` (the
weights the model itself computes, eager attention, float32) and, for the
architectures in :data:`RECOMPUTED_ARCHITECTURES`, captures every layer's
q, k and v as the model hands them to its attention function (after the
rotary embedding; keys and values repeated for grouped-query attention;
see :mod:`gui.model.llm._capture`).  Then it recomputes each layer's
weights with :func:`compute.attention` — the causal mask (and the
layer's sliding window, when the model has one and the prompt is longer),
the model's own ``scaling`` (``1/sqrt(d_k)`` for all of them, except GPT-2
configs that also divide by the layer number) — and keeps the largest
absolute difference per layer.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

import numpy as np

import compute
from gui.model.base import drain
from gui.model.llm import _capture
from gui.model.llm._env import (
    MAX_HEADS,
    MAX_LAYERS,
    MAX_PROMPT_TOKENS,
    RECOMPUTED_ARCHITECTURES,
    RECOMPUTED_NAMES,
    ModelError,
)
from gui.model.llm._loading import LoadedModel
from gui.model.llm._run import encode, forward
from gui.model.llm._tokens import readable_all
from gui.model.texts import tr


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """Everything the attention of one prompt shows (arrays are read-only by convention).

    ``L`` layers, ``H`` query heads, ``n`` tokens, ``d`` the head dimension.

    Attributes
    ----------
    source, prompt
        the model's resolved source and the prompt.
    ids
        int64 ``(n,)``: the token ids (special tokens the tokenizer adds included).
    pieces
        the decoded text of each token (``" cat"``; bytes of a split character as ``\\xe7``).
    tokens
        the same made readable for labels (``"·cat"``; see :func:`readable`).
    weights
        float32 ``(L, H, n, n)``: the model's own attention probabilities
        (``output_attentions``); row ``i`` is query ``i`` over keys ``0..n-1``.
    q, k, v
        float32 ``(L, H, n, d)`` as the model used them (after the rotary
        embedding; k and v repeated to the ``H`` query heads), or None when
        not captured.
    scale
        float64 ``(L,)``: the factor each layer multiplies ``q kᵀ`` by, or None.
    mask
        bool ``(L, n, n)``: True where a query may attend to a key (causal,
        and the sliding window where one applies) — the mask the
        recomputation used, or the plain causal mask when not recomputed.
    recompute_max_abs_diff
        float64 ``(L,)``: ``max |compute.attention weights − model weights|``
        over the layer's heads and cells; NaN where not recomputed.
    recomputed
        whether every layer was recomputed.
    note
        one line saying how well the recomputation matches, or why there is none.
    """

    source: str
    prompt: str
    architecture: str
    ids: np.ndarray
    pieces: tuple[str, ...]
    tokens: tuple[str, ...]
    weights: np.ndarray
    q: np.ndarray | None
    k: np.ndarray | None
    v: np.ndarray | None
    scale: np.ndarray | None
    mask: np.ndarray
    recompute_max_abs_diff: np.ndarray
    recomputed: bool
    note: str

    @property
    def n_layers(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.weights.shape[1])

    @property
    def n_tokens(self) -> int:
        return int(self.weights.shape[2])

    @property
    def max_abs_diff(self) -> float:
        """The largest recomputation difference over all layers (NaN when not recomputed)."""
        d = self.recompute_max_abs_diff
        return float(np.max(d)) if d.size and not np.isnan(d).any() else float("nan")


def check_shape(model: LoadedModel) -> None:
    """ModelError if the model has more layers or heads than the attention view shows."""
    if model.n_layers > MAX_LAYERS or model.n_heads > MAX_HEADS:
        raise ModelError(tr("llm.error.too_big", name=model.name, layers=model.n_layers, heads=model.n_heads,
                            max_layers=MAX_LAYERS, max_heads=MAX_HEADS))


def _window_mask(n: int, window: int | None) -> np.ndarray:
    """The causal mask, with the sliding window ``i - j < window`` when one is given."""
    causal = compute.causal_mask(n, n)
    if window is None or window >= n:
        return causal
    i, j = np.indices((n, n))
    return causal & (i - j < window)


def _host(a) -> np.ndarray:
    get = getattr(a, "get", None)  # a CuPy array when the lab's CuPy backend took the call
    return np.asarray(get() if callable(get) else a)


def _usable(calls: list[_capture.Captured], weights: np.ndarray) -> list[_capture.Captured] | None:
    """The captured calls in layer order, if there is exactly one per layer matching the weights."""
    layers, heads, n, _ = weights.shape
    by_layer = {c.layer: c for c in calls}
    if len(calls) != layers or sorted(by_layer) != list(range(layers)):
        return None
    ordered = [by_layer[i] for i in range(layers)]
    for c in ordered:
        if c.q.shape[:2] != (heads, n) or c.k.shape[:2] != (heads, n) or c.q.shape[-1] != c.k.shape[-1]:
            return None
    return ordered


def attention_steps(model: LoadedModel, prompt: str) -> Generator[float, None, AttentionResult]:
    """The model's attention on ``prompt``, recomputed by the lab; a job generator.

    Yields progress fractions in 0..1 (before the forward pass, after it,
    after each layer's recomputation) and returns an :class:`AttentionResult`.
    The arguments are checked and the prompt tokenised at the first ``next``.

    Raises
    ------
    ModelError
        an empty prompt, more than :data:`MAX_PROMPT_TOKENS` tokens (or the
        model's context), more than :data:`MAX_LAYERS` layers or
        :data:`MAX_HEADS` heads, or the model failing on the prompt.
    """
    yield 0.0
    check_shape(model)
    ids = encode(model, prompt, MAX_PROMPT_TOKENS)
    n = len(ids)
    yield 0.05
    with _capture.recording() as calls:
        output = forward(model, ids, attentions=True)
    attentions = getattr(output, "attentions", None)
    if not attentions or any(a is None for a in attentions):
        raise ModelError(tr("llm.error.no_attentions", name=model.name))
    weights = np.stack([a[0].detach().cpu().float().numpy() for a in attentions]).astype(np.float32, copy=False)
    del output, attentions
    yield 0.5
    layers = weights.shape[0]
    pieces = model.pieces.of(ids)
    ordered = _usable(calls, weights) if model.recomputable else None
    diff = np.full(layers, np.nan)
    masks = np.broadcast_to(compute.causal_mask(n, n), (layers, n, n)).copy()
    q = k = v = scale = None
    if ordered is not None:
        for layer, c in enumerate(ordered):
            masks[layer] = _window_mask(n, c.sliding_window)
            w, _ = compute.attention(c.q, c.k, c.v, scale=c.scale, mask=masks[layer])
            diff[layer] = float(np.max(np.abs(_host(w).astype(np.float64) - weights[layer])))
            yield 0.5 + 0.5 * (layer + 1) / layers
        q = np.stack([c.q for c in ordered])
        k = np.stack([c.k for c in ordered])
        v = np.stack([c.v for c in ordered])
        scale = np.array([c.scale for c in ordered], dtype=np.float64)
        note = tr("llm.note.recomputed", diff=f"{np.max(diff):.1e}", layers=layers)
    elif model.architecture not in RECOMPUTED_ARCHITECTURES:
        note = tr("llm.note.unsupported", architecture=model.architecture or "?", supported=RECOMPUTED_NAMES)
    else:
        note = tr("llm.note.not_captured", architecture=model.architecture or "?", version=f"transformers {_version()}")
    yield 1.0
    return AttentionResult(
        source=model.source, prompt=prompt, architecture=model.architecture,
        ids=np.asarray(ids, dtype=np.int64), pieces=pieces, tokens=readable_all(pieces),
        weights=weights, q=q, k=k, v=v, scale=scale, mask=masks,
        recompute_max_abs_diff=diff, recomputed=ordered is not None, note=note,
    )


def _version() -> str:
    try:
        import transformers

        return str(transformers.__version__)
    except Exception:
        return "?"


def attention(model: LoadedModel, prompt: str) -> AttentionResult:
    """:func:`attention_steps` run to its end on this thread."""
    return drain(attention_steps(model, prompt))
