"""The Sampling view's model: the LM head's knobs, seeded draws, Gumbel tricks, the MoE router.

Everything is computed here, without Qt, through :mod:`compute`, so the
window, the tests and the headless export share one code path.

Vocabulary sources (:mod:`gui.model.sampling.vocabulary`)
    ``zipf``: a synthetic Zipf-like logit row of ``vocab`` tokens (seeded);
    the most probable tokens get readable labels from a small built-in word
    list (``resources/vocab_words.json``), the rest ``#id``.
    ``scores``: the shared score row (its labels).
    ``file``: a 1-D logit row from a ``.npy`` (never unpickled; see ``load_logits``).
    ``model``: a real model's next-token logits after ``prompt`` (and the
    generate strip's tokens), labelled with its token strings; until a model
    has run, the synthetic row (see :mod:`gui.model.sampling.real`).

The knobs follow Hugging Face transformers (temperature, then top-k, then
top-p, then min-p); each has an on/off switch (``--top_k_on on``).

The expensive parts are cached on what they depend on: the temperature
curves and the Gumbel-softmax sharpening curve on the logits; the softmax
at T and its entropy on the logits and T (a k, p or min-p move makes only
the cuts: :mod:`gui.model.sampling.knobs`); the draft's q and the
speculative rule on the target, the draft and its T; the draws on
the logits, the knobs, ``draws``, ``seed`` and ``method``.  Draws are a pure
function of a :class:`DrawInputs` snapshot (:mod:`gui.model.sampling.draws`),
so the view can run them in a background job and hand the result back to
:meth:`SamplingModel.store_draws`, which keeps only draws of the current inputs.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

import compute
from gui.model.base import ExportArray, ViewModel, choice, param, path_param, text_param
from gui.model.llm_source import MAX_MODEL_TEXT, MAX_PROMPT_TEXT, ModelSource
from gui.model.sampling.curves import CURVE_T, curve_job
from gui.model.sampling.draws import DrawInputs, DrawResult, compute_draws
from gui.model.sampling.knobs import CUM_POINTS, _log_ranks, knob_result  # noqa: F401  (re-exported)
from gui.model.sampling.real import DEFAULT_PROMPT, GenStrip, ModelSourcePart, context_steps
from gui.model.sampling.results import CurveResult, GumbelResult, SamplingResult
from gui.model.sampling.router import ROUTER_MAX_TOKENS, Embeddings, RouterResult, router, router_scores
from gui.model.sampling.rowmath import top_ids_among
from gui.model.sampling.speculative import (
    SpeculativeResult,
    draft_eps,
    draft_logits,
    draft_rule,
    rate_curve,
    speculative,
    speculative_arrays,
    with_shown,
)
from gui.model.sampling.vocabulary import (
    MAX_V,
    SOURCES,
    Vocabulary,
    file_vocabulary,
    load_logits,
    model_vocabulary,
    score_vocabulary,
    zipf_vocabulary,
)
from gui.model.scores import ScoreRow

SWITCH = ("off", "on")
METHODS = ("inverse_cdf", "gumbel_max")
CURVES = ("entropy", "perplexity", "above_1pct", "top2_gap")
MAX_DRAWS = 1_000_000
#: Gumbel-softmax temperatures of the sharpening curve (the tau slider's range).
TAU_GRID = np.geomspace(0.05, 10.0, 41)
#: The knobs with an on/off switch; each knob's value applies only while its switch is on.
SWITCHED_KNOBS = ("top_k", "top_p", "min_p")


@evented
@dataclass
class SamplingModel(ModelSourcePart, ViewModel):
    name: ClassVar[str] = "sampling"
    #: The view's tabs, in order, by the names a lesson step's ``tab`` uses (BaseView.select_tab).
    TAB_NAMES: ClassVar[tuple[str, ...]] = ("vocab", "gumbel", "router", "speculative")
    logits: str = choice("zipf", SOURCES)
    vocab: int = param(50257, minimum=10, maximum=MAX_V, log=True, integer=True)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True, control="spin")
    temperature: float = param(1.0, minimum=0.05, maximum=5.0, log=True)
    top_k_on: str = choice("on", SWITCH)
    top_k: int = param(50, minimum=1, maximum=MAX_V, log=True, integer=True)
    top_p_on: str = choice("on", SWITCH)
    top_p: float = param(0.9, minimum=0.01, maximum=1.0)
    min_p_on: str = choice("off", SWITCH)
    min_p: float = param(0.05, minimum=0.0, maximum=1.0)
    draws: int = param(10_000, minimum=1, maximum=MAX_DRAWS, log=True, integer=True)
    draw_method: str = choice("inverse_cdf", METHODS)
    tau: float = param(0.5, minimum=0.05, maximum=10.0, log=True)  # peaked, not yet one-hot: the tab shows both
    shown: int = param(12, minimum=3, maximum=40, integer=True)
    t_curve: str = choice("entropy", CURVES)
    experts: int = param(8, minimum=2, maximum=64, integer=True)
    router_k: int = param(2, minimum=1, maximum=8, integer=True)
    router_tokens: int = param(1024, minimum=16, maximum=ROUTER_MAX_TOKENS, log=True, integer=True)
    gate_temperature: float = param(1.0, minimum=0.05, maximum=5.0, log=True)
    #: speculative decoding: the draft is the vocabulary's logits plus noise, at its own temperature
    draft_temperature: float = param(1.5, minimum=0.05, maximum=5.0, log=True)
    draft_noise: float = param(0.5, minimum=0.0, maximum=3.0)
    spec_steps: int = param(10_000, minimum=1, maximum=MAX_DRAWS, log=True, integer=True)
    #: a .npy of logits (``--logits_file`` on the command line, saved in sessions)
    logits_file: str = path_param()
    #: the model source's model (a folder or a Hugging Face id) and prompt
    model: str = text_param("", max_length=MAX_MODEL_TEXT)
    prompt: str = text_param(DEFAULT_PROMPT, max_length=MAX_PROMPT_TEXT)
    #: the generate strip (saved in sessions as extra state; one undo step per change)
    strip: GenStrip = field(default_factory=GenStrip)
    # view state: not saved, not options
    loaded: np.ndarray | None = None
    file_path: str = ""

    def __post_init__(self) -> None:
        self._vocab: Vocabulary | None = None
        self._cache: dict[str, tuple[tuple, Any]] = {}
        self._draws: DrawResult | None = None
        self.llm = ModelSource(context_steps, pass_request=True)  # the model source's runs (not a field)

    # -- inputs ------------------------------------------------------------------------------
    def applies(self, name: str) -> bool:
        """V only for the synthetic vocabulary; a knob's value only while its switch is on."""
        if name == "vocab":
            return self.logits == "zipf"
        if name in SWITCHED_KNOBS:
            return getattr(self, f"{name}_on") == "on"
        return True

    def value_in_use(self, name: str) -> Any:
        """V of a loaded file's or a model's logits; nothing for the score row (its table shows its length)."""
        if name == "vocab" and self.logits == "scores":
            return None
        if name == "vocab" and self.model_shown is not None:
            return int(self.model_shown.next.logits.size)
        if name == "vocab" and self.logits == "file" and self.loaded is not None:
            return int(self.loaded.size)
        return super().value_in_use(name)  # no file yet: the synthetic row of V is what is drawn

    def set_param(self, name: str, value) -> None:
        """As ViewModel.set_param; setting ``logits_file`` loads it (a bad file raises LoadError, nothing changes);
        a model folder that is not there, and the model source without the models extra, are refused."""
        self.check_model_param(name, value)
        if name == "logits_file":
            path = self.params()["logits_file"].check(value)
            if path:
                self.load_file(path)
            else:
                self.logits_file = ""
            return
        super().set_param(name, value)

    def update_from_dict(self, values: dict[str, Any]) -> None:
        """As ViewModel's, with the model source's checks first."""
        for name, value in values.items():
            self.check_model_param(name, value)
        super().update_from_dict(values)

    # -- the generate strip in sessions ---------------------------------------------------------
    def extra_state(self) -> dict[str, Any]:
        return self.strip_state()

    def check_extra_state(self, state: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(state) - {"strip"})
        if unknown:
            return super().check_extra_state({k: state[k] for k in unknown})
        return {"strip": GenStrip.from_state(state["strip"])} if "strip" in state else {}

    def apply_extra_state(self, checked: dict[str, Any]) -> None:
        self.strip = checked.get("strip", GenStrip())

    def load_file(self, path: str | os.PathLike) -> np.ndarray:
        logits = load_logits(path)
        self.loaded = logits
        self.file_path = self.logits_file = os.fspath(path)
        self.logits = "file"
        return logits

    def knobs(self) -> dict[str, Any]:
        """The keyword arguments of compute.filter_probs for the switches that are on."""
        return {
            "temperature": float(self.temperature),
            "top_k": int(self.top_k) if self.top_k_on == "on" else None,
            "top_p": float(self.top_p) if self.top_p_on == "on" else None,
            "min_p": float(self.min_p) if self.min_p_on == "on" else None,
        }

    def vocabulary(self, scores: ScoreRow | None) -> Vocabulary:
        """The logit row of the current source (cached on what it depends on)."""
        if self.logits == "scores" and scores is not None:
            values = np.asarray(scores.values, dtype=np.float64)
            key = ("scores", values.tobytes(), scores.labels)
        elif self.logits == "file" and self.loaded is not None:
            key = ("file", id(self.loaded))
        elif self.logits == "model" and self.model_shown is not None:
            nt = self.model_shown.next
            key = ("model", nt.source, tuple(nt.ids.tolist()))
        else:
            key = ("zipf", self.vocab, self.seed)
        if self._vocab is not None and self._vocab.key == key:
            return self._vocab
        if key[0] == "scores":
            vocab = score_vocabulary(values, scores.labels, key)
        elif key[0] == "file":
            vocab = file_vocabulary(self.loaded, key)
        elif key[0] == "model":
            vocab = model_vocabulary(nt.logits, nt.tokens, key)
        else:
            vocab = zipf_vocabulary(self.vocab, self.seed, key)
        self._vocab = vocab
        return vocab

    # -- results -----------------------------------------------------------------------------
    def result(self, scores: ScoreRow | None = None) -> SamplingResult:
        vocab = self.vocabulary(scores)
        knobs = self.knobs()
        base = (vocab.key, tuple(knobs.items()))
        r = self._cached("result", base, lambda: self._result(vocab, knobs))
        # the tokens shown are the only part that depends on how many: a new count does not filter again
        return self._cached("result_shown", (*base, self.shown), lambda: r if r.shown.size == min(self.shown, r.size)
                            else replace(r, shown=top_ids_among(r.probs, vocab.ranked, self.shown)))

    def _result(self, vocab: Vocabulary, knobs: dict[str, Any]) -> SamplingResult:
        return knob_result(vocab, knobs, self.shown, self._cache)

    def curves(self, scores: ScoreRow | None = None) -> dict[str, np.ndarray]:
        """Entropy, perplexity, tokens above 1 % and the top-2 gap against T (CURVE_T)."""
        vocab = self.vocabulary(scores)
        return self._cached("curves", (vocab.key,), lambda: curve_job(vocab.logits))

    def curves_inputs(self, scores: ScoreRow | None = None) -> tuple[tuple, np.ndarray]:
        """What the curves are made of: their key and the vocabulary's logits (for a background job)."""
        vocab = self.vocabulary(scores)
        return (vocab.key,), vocab.logits

    def cached_curves(self, scores: ScoreRow | None = None) -> dict[str, np.ndarray] | None:
        """The curves of the current vocabulary when already made, else None (never computes)."""
        hit = self._cache.get("curves")
        return hit[1] if hit is not None and hit[0] == self.curves_inputs(scores)[0] else None

    def store_curves(self, key: tuple, curves: dict[str, np.ndarray], scores: ScoreRow | None = None) -> bool:
        """Keep curves made elsewhere (a background job) if they are of the current vocabulary."""
        if key != self.curves_inputs(scores)[0]:
            return False
        self._cache["curves"] = (key, curves)
        return True

    def gumbel(self, scores: ScoreRow | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One relaxed Gumbel-softmax sample at ``tau`` (seeded) and its hard one-hot."""
        vocab = self.vocabulary(scores)
        return self._cached("gumbel", (vocab.key, self.tau, self.seed), lambda: (
            compute.gumbel_softmax(vocab.logits, self.tau, self.seed),
            compute.gumbel_softmax(vocab.logits, self.tau, self.seed, hard=True)))

    def sharpening(self, scores: ScoreRow | None = None) -> np.ndarray:
        """The largest entry of the relaxed sample (same noise) at each tau of TAU_GRID."""
        vocab = self.vocabulary(scores)
        return self._cached("sharpening", (vocab.key, self.seed), lambda: np.array(
            [compute.gumbel_softmax(vocab.logits, float(t), self.seed).max() for t in TAU_GRID]))

    def t_curve_result(self, scores: ScoreRow | None = None) -> CurveResult:
        """The chosen quantity (``t_curve``) against T and its value at the current T."""
        r = self.result(scores)
        y = self.curves(scores)[self.t_curve]
        now = {"entropy": r.entropy, "perplexity": r.perplexity}.get(self.t_curve)
        if now is None:  # tokens above 1 % and the top-2 gap: interpolate on the grid
            now = float(np.interp(math.log(self.temperature), np.log(CURVE_T), y))
        return CurveResult(CURVE_T, y, float(self.temperature), now, self.t_curve)

    def gumbel_result(self, scores: ScoreRow | None = None) -> GumbelResult:
        """The Gumbel-softmax sample over the tokens shown and the sharpening curve (41 softmaxes of V)."""
        r = self.result(scores)
        relaxed, hard = self.gumbel(scores)
        ids = r.shown
        winner = int(hard.argmax())
        curve = CurveResult(TAU_GRID, self.sharpening(scores), float(self.tau), float(relaxed.max()))
        return GumbelResult(r.labels, relaxed[ids], hard[ids], curve, r.vocab.label(winner),
                            winner in set(ids.tolist()))

    def draw_inputs(self, scores: ScoreRow | None = None) -> DrawInputs:
        vocab, knobs = self.vocabulary(scores), self.knobs()
        known = self._known_result(vocab, knobs)
        return DrawInputs(vocab, knobs, int(self.draws), int(self.seed), self.draw_method,
                          None if known is None else known.filtered, None if known is None else known.support)

    def _known_result(self, vocab: Vocabulary, knobs: dict[str, Any]) -> SamplingResult | None:
        """The cached result of these knobs on this vocabulary, else None (never computes)."""
        hit = self._cache.get("result")
        if hit is not None and hit[0] == (vocab.key, tuple(knobs.items())):
            return hit[1]
        return None

    def _known_filtered(self, vocab: Vocabulary, knobs: dict[str, Any]) -> np.ndarray | None:
        """``compute.filter_probs(vocab.logits, **knobs)`` if the cached result holds it (else None; never computes)."""
        known = self._known_result(vocab, knobs)
        return None if known is None else known.filtered

    def cached_draws(self, scores: ScoreRow | None = None) -> DrawResult | None:
        """The draws of the current inputs when already made, else None (never draws)."""
        d = self._draws
        if d is not None and d.inputs.key == self.draw_inputs(scores).key:
            return d
        return None

    @property
    def last_draws(self) -> DrawResult | None:
        return self._draws

    def store_draws(self, result: DrawResult, scores: ScoreRow | None = None) -> bool:
        """Keep draws made elsewhere (a background job) if they are for the current inputs."""
        if result.inputs.key != self.draw_inputs(scores).key:
            return False
        self._draws = result
        return True

    def draw(self, scores: ScoreRow | None = None) -> DrawResult:
        """The draws of the current inputs, made here (on the calling thread) if needed."""
        cached = self.cached_draws(scores)
        if cached is None:
            cached = self._draws = compute_draws(self.draw_inputs(scores))
        return cached

    def speculative_result(self, scores: ScoreRow | None = None) -> SpeculativeResult:
        """The draft q against the target p and ``spec_steps`` simulated steps (see gui.model.sampling.speculative)."""
        vocab = self.vocabulary(scores)
        knobs = self.knobs()
        noise, seed = float(self.draft_noise), int(self.seed)
        base = (vocab.key, tuple(knobs.items()), noise, seed)

        def target() -> np.ndarray:  # what the view samples from: the result's when it is already made
            known = self._known_filtered(vocab, knobs)
            return compute.filter_probs(vocab.logits, **knobs) if known is None else known

        # the noise itself depends on neither its level nor the draft T: a Draft noise move only scales it
        def eps() -> np.ndarray:
            return self._cached("draft_eps", (vocab.logits.size, seed), lambda: draft_eps(vocab.logits.size, seed))

        draft = self._cached("draft", (vocab.key, noise, seed), lambda: draft_logits(
            vocab.logits, noise, seed, eps() if noise else None))
        curve = self._cached("spec_curve", base, lambda: rate_curve(
            target(), draft, {k: v for k, v in knobs.items() if k != "temperature"}))
        draft_t = float(self.draft_temperature)
        # q and the acceptance rule do not depend on the steps: a Steps N move only runs the steps again
        rule = self._cached("spec_rule", (*base, draft_t), lambda: draft_rule(target(), draft, knobs, draft_t))
        key = (*base, draft_t, int(self.spec_steps))
        s = self._cached("speculative", key, lambda: speculative(
            vocab, knobs, draft_t, noise, int(self.spec_steps), seed, int(self.shown), curve,
            p=target(), draft=draft, rule=rule))
        # the tokens shown are the only part that depends on how many: a new count does not run the steps again
        return self._cached("speculative_shown", (*key, int(self.shown)), lambda: with_shown(s, vocab, int(self.shown)))

    def router(self) -> RouterResult:
        key = (self.experts, self.router_k, self.router_tokens, self.seed, self.gate_temperature)
        # the gate's scores do not depend on its temperature or k: a move of either draws no new tokens
        # a new token count draws only the tokens not drawn yet (the embeddings are kept per seed)
        emb = self._cached("router_embeddings", (self.seed,), lambda: Embeddings(int(self.seed)))
        scores = self._cached("router_scores", (self.experts, self.router_tokens, self.seed),
                              lambda: router_scores(self.experts, self.router_tokens, self.seed, emb))
        return self._cached("router", key, lambda: router(*key, scores=scores))

    # -- export ------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow | None = None) -> dict[str, ExportArray]:
        """Everything the view draws; with the model source also ``tokens``, ``context_ids`` and the
        strip (``generated``), the model run here first if it has not yet (ModelError if it fails)."""
        self.ensure_model_result()
        r = self.result(scores)
        d = self.draw(scores)
        relaxed, hard = self.gumbel(scores)
        c = self.curves(scores)
        rt = self.router()
        ids = r.shown
        top = np.column_stack([ids, r.vocab.logits[ids], r.probs[ids], r.filtered[ids], r.stage[ids],
                               d.expected[ids], d.counts[ids], relaxed[ids], hard[ids]])
        v = r.size
        full = np.column_stack([r.vocab.logits, r.probs, r.filtered])
        curve_cols = ("temperature", *CURVES)
        experts = tuple(f"expert {e + 1}" for e in range(rt.gates.shape[1]))
        return {
            "top_tokens": ExportArray(top, ("token_id", "logit", "prob", "filtered", "cut_stage", "expected",
                                            "observed", "gumbel_relaxed", "gumbel_hard"), r.labels),
            "vocabulary": ExportArray(full, ("logit", "prob", "filtered"), csv=False),
            "logits": ExportArray(r.vocab.logits, ("logit",), csv=False),
            "filtered": ExportArray(r.filtered, ("filtered",), csv=False),
            "draws": ExportArray(d.draws.astype(np.int64), ("token_id",), csv=False),
            "chi_square": ExportArray(np.array([[d.inputs.n, d.chi2, d.dof, d.p_value, r.kept, v]]),
                                      ("draws", "chi2", "dof", "p_value", "kept", "vocab")),
            "temperature_curves": ExportArray(np.column_stack([CURVE_T, *(c[k] for k in CURVES)]), curve_cols),
            "gumbel_sharpening": ExportArray(np.column_stack([TAU_GRID, self.sharpening(scores)]),
                                             ("tau", "max_relaxed")),
            "router_gates": ExportArray(rt.dense, experts, tuple(f"token {i + 1}" for i in range(rt.dense.shape[0]))),
            "router_load": ExportArray(np.column_stack([np.arange(1, len(experts) + 1), rt.load, rt.importance]),
                                       ("expert", "tokens", "importance")),
            **speculative_arrays(self.speculative_result(scores)),
            **self.model_arrays(),
        }
