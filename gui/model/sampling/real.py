"""The Sampling view's model source: a real model's next-token logits and the generate strip (no Qt).

With ``logits`` "model" the vocabulary is the model's logits for the token
after the prompt and the tokens of the strip before its cursor (the
*context*), each token labelled with the tokenizer's readable string.  One
job (:class:`gui.model.llm_source.ModelSource`, ``pass_request``) runs
every model call of the view, as a :class:`SamplingRequest`:

- a *look* (no ``action``): the logits after the context;
- ``("generate", n, knobs, seed)``: ``llm.generate_steps`` from the
  context, then the logits after the new tokens;
- ``("choose", token_id, knobs)``: ``llm.choose`` (a token clicked in the
  bars instead of a drawn one), then the logits after it.

Each returns a :class:`ContextResult`; :meth:`ModelSourcePart.take_outcome`
appends an action's new tokens to the strip (dropping the ones after its
cursor) and keeps the result as the look of the new context, so the
vocabulary shown is always the look of the strip's context (or, while it
runs or after it failed, the last look that worked).

The strip (:class:`GenStrip`) is one evented field of the model (one undo
step per action), saved in sessions as token ids with their probabilities
and ranks (:meth:`GenStrip.to_state`); it belongs to the model and prompt
it was made with and reads as empty for any other.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gui.model import llm
from gui.model.base import ExportArray
from gui.model.llm_source import Outcome, Request, check_model, unavailable_reason
from gui.model.sampling.vocabulary import MAX_V, MIN_V
from gui.model.texts import tr

DEFAULT_PROMPT = "The cat sat on the"
#: The longest strip (tokens after the prompt) a session may hold.
MAX_STRIP = llm.MAX_CONTEXT_TOKENS
#: A token string saved with the strip is cut to this many characters.
MAX_TOKEN_TEXT = 200


@dataclass(frozen=True)
class SamplingRequest(Request):
    """A model call of the Sampling view: the model, the prompt, the context ids and an action (see the module)."""

    context: tuple[int, ...] = ()
    action: tuple = ()

    @property
    def key(self) -> tuple:
        return (self.model.strip(), self.prompt, self.context, self.action)

    @property
    def kind(self) -> str:
        return self.action[0] if self.action else "look"

    def look(self, context: tuple[int, ...] | None = None) -> SamplingRequest:
        """The look at ``context`` (default: this request's) with the same model and prompt."""
        return SamplingRequest(self.model, self.prompt, self.context if context is None else tuple(context))


@dataclass(frozen=True, eq=False)
class ContextResult:
    """The model's logits after a context, and the tokens the request's action added to it."""

    next: llm.NextToken
    base: tuple[int, ...]  # the context the action started from
    steps: tuple[llm.GenStep, ...] = ()  # the tokens it added (none for a look)

    @property
    def context(self) -> tuple[int, ...]:
        return self.base + tuple(s.token_id for s in self.steps)


def check_vocabulary(loaded: llm.LoadedModel, size: int) -> None:
    """ModelError unless a vocabulary of ``size`` logits fits the view (MIN_V .. MAX_V)."""
    if not MIN_V <= size <= MAX_V:
        raise llm.ModelError(tr("sampling_model.error.vocab", name=loaded.name, v=f"{size:,}", limit=f"{MAX_V:,}"))


def context_steps(loaded: llm.LoadedModel, request: SamplingRequest) -> Generator[float, None, ContextResult]:
    """Run ``request`` on ``loaded``: a job generator (progress 0..1) returning a :class:`ContextResult`."""
    check_vocabulary(loaded, loaded.vocab_size)
    yield 0.0
    context, steps = list(request.context), ()
    if request.kind == "generate":
        _, n, knobs, seed = request.action
        gen = yield from llm.generate_steps(loaded, request.prompt, n, **dict(knobs), seed=seed,
                                            continuation=context)
        steps = gen.steps
    elif request.kind == "choose":
        _, token_id, knobs = request.action
        steps = (llm.choose(loaded, request.prompt, token_id, **dict(knobs), continuation=context),)
    context += [s.token_id for s in steps]
    nt = llm.next_token(loaded, request.prompt, continuation=context)
    check_vocabulary(loaded, nt.logits.size)
    yield 1.0
    return ContextResult(nt, tuple(request.context), tuple(steps))


@dataclass(frozen=True)
class GenStrip:
    """The generated tokens after a prompt and the cursor: the tokens before it are the context.

    A cursor before the end is a rewind: the bars show the distribution the
    token at the cursor was drawn from, and the tokens from it on stay
    (dimmed) until the next action replaces them.
    """

    steps: tuple[llm.GenStep, ...] = ()
    cursor: int = 0
    model: str = ""
    prompt: str = ""

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(s.token_id for s in self.steps)

    @property
    def context(self) -> tuple[int, ...]:
        return self.ids[: self.cursor]

    def belongs(self, model: str, prompt: str) -> bool:
        return self.model == model.strip() and self.prompt == prompt

    def rewound(self, cursor: int) -> GenStrip:
        return replace(self, cursor=min(max(int(cursor), 0), len(self.steps)))

    def extended(self, base: tuple[int, ...], new: tuple[llm.GenStep, ...]) -> GenStrip:
        """``new`` tokens after the first ``len(base)`` (those after it dropped); the cursor at the end."""
        steps = self.steps[: len(base)] + tuple(new)
        return replace(self, steps=steps, cursor=len(steps))

    # -- sessions -----------------------------------------------------------------------------
    def to_state(self) -> dict[str, Any]:
        return {"model": self.model, "prompt": self.prompt, "cursor": self.cursor,
                "tokens": [{"id": s.token_id, "token": s.token, "probability": s.probability, "rank": s.rank,
                            "kept": s.kept, "chosen": s.chosen} for s in self.steps]}

    @classmethod
    def from_state(cls, state: Any) -> GenStrip:
        """The strip a session saved; ValueError saying what does not fit."""
        def fail(what: str) -> ValueError:
            return ValueError(tr("sampling_model.error.strip", what=what))

        if not isinstance(state, dict) or set(state) - {"model", "prompt", "cursor", "tokens"}:
            raise fail("strip")
        model, prompt, cursor, tokens = (state.get(k) for k in ("model", "prompt", "cursor", "tokens"))
        if not isinstance(model, str) or not isinstance(prompt, str):
            raise fail("model, prompt")
        if not isinstance(tokens, list) or len(tokens) > MAX_STRIP:
            raise fail("tokens")
        if isinstance(cursor, bool) or not isinstance(cursor, int) or not 0 <= cursor <= len(tokens):
            raise fail("cursor")
        steps = []
        for i, t in enumerate(tokens):
            ok = (isinstance(t, dict) and isinstance(t.get("id"), int) and not isinstance(t["id"], bool)
                  and t["id"] >= 0 and isinstance(t.get("token"), str) and len(t["token"]) <= MAX_TOKEN_TEXT
                  and isinstance(t.get("probability"), (int, float)) and not isinstance(t["probability"], bool)
                  and 0.0 <= t["probability"] <= 1.0 and isinstance(t.get("rank"), int)
                  and not isinstance(t["rank"], bool) and t["rank"] >= 1
                  and all(isinstance(t.get(k), bool) for k in ("kept", "chosen")))
            if not ok:
                raise fail(f"tokens[{i}]")
            steps.append(llm.GenStep(position=i, token_id=t["id"], token=t["token"], piece="", logit=math.nan,
                                     probability=float(t["probability"]), rank=t["rank"], kept=t["kept"],
                                     chosen=t["chosen"]))
        return cls(tuple(steps), cursor, model.strip(), prompt)


class ModelSourcePart:
    """The model source's part of :class:`gui.model.sampling.SamplingModel` (mixed in before ViewModel).

    Reads the model's ``logits``, ``model``, ``prompt``, ``strip``,
    ``seed``, :meth:`knobs` and its ``llm`` (a ModelSource over
    :func:`context_steps`).
    """

    # -- the strip and the requests --------------------------------------------------------------
    @property
    def strip_now(self) -> GenStrip:
        """The strip of the current model and prompt (an empty one if the strip is another's)."""
        if self.strip.belongs(self.model, self.prompt):
            return self.strip
        return GenStrip(model=self.model.strip(), prompt=self.prompt)

    def model_request(self) -> SamplingRequest:
        """The look at the strip's context: what the vocabulary shows."""
        return SamplingRequest(self.model, self.prompt, self.strip_now.context)

    def _knob_items(self) -> tuple:
        return tuple(self.knobs().items())

    def generate_request(self, n: int) -> SamplingRequest:
        """Generate ``n`` tokens from the strip's cursor with the current knobs and seed."""
        return replace(self.model_request(), action=("generate", int(n), self._knob_items(), int(self.seed)))

    def choose_request(self, token_id: int) -> SamplingRequest:
        """Append ``token_id`` (a bar clicked) at the strip's cursor instead of a drawn token."""
        return replace(self.model_request(), action=("choose", int(token_id), self._knob_items()))

    def rewind(self, cursor: int) -> None:
        """Move the strip's cursor (0: back to the prompt); the tokens after it stay until replaced."""
        strip = self.strip_now
        if strip.steps:
            self.strip = strip.rewound(cursor)

    def clear_strip(self) -> None:
        if self.strip_now.steps:
            self.strip = GenStrip(model=self.model.strip(), prompt=self.prompt)

    def take_outcome(self, outcome: Outcome) -> Outcome:
        """Keep what a request came to; an action's tokens join the strip if it is still where it started."""
        request = outcome.request
        if not outcome.ok or request.kind == "look":
            return self.llm.store(outcome)
        result: ContextResult = outcome.result
        look = request.look(result.context)
        self.llm.store(Outcome(look, result=result, name=outcome.name))
        strip = self.strip_now
        if strip.belongs(request.model, request.prompt) and strip.context == result.base:
            self.strip = strip.extended(result.base, result.steps)
        return outcome

    # -- what is shown ------------------------------------------------------------------------------
    @property
    def shown_outcome(self) -> Outcome | None:
        """The look the view shows: the current one if it worked, else the last one that did (or None)."""
        current = self.llm.outcome(self.model_request())
        return current if current is not None and current.ok else self.llm.latest

    @property
    def model_shown(self) -> ContextResult | None:
        shown = self.shown_outcome if self.logits == "model" else None
        return shown.result if shown is not None else None

    @property
    def model_current(self) -> bool:
        """Whether the logits shown are the current model's after the current context."""
        return self.llm.result(self.model_request()) is not None

    def token_text(self, step: llm.GenStep) -> str:
        """A strip token's readable string: the shown model's own when it is the strip's, else the saved one."""
        shown = self.shown_outcome if self.logits == "model" else None
        if shown is not None and shown.request.model.strip() == self.strip.model:
            tokens = shown.result.next.tokens
            if 0 <= step.token_id < len(tokens):
                return tokens[step.token_id]
        return step.token or f"#{step.token_id}"

    # -- checks, sessions, headless ------------------------------------------------------------------
    def check_model_param(self, name: str, value: Any) -> None:
        """ValueError for a model folder that is not there, or the model source without the extra."""
        if name == "model" and isinstance(value, str):
            check_model(value)
        if name == "logits" and value == "model":
            reason = unavailable_reason()
            if reason is not None:
                raise ValueError(reason)

    def ensure_model_result(self) -> None:
        """Run the look of the current context here unless done; ModelError if it fails (headless export)."""
        if self.logits != "model":
            return
        if not self.model.strip():
            raise llm.ModelError(tr("models.strip.no_model"))
        outcome = self.llm.outcome(self.model_request())
        if outcome is None:
            outcome = self.take_outcome(self.llm.run_now(self.model_request()))
        if not outcome.ok:
            raise llm.ModelError(outcome.error)

    def strip_state(self) -> dict[str, Any]:
        """The strip of the current model and prompt, for a session (nothing when it is empty or another's)."""
        return {"strip": self.strip.to_state()} if self.strip_now.steps else {}

    def model_arrays(self) -> dict[str, ExportArray]:
        """``tokens`` (every token's string, .npz only) and the strip, when a model's logits are shown."""
        shown = self.model_shown
        if shown is None:
            return {}
        tokens = shown.next.tokens
        out = {"tokens": ExportArray(np.arange(len(tokens)), ("token_id",), npz_data=np.array(tokens, dtype=str),
                                     csv=False),
               "context_ids": ExportArray(np.asarray(shown.next.ids, dtype=np.int64), ("token_id",),
                                          tuple(shown.next.context))}
        steps = self.strip_now.steps
        if steps:
            table = np.array([[s.position, s.token_id, s.probability, s.rank, s.kept, s.chosen,
                               i < self.strip_now.cursor] for i, s in enumerate(steps)], dtype=np.float64)
            out["generated"] = ExportArray(table, ("position", "token_id", "probability", "rank", "kept", "chosen",
                                                   "in_context"), tuple(self.token_text(s) for s in steps))
        return out
