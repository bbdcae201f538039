"""Capture the q, k and v each attention layer really uses, as it hands them to its attention function.

GPT-2 and the Llama family (Llama, Mistral, Qwen2, Qwen3) in transformers
compute their q, k and v (Qwen3 normalises q and k; the Llama family turns
them by the rotary embedding), then call the attention function the
config names; for ``attn_implementation="eager"`` that is the function
``eager_attention_forward`` of the architecture's own modeling module,
looked up by name at every call.  :func:`install` replaces that module-level
name by a wrapper that calls the original unchanged and, only while a
:func:`recording` block is active on the calling thread, keeps a copy of
``query``, ``key``, ``value`` (as passed: after the rotary embedding, keys
and values not yet repeated for grouped-query attention), the ``scaling``
and the ``sliding_window`` it was given.  The wrapper stays installed (it is
a pass-through for every other caller and thread); installing twice is a
no-op.

A transformers version whose modeling code has no such function, or an
architecture that computes its weights another way (GPT-2 with
``reorder_and_upcast_attn``), records nothing; the caller then says the
weights could not be recomputed.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

_MARK = "_softmax_lab_original"
_local = threading.local()


@dataclass(frozen=True, eq=False)
class Captured:
    """One attention call: arrays ``(heads, n, d)`` float32 (k, v repeated to the query heads)."""

    layer: int
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scale: float
    sliding_window: int | None
    kv_heads: int


def _to_numpy(t: Any) -> np.ndarray:
    return t.detach().to("cpu").float().numpy().copy()


def _record(module: Any, query: Any, key: Any, value: Any, scaling: Any, kwargs: dict) -> None:
    calls = getattr(_local, "calls", None)
    if calls is None or query.dim() != 4 or query.shape[0] != 1:
        return
    heads, kv_heads = int(query.shape[1]), int(key.shape[1])
    if kv_heads == 0 or heads % kv_heads:
        return
    groups = heads // kv_heads
    if groups > 1:  # what repeat_kv does: kv head h serves query heads h*groups .. h*groups + groups - 1
        key = key.repeat_interleave(groups, dim=1)
        value = value.repeat_interleave(groups, dim=1)
    scale = float(scaling) if scaling is not None else float(query.shape[-1]) ** -0.5
    window = kwargs.get("sliding_window")
    layer = getattr(module, "layer_idx", None)
    calls.append(Captured(
        layer=len(calls) if layer is None else int(layer),
        q=_to_numpy(query[0]), k=_to_numpy(key[0]), v=_to_numpy(value[0]),
        scale=scale, sliding_window=None if window is None else int(window), kv_heads=kv_heads,
    ))


def _wrap(original: Any) -> Any:
    def eager_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        _record(module, query, key, value, scaling, kwargs)
        if scaling is None:
            return original(module, query, key, value, attention_mask, dropout=dropout, **kwargs)
        return original(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)

    setattr(eager_attention_forward, _MARK, original)
    eager_attention_forward.__doc__ = getattr(original, "__doc__", None)
    return eager_attention_forward


def install(model: Any) -> bool:
    """Wrap the eager attention function of every modeling module ``model``'s layers come from.

    Returns True if at least one module has the function (so a recording
    can capture something).
    """
    found = False
    for name in sorted({type(sub).__module__ for sub in model.modules()}):
        module = sys.modules.get(name)
        fn = getattr(module, "eager_attention_forward", None) if module is not None else None
        if fn is None or not callable(fn):
            continue
        found = True
        if not hasattr(fn, _MARK):
            module.eager_attention_forward = _wrap(fn)
    return found


@contextmanager
def recording():
    """Collect :class:`Captured` calls on this thread into the list the block gets."""
    calls: list[Captured] = []
    previous = getattr(_local, "calls", None)
    _local.calls = calls
    try:
        yield calls
    finally:
        _local.calls = previous
