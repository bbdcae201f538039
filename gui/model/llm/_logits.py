"""A real model's next-token logits, and tokens generated from them with the lab's own sampling.

The distribution a token is drawn from is :func:`compute.filter_probs` of
the model's logits with the knobs (temperature, then top-k, top-p, min-p:
the order and rules of transformers' logits processors), and the draw is
:func:`compute.sample` — the same code the Sampling view uses.  Every token
is drawn at its own position ``i`` after the prompt (0 for the first) with
the seed :func:`step_seed` ``(seed, i)``, so generating five tokens at once,
or two and then three more with ``continuation`` set to the first two, gives
the same tokens.  Each step runs the model on the whole context (no KV
cache), so a step's logits are exactly what :func:`next_token` returns for
that context: rewinding the strip and looking again shows the very
distribution the token was drawn from.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import compute
from gui.model.base import drain
from gui.model.llm._env import LOCK, MAX_CONTEXT_TOKENS, MAX_GENERATE_TOKENS, ModelError, quiet
from gui.model.llm._loading import LoadedModel
from gui.model.llm._run import check_ids, check_length, encode, forward, last_logits
from gui.model.llm._tokens import readable, readable_all
from gui.model.texts import tr

#: Logit rows kept per model, by context (rewinding the strip costs nothing).
_LOGITS_KEPT = 32


@dataclass(frozen=True, eq=False)
class NextToken:
    """The model's next-token logits after a context.

    Attributes
    ----------
    source
        the model's resolved source.
    ids
        int64: the context's token ids (the prompt's, then ``continuation``).
    context
        the context's tokens, readable (see :func:`readable`).
    logits
        float64 ``(V,)``: the model's logits at the last position.
    tokens
        ``V`` readable token strings, one per logit (ids the tokenizer
        lacks, padding rows of the embedding, read ``⟨id⟩``).
    """

    source: str
    ids: np.ndarray
    context: tuple[str, ...]
    logits: np.ndarray
    tokens: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class GenStep:
    """One token of the generate strip.

    ``position`` is its index after the prompt (0 for the first);
    ``probability`` its probability in the filtered distribution it was
    drawn from (0 for a chosen token the knobs cut); ``rank`` its rank by
    logit among all ``V`` tokens (1 = most probable; equal logits share the
    better rank); ``kept`` whether the knobs kept it; ``chosen`` whether it
    was appended by hand instead of drawn.
    """

    position: int
    token_id: int
    token: str
    piece: str
    logit: float
    probability: float
    rank: int
    kept: bool
    chosen: bool


@dataclass(frozen=True, eq=False)
class Generation:
    """What :func:`generate` returns.

    ``steps`` holds the new tokens only; ``ids`` is the whole continuation
    (the one given, then the new tokens) and ``text`` its decoded text.
    """

    source: str
    prompt: str
    steps: tuple[GenStep, ...]
    ids: tuple[int, ...]
    text: str
    seed: int
    knobs: dict[str, Any]


def knobs(temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
          min_p: float | None = None) -> dict[str, Any]:
    """The keyword arguments of :func:`compute.filter_probs` for these knobs (None = off)."""
    out: dict[str, Any] = {"temperature": temperature}
    for name, value in (("top_k", top_k), ("top_p", top_p), ("min_p", min_p)):
        if value is not None:
            out[name] = value
    return out


def step_seed(seed: int, position: int) -> int:
    """The seed :func:`compute.sample` draws position ``position`` with, for the strip's ``seed``."""
    state = np.random.SeedSequence([int(seed), int(position)]).generate_state(1, dtype=np.uint32)
    return int(state[0])


def _context(model: LoadedModel, prompt: str, continuation: Sequence[int], extra: int) -> list[int]:
    ids = encode(model, prompt, MAX_CONTEXT_TOKENS) + check_ids(model, continuation)
    check_length(model, len(ids) + extra, MAX_CONTEXT_TOKENS)
    return ids


def _logits(model: LoadedModel, ids: list[int]) -> np.ndarray:
    key = tuple(ids)
    with LOCK:
        kept = model.memo.setdefault("logits", OrderedDict())
        if key in kept:
            kept.move_to_end(key)
            return kept[key]
    row = last_logits(forward(model, ids, attentions=False))
    row.setflags(write=False)
    with LOCK:
        kept[key] = row
        while len(kept) > _LOGITS_KEPT:
            kept.popitem(last=False)
    return row


def next_token(model: LoadedModel, prompt: str, *, continuation: Sequence[int] = ()) -> NextToken:
    """The model's logits for the token after ``prompt`` (then the ids of ``continuation``).

    Raises ModelError for an empty prompt, a context longer than
    :data:`MAX_CONTEXT_TOKENS` (or the model's), an id outside the
    vocabulary, or the model failing.
    """
    ids = _context(model, prompt, continuation, 0)
    logits = _logits(model, ids)
    return NextToken(source=model.source, ids=np.asarray(ids, dtype=np.int64),
                     context=readable_all(model.pieces.of(ids)), logits=logits,
                     tokens=readable_all(model.pieces.vocabulary(logits.size)))


def _step(model: LoadedModel, logits: np.ndarray, token_id: int, position: int, knob: dict[str, Any],
          chosen: bool) -> GenStep:
    filtered = compute.filter_probs(logits, **knob)
    piece = model.pieces.of([token_id])[0]
    return GenStep(position=position, token_id=token_id, token=readable(piece), piece=piece,
                   logit=float(logits[token_id]), probability=float(filtered[token_id]),
                   rank=int(np.count_nonzero(logits > logits[token_id])) + 1,
                   kept=bool(filtered[token_id] > 0), chosen=chosen)


def generate_steps(model: LoadedModel, prompt: str, n: int, *, temperature: float = 1.0,
                   top_k: int | None = None, top_p: float | None = None, min_p: float | None = None,
                   seed: int = 0, continuation: Sequence[int] = ()) -> Generator[float, None, Generation]:
    """Draw ``n`` tokens after ``prompt`` (and ``continuation``), one forward pass each; a job generator.

    Yields the fraction of tokens drawn (0 first, then after each token)
    and returns a :class:`Generation`.  The knobs are those of
    :func:`compute.filter_probs`; token ``i`` after the prompt is
    ``compute.sample(logits, 1, step_seed(seed, i), **knobs)[0]``.

    Raises
    ------
    ModelError
        ``n`` outside ``0 .. MAX_GENERATE_TOKENS``, the context growing past
        :data:`MAX_CONTEXT_TOKENS`, and everything :func:`next_token` raises.
    ValueError, TypeError
        a knob out of range (as :func:`compute.filter_probs`) or a bad seed.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_GENERATE_TOKENS:
        raise ModelError(tr("llm.error.generate_count", n=n, limit=MAX_GENERATE_TOKENS))
    knob = knobs(temperature, top_k, top_p, min_p)
    compute.filter_probs(np.zeros(2), **knob)  # the knobs' own checks, before any model work
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    yield 0.0
    ids = _context(model, prompt, continuation, int(n))
    done = list(check_ids(model, continuation))
    steps = []
    for i in range(int(n)):
        logits = _logits(model, ids)
        position = len(done)
        token = int(compute.sample(logits, 1, step_seed(seed, position), **knob)[0])
        steps.append(_step(model, logits, token, position, knob, chosen=False))
        ids.append(token)
        done.append(token)
        yield (i + 1) / n
    return Generation(source=model.source, prompt=prompt, steps=tuple(steps), ids=tuple(done),
                      text=_decode(model, done), seed=int(seed), knobs=knob)


def generate(model: LoadedModel, prompt: str, n: int, *, temperature: float = 1.0, top_k: int | None = None,
             top_p: float | None = None, min_p: float | None = None, seed: int = 0,
             continuation: Sequence[int] = ()) -> Generation:
    """:func:`generate_steps` run to its end on this thread."""
    return drain(generate_steps(model, prompt, n, temperature=temperature, top_k=top_k, top_p=top_p,
                                min_p=min_p, seed=seed, continuation=continuation))


def choose(model: LoadedModel, prompt: str, token_id: int, *, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None, min_p: float | None = None,
           continuation: Sequence[int] = ()) -> GenStep:
    """The strip's step for appending ``token_id`` by hand after ``prompt`` and ``continuation``.

    Its probability and rank are those of the distribution a draw at that
    position would use (with these knobs); ``chosen`` is True.  Append its
    ``token_id`` to the continuation to generate on from it.
    """
    knob = knobs(temperature, top_k, top_p, min_p)
    (token_id,) = check_ids(model, [token_id])
    ids = _context(model, prompt, continuation, 1)
    return _step(model, _logits(model, ids), token_id, len(continuation), knob, chosen=True)


def _decode(model: LoadedModel, ids: Sequence[int]) -> str:
    inside = [i for i in ids if i < model.pieces.size]
    try:
        with quiet():
            return model.tokenizer.decode(inside, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    except Exception:
        return "".join(model.pieces.of(ids))
