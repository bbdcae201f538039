"""Real models: a Hugging Face causal language model's attention and next-token logits (no Qt).

Optional: needs the ``models`` extra (torch, transformers, tokenizers),
imported only when a model is used, so the app starts without them.
:func:`unavailable_reason` says whether they are there.

Everything that goes wrong raises :class:`ModelError` with one line for the
user; no exception type of torch or transformers escapes.  Calls that run a
model hold one lock (one model call at a time); run them in the view's
background job, as generators (``*_steps``) that yield progress in 0..1
and return their result (:func:`gui.model.base.drain` runs one here).

API
---
``unavailable_reason() -> str | None``
    None when torch and transformers import; else why not, and the install command.
``load(source, *, cache_dir=None) -> LoadedModel``
    a local folder, or a model id looked up in the local Hugging Face cache
    first (downloaded only where the hub answers); eval mode, float32, eager
    attention, no gradients; one object per resolved source (cached).
``forget(source=None)``
    drop a cached model (all when None).
``attention_steps(model, prompt)`` / ``attention(model, prompt) -> AttentionResult``
    the model's attention weights per layer and head, with the lab's
    recomputation (``compute.attention``) and its largest difference per layer.
``next_token(model, prompt, *, continuation=()) -> NextToken``
    float64 logits after the prompt (and token ids already appended), with
    the readable string of every token of the vocabulary.
``generate_steps(...)`` / ``generate(model, prompt, n, *, temperature=1.0, top_k=None,
top_p=None, min_p=None, seed=0, continuation=()) -> Generation``
    ``n`` tokens drawn one at a time with the lab's filter and draw; each a
    :class:`GenStep` (token, probability, rank); reproducible by seed and
    position (:func:`step_seed`).
``choose(model, prompt, token_id, *, knobs..., continuation=()) -> GenStep``
    the step for appending a token picked by hand instead of a drawn one.
``knobs(temperature, top_k, top_p, min_p) -> dict``
    the keyword arguments of ``compute.filter_probs`` for those knobs.
``readable(piece) -> str``
    a token's text with its whitespace visible (``" cat"`` → ``"·cat"``).

Limits: :data:`MAX_PROMPT_TOKENS` tokens for attention,
:data:`MAX_CONTEXT_TOKENS` for logits and generation,
:data:`MAX_GENERATE_TOKENS` per ``generate`` call, :data:`MAX_LAYERS`
layers and :data:`MAX_HEADS` heads per layer for attention.  Attention is
recomputed for :data:`RECOMPUTED_ARCHITECTURES` (GPT-2 and the Llama
family: Llama, Mistral, Qwen2, Qwen3); other models show their weights with
a ``note`` saying why there is no recomputation.

Examples
--------
>>> from gui.model import llm
>>> if llm.unavailable_reason() is None:                      # doctest: +SKIP
...     m = llm.load("gpt2")
...     a = llm.attention(m, "The cat sat on the mat")
...     a.weights.shape, a.tokens[:3], a.recomputed, bool(a.max_abs_diff < 1e-5)
((12, 12, 6, 6), ('The', '·cat', '·sat'), True, True)
"""

from gui.model.llm._attention import AttentionResult, attention, attention_steps
from gui.model.llm._env import (
    INSTALL_COMMAND,
    MAX_CONTEXT_TOKENS,
    MAX_GENERATE_TOKENS,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_PROMPT_TOKENS,
    RECOMPUTED_ARCHITECTURES,
    ModelError,
    unavailable_reason,
)
from gui.model.llm._loading import LoadedModel, forget, load
from gui.model.llm._logits import (
    Generation,
    GenStep,
    NextToken,
    choose,
    generate,
    generate_steps,
    knobs,
    next_token,
    step_seed,
)
from gui.model.llm._tokens import readable

__all__ = [
    "attention",
    "attention_steps",
    "AttentionResult",
    "choose",
    "forget",
    "generate",
    "generate_steps",
    "Generation",
    "GenStep",
    "INSTALL_COMMAND",
    "knobs",
    "load",
    "LoadedModel",
    "MAX_CONTEXT_TOKENS",
    "MAX_GENERATE_TOKENS",
    "MAX_HEADS",
    "MAX_LAYERS",
    "MAX_PROMPT_TOKENS",
    "ModelError",
    "next_token",
    "NextToken",
    "readable",
    "RECOMPUTED_ARCHITECTURES",
    "step_seed",
    "unavailable_reason",
]
