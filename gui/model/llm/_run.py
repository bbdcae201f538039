"""One forward pass of a loaded model on token ids, and the prompt's token ids.

Both hold :data:`gui.model.llm._env.LOCK` (through ``quiet``) only while
they run, never across a generator's ``yield``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from gui.model.llm._env import ModelError, cause, quiet, require
from gui.model.llm._loading import LoadedModel
from gui.model.texts import tr


def encode(model: LoadedModel, prompt: str, limit: int) -> list[int]:
    """The token ids of ``prompt`` as the model reads it (its own special tokens, e.g. Llama's BOS, added).

    Raises ModelError for an empty prompt, a prompt the tokenizer refuses,
    or more than ``limit`` tokens (or the model's own context).
    """
    if not isinstance(prompt, str):
        raise ModelError(tr("llm.error.prompt_type", kind=type(prompt).__name__))
    if not prompt:
        raise ModelError(tr("llm.error.empty_prompt"))
    try:
        with quiet():
            ids = model.tokenizer(prompt, add_special_tokens=True)["input_ids"]
    except Exception as exc:
        raise ModelError(tr("llm.error.tokenize", cause=cause(exc))) from None
    ids = [int(i) for i in ids]
    if not ids:
        raise ModelError(tr("llm.error.empty_prompt"))
    check_length(model, len(ids), limit)
    return ids


def check_length(model: LoadedModel, n: int, limit: int) -> None:
    """ModelError if ``n`` tokens are more than ``limit`` or than the model's context."""
    if n > limit:
        raise ModelError(tr("llm.error.too_many_tokens", n=n, limit=limit))
    if model.context and n > model.context:
        raise ModelError(tr("llm.error.context", n=n, limit=model.context, name=model.name))


def check_ids(model: LoadedModel, ids: Sequence[int]) -> list[int]:
    """``ids`` as ints, each a token of the model's vocabulary (ModelError if not)."""
    out = []
    for i in ids:
        if isinstance(i, bool) or not float(i).is_integer() or not 0 <= int(i) < model.vocab_size:
            raise ModelError(tr("llm.error.token_id", token_id=i, last=model.vocab_size - 1))
        out.append(int(i))
    return out


def _accepts(model: Any, name: str) -> bool:
    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def forward(model: LoadedModel, ids: Sequence[int], *, attentions: bool) -> Any:
    """The model's output for one sequence of ids: ``.logits`` (last position only where the
    model can skip the others) and, with ``attentions``, ``.attentions`` (one ``(1, H, n, n)``
    tensor per layer).  ModelError if the model fails."""
    torch, _ = require()
    kwargs: dict[str, Any] = {"use_cache": False, "return_dict": True}
    if attentions:
        kwargs["output_attentions"] = True
    if _accepts(model.model, "logits_to_keep"):
        kwargs["logits_to_keep"] = 1
    try:
        with quiet(), torch.inference_mode():
            x = torch.tensor([list(ids)], dtype=torch.long)
            return model.model(input_ids=x, attention_mask=torch.ones_like(x), **kwargs)
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(tr("llm.error.forward", name=model.name, cause=cause(exc))) from None


def last_logits(output: Any) -> Any:
    """The float64 NumPy logits at the last position of a :func:`forward` output."""
    return output.logits[0, -1].double().cpu().numpy()
