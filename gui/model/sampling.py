"""The Sampling view's model: the LM head's knobs, seeded draws, Gumbel tricks, the MoE router.

Everything is computed here, without Qt, through :mod:`compute.sampling`, so
the window, the tests and the headless export share one code path.

Vocabulary sources
    ``zipf``: a synthetic Zipf-like logit row of ``vocab`` tokens (seeded);
    the most probable tokens get readable labels from a small built-in word
    list (``resources/vocab_words.json``), the rest ``#id``.
    ``scores``: the shared score row (its labels).
    ``file``: a 1-D logit row from a ``.npy`` (never unpickled; see :func:`load_logits`).

The knobs follow Hugging Face transformers (temperature, then top-k, then
top-p, then min-p); each has an on/off switch (``--top_k_on on``).

The expensive parts are cached on what they depend on: the temperature
curves and the Gumbel-softmax sharpening curve on the logits; the draws on
the logits, the knobs, ``draws``, ``seed`` and ``method``.  Draws are a pure
function of a :class:`DrawInputs` snapshot, so the view can run them in a
worker thread (:func:`compute_draws` reports progress and can be cancelled).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from psygnal import evented

import compute
import compute as cs
from gui.model.base import ExportArray, ViewModel, choice, param, path_param
from gui.model.scores import ScoreRow
from resources import RESOURCES

SOURCES = ("zipf", "scores", "file")
SWITCH = ("off", "on")
METHODS = ("inverse_cdf", "gumbel_max")
CURVES = ("entropy", "perplexity", "above_1pct", "top2_gap")
MIN_V, MAX_V = 2, 200_000
MAX_DRAWS = 1_000_000
#: Temperatures of the curves (the T slider's range).
CURVE_T = np.geomspace(0.05, 5.0, 61)
#: Gumbel-softmax temperatures of the sharpening curve (the tau slider's range).
TAU_GRID = np.geomspace(0.05, 10.0, 41)
#: The cumulative-probability plot gets at most about this many points (log-spaced ranks).
CUM_POINTS = 600
#: Router token embeddings have this many dimensions.
ROUTER_DIM = 32
#: The router heatmap shows at most this many tokens.
ROUTER_SHOWN = 24
#: min_expected of the chi-square test: bins expected below it are pooled.
MIN_EXPECTED = 5.0


class LoadError(ValueError):
    """A logits file that cannot be used; the message says which and what was expected."""


def words() -> tuple[str, ...]:
    text = (RESOURCES / "vocab_words.json").read_text(encoding="utf-8")
    return tuple(json.loads(text))


_WORDS: tuple[str, ...] | None = None


def word_labels(logits: np.ndarray) -> dict[int, str]:
    """Readable labels for the most probable tokens: the k-th most probable gets the k-th word."""
    global _WORDS
    if _WORDS is None:
        _WORDS = words()
    k = min(len(_WORDS), logits.size)
    top = np.argpartition(-logits, k - 1)[:k] if k < logits.size else np.arange(logits.size)
    top = top[np.argsort(-logits[top], kind="stable")]
    return {int(i): _WORDS[r] for r, i in enumerate(top)}


def load_logits(path: str | os.PathLike) -> np.ndarray:
    """Read a 1-D float logit row from a ``.npy`` (or a .npz holding ``logits``), never unpickling.

    Raises LoadError naming the file, what is wrong and what was expected.
    """
    path = Path(path)
    where = path.name
    expected = f"a .npy holding one row of {MIN_V} to {MAX_V:,} float logits (or a .npz with an array 'logits')"
    try:
        if path.suffix.lower() == ".npz":
            with np.load(path, allow_pickle=False) as f:
                if "logits" not in f.files:
                    raise LoadError(f"{where} has no array named 'logits' (it holds: "
                                    f"{', '.join(f.files) or 'nothing'}); expected {expected}")
                a = f["logits"]
        else:
            a = np.load(path, allow_pickle=False)
    except LoadError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise LoadError(f"{where} holds Python objects (pickled data), which are never loaded; "
                            f"expected {expected}") from None
        raise LoadError(f"{where} is not a readable NumPy file ({exc}); expected {expected}") from None
    except (OSError, EOFError) as exc:
        raise LoadError(f"cannot read {where}: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(a, np.ndarray):
        raise LoadError(f"{where} is not a NumPy array file; expected {expected}")
    if a.dtype.kind not in "fiu":
        raise LoadError(f"{where} holds dtype {a.dtype}; expected {expected}")
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 2 and 1 in a.shape:
        a = a.reshape(-1)
    if a.ndim != 1 or not MIN_V <= a.size <= MAX_V:
        raise LoadError(f"{where} holds an array of shape {a.shape}; expected {expected}")
    if np.isnan(a).any() or (a == np.inf).any():
        raise LoadError(f"{where} holds NaN or +inf; expected finite logits (-inf marks a banned token)")
    if not np.isfinite(a).any():
        raise LoadError(f"{where}: every logit is -inf; expected at least one finite logit")
    return a


# -- the snapshot the expensive parts depend on --------------------------------------------------
@dataclass(frozen=True, eq=False)
class Vocabulary:
    """One logit row and its labels (an identity: compared by ``key``)."""

    logits: np.ndarray
    labels: dict[int, str]  # readable labels of some tokens; others are "#id"
    key: tuple

    def label(self, i: int) -> str:
        return self.labels.get(int(i), f"#{int(i)}")


@dataclass(frozen=True, eq=False)
class DrawInputs:
    vocab: Vocabulary
    knobs: dict[str, Any]
    n: int
    seed: int
    method: str

    @property
    def key(self) -> tuple:
        return (self.vocab.key, tuple(sorted(self.knobs.items())), self.n, self.seed, self.method)


@dataclass(frozen=True, eq=False)
class DrawResult:
    inputs: DrawInputs
    draws: np.ndarray  # (n,) token ids
    counts: np.ndarray  # (V,) observed counts
    expected: np.ndarray  # (V,) n * filtered probabilities
    chi2: float
    dof: int
    p_value: float


def compute_draws(inputs: DrawInputs, progress=None, cancelled=None) -> DrawResult:
    """Draw ``n`` tokens and test them against the filtered distribution (pure; thread-safe)."""
    logits = inputs.vocab.logits
    if inputs.method == "gumbel_max":
        draws = cs.gumbel_max_sample(logits, inputs.n, inputs.seed, progress=progress,
                                     cancelled=cancelled, **inputs.knobs)
    else:
        draws = cs.sample(logits, inputs.n, inputs.seed, **inputs.knobs)
        if progress is not None:
            progress(1.0)
    filtered = cs.filter_probs(logits, **inputs.knobs)
    counts = np.bincount(draws, minlength=logits.size)
    expected = inputs.n * filtered
    keep = filtered > 0
    stat, dof, p = cs.chi_square_test(counts[keep], expected[keep], min_expected=MIN_EXPECTED)
    return DrawResult(inputs, draws, counts, expected, float(stat), int(dof), float(p))


@dataclass(frozen=True, eq=False)
class SamplingResult:
    vocab: Vocabulary
    probs: np.ndarray  # softmax(logits / T), before any cut
    filtered: np.ndarray  # what is sampled from
    stage: np.ndarray  # int8 per token: 0 kept, 1 cut by top-k, 2 by top-p, 3 by min-p
    shown: np.ndarray  # ids of the top tokens shown (by probs, descending)
    cum_rank: np.ndarray  # 1-based ranks (log-spaced) of the cumulative curve
    cum_prob: np.ndarray  # cumulative probability the top-p cut sees, at those ranks
    top_p_rank: int  # tokens kept by top-p (0 when top-p is off)
    kept: int
    entropy: float  # of probs
    entropy_filtered: float
    perplexity: float
    perplexity_filtered: float

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.vocab.label(i) for i in self.shown)

    @property
    def size(self) -> int:
        return self.vocab.logits.size


@dataclass(frozen=True, eq=False)
class RouterResult:
    gate_logits: np.ndarray  # (tokens, experts), already divided by the gate temperature
    gates: np.ndarray  # (tokens, experts) full softmax of the gate logits
    indices: np.ndarray  # (tokens, k) chosen experts, by weight descending
    weights: np.ndarray  # (tokens, k) their gate weights renormalised over the k
    load: np.ndarray  # (experts,) tokens routed to each expert
    importance: np.ndarray  # (experts,) sum of the full softmax gates over the tokens

    @property
    def dense(self) -> np.ndarray:
        """(tokens, experts): the renormalised weight of each chosen expert, 0 elsewhere."""
        out = np.zeros_like(self.gates)
        np.put_along_axis(out, self.indices, self.weights, axis=1)
        return out

    @property
    def importance_cv2(self) -> float:
        """The squared coefficient of variation of the importance (Shazeer et al.'s balance loss)."""
        m = float(self.importance.mean())
        return float(self.importance.var() / (m * m)) if m > 0 else float("nan")


def router(experts: int, k: int, tokens: int, seed: int, temperature: float) -> RouterResult:
    """Seeded token embeddings through a seeded router matrix, gated by softmax at ``temperature``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, ROUTER_DIM))
    # the matrix for expert e does not depend on how many experts there are
    w = np.random.default_rng([seed, 1]).standard_normal((64, ROUTER_DIM))[:experts].T / np.sqrt(ROUTER_DIM)
    # a learned router has a bias: a few experts are favoured (what load balancing fights)
    bias = np.random.default_rng([seed, 2]).normal(0.0, 0.5, 64)[:experts]
    logits = (x @ w + bias) / temperature
    route = cs.moe_route(logits, min(k, experts))
    indices, weights = route
    return RouterResult(logits, compute.softmax(logits, axis=-1), np.asarray(indices), np.asarray(weights),
                        cs.expert_load(indices, experts), compute.softmax(logits, axis=-1).sum(axis=0))


def _log_ranks(v: int, points: int = CUM_POINTS) -> np.ndarray:
    return np.unique(np.geomspace(1, v, points).round().astype(np.int64))


@evented
@dataclass
class SamplingModel(ViewModel):
    name: ClassVar[str] = "sampling"
    logits: str = choice("zipf", SOURCES)
    vocab: int = param(50257, minimum=10, maximum=MAX_V, log=True, integer=True)
    seed: int = param(0, minimum=0, maximum=2**31 - 1, integer=True)
    temperature: float = param(1.0, minimum=0.05, maximum=5.0, log=True)
    top_k_on: str = choice("on", SWITCH)
    top_k: int = param(50, minimum=1, maximum=MAX_V, log=True, integer=True)
    top_p_on: str = choice("on", SWITCH)
    top_p: float = param(0.9, minimum=0.01, maximum=1.0)
    min_p_on: str = choice("off", SWITCH)
    min_p: float = param(0.05, minimum=0.0, maximum=1.0)
    draws: int = param(10_000, minimum=1, maximum=MAX_DRAWS, log=True, integer=True)
    draw_method: str = choice("inverse_cdf", METHODS)
    tau: float = param(1.0, minimum=0.05, maximum=10.0, log=True)
    shown: int = param(12, minimum=3, maximum=40, integer=True)
    t_curve: str = choice("entropy", CURVES)
    experts: int = param(8, minimum=2, maximum=64, integer=True)
    router_k: int = param(2, minimum=1, maximum=8, integer=True)
    router_tokens: int = param(1024, minimum=16, maximum=65_536, log=True, integer=True)
    gate_temperature: float = param(1.0, minimum=0.05, maximum=5.0, log=True)
    #: a .npy of logits (``--logits_file`` on the command line, saved in sessions)
    logits_file: str = path_param()
    # view state: not saved, not options
    loaded: np.ndarray | None = None
    file_path: str = ""

    def __post_init__(self) -> None:
        self._vocab: Vocabulary | None = None
        self._cache: dict[str, tuple[tuple, Any]] = {}
        self._draws: DrawResult | None = None

    # -- inputs ------------------------------------------------------------------------------
    def set_param(self, name: str, value) -> None:
        """As ViewModel.set_param; setting ``logits_file`` loads it (a bad file raises LoadError, nothing changes)."""
        if name == "logits_file":
            path = self.params()["logits_file"].check(value)
            if path:
                self.load_file(path)
            else:
                self.logits_file = ""
            return
        super().set_param(name, value)

    def load_file(self, path: str | os.PathLike) -> np.ndarray:
        logits = load_logits(path)
        self.loaded = logits
        self.file_path = self.logits_file = os.fspath(path)
        self.logits = "file"
        return logits

    def knobs(self) -> dict[str, Any]:
        """The keyword arguments of compute.sampling.filter_probs for the switches that are on."""
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
        else:
            key = ("zipf", self.vocab, self.seed)
        if self._vocab is not None and self._vocab.key == key:
            return self._vocab
        if key[0] == "scores":
            if np.isnan(values).any():
                raise ValueError("the score row holds NaN: a token with an undefined score cannot be sampled")
            if not np.isfinite(values).any():
                raise ValueError("every score is -inf: there is nothing to sample")
            vocab = Vocabulary(values, dict(enumerate(scores.labels)), key)
        elif key[0] == "file":
            vocab = Vocabulary(self.loaded, word_labels(self.loaded), key)
        else:
            logits = cs.zipf_logits(self.vocab, seed=self.seed)
            vocab = Vocabulary(logits, word_labels(logits), key)
        self._vocab = vocab
        return vocab

    def _cached(self, name: str, key: tuple, make):
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = make()
        self._cache[name] = (key, value)
        return value

    # -- results -----------------------------------------------------------------------------
    def result(self, scores: ScoreRow | None = None) -> SamplingResult:
        vocab = self.vocabulary(scores)
        knobs = self.knobs()
        return self._cached("result", (vocab.key, tuple(knobs.items()), self.shown),
                            lambda: self._result(vocab, knobs))

    def _result(self, vocab: Vocabulary, knobs: dict[str, Any]) -> SamplingResult:
        logits = vocab.logits
        fr = cs.filter_result(logits, **knobs)
        probs, filtered, stage = fr.probs, fr.filtered, fr.stage
        v = logits.size
        shown_n = min(self.shown, v)
        top = np.argpartition(-probs, shown_n - 1)[:shown_n] if shown_n < v else np.arange(v)
        top = top[np.lexsort((top, -probs[top]))]
        # the distribution top-p sees: after the temperature and top-k
        before_p = np.where(stage == 1, 0.0, probs)
        total = before_p.sum()
        ordered = np.sort(before_p)[::-1] / (total if total > 0 else 1.0)
        cum = np.cumsum(ordered)
        ranks = _log_ranks(v)
        top_p_rank = int(np.count_nonzero((stage == 0) | (stage == 3))) if knobs["top_p"] is not None else 0
        return SamplingResult(
            vocab=vocab, probs=probs, filtered=filtered, stage=stage, shown=top,
            cum_rank=ranks, cum_prob=cum[ranks - 1], top_p_rank=top_p_rank,
            kept=int(np.count_nonzero(filtered > 0)),
            entropy=float(compute.entropy(probs)), entropy_filtered=float(compute.entropy(filtered)),
            perplexity=float(compute.perplexity(probs)), perplexity_filtered=float(compute.perplexity(filtered)),
        )

    def curves(self, scores: ScoreRow | None = None) -> dict[str, np.ndarray]:
        """Entropy, perplexity, tokens above 1 % and the top-2 gap against T (CURVE_T)."""
        vocab = self.vocabulary(scores)
        return self._cached("curves", (vocab.key,), lambda: cs.sampling_curves(vocab.logits, CURVE_T))

    def gumbel(self, scores: ScoreRow | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One relaxed Gumbel-softmax sample at ``tau`` (seeded) and its hard one-hot."""
        vocab = self.vocabulary(scores)
        return self._cached("gumbel", (vocab.key, self.tau, self.seed), lambda: (
            cs.gumbel_softmax(vocab.logits, self.tau, self.seed),
            cs.gumbel_softmax(vocab.logits, self.tau, self.seed, hard=True)))

    def sharpening(self, scores: ScoreRow | None = None) -> np.ndarray:
        """The largest entry of the relaxed sample (same noise) at each tau of TAU_GRID."""
        vocab = self.vocabulary(scores)
        return self._cached("sharpening", (vocab.key, self.seed), lambda: np.array(
            [cs.gumbel_softmax(vocab.logits, float(t), self.seed).max() for t in TAU_GRID]))

    def draw_inputs(self, scores: ScoreRow | None = None) -> DrawInputs:
        return DrawInputs(self.vocabulary(scores), self.knobs(), int(self.draws), int(self.seed), self.draw_method)

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
        """Keep draws made elsewhere (a worker) if they are for the current inputs."""
        if result.inputs.key != self.draw_inputs(scores).key:
            return False
        self._draws = result
        return True

    def draw(self, scores: ScoreRow | None = None) -> DrawResult:
        cached = self.cached_draws(scores)
        if cached is None:
            cached = self._draws = compute_draws(self.draw_inputs(scores))
        return cached

    def router(self) -> RouterResult:
        key = (self.experts, self.router_k, self.router_tokens, self.seed, self.gate_temperature)
        return self._cached("router", key, lambda: router(*key))

    # -- export ------------------------------------------------------------------------------
    def arrays(self, scores: ScoreRow | None = None) -> dict[str, ExportArray]:
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
        }
