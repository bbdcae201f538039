"""The row panels of the Variants view: one row of scores under each variant, its length, soft-capping.

Pure functions of the inputs (no state): the model caches what they return.
The synthetic row is a "needle" score at position 1 among seeded standard
normal noise; rows of every length share the same noise (a row of n scores
is the first n of the longest one), so the curves against n move smoothly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

import compute

#: The longest synthetic row.
MAX_N = 65_536
#: The row's bars show all scores up to this many, else this many of the largest (in row order).
BARS_SHOWN = 16
#: The methods of the row tab, in the order of the bars; softmax is always shown.
METHODS = ("softmax", "softmax_one", "sink", "sink_tokens", "softcap", "ssmax", "logn")
#: The variants (every method but softmax).
VARIANTS = METHODS[1:]
#: The lengths of the Length tab's curves (2 to MAX_N, log-spaced).
LENGTHS = np.unique(np.geomspace(2, MAX_N, 25).round().astype(np.int64))
#: The methods of the Length tab.
LENGTH_METHODS = ("softmax", "ssmax", "logn")
#: The x of the soft-capping curves, and Gemma 2's two caps (final logits, attention logits).
SOFTCAP_X = np.linspace(-150.0, 150.0, 601)
GEMMA_CAPS = (30.0, 50.0)


@lru_cache(maxsize=4)
def noise(seed: int) -> np.ndarray:
    """The synthetic rows' noise: MAX_N - 1 standard normal scores from ``seed`` (read-only)."""
    out = np.random.default_rng(seed).normal(size=MAX_N - 1)
    out.setflags(write=False)
    return out


def synthetic_row(n: int, needle: float, seed: int) -> np.ndarray:
    """``n`` scores: ``needle`` first, then the first n - 1 noise scores of ``seed``."""
    return np.concatenate([[needle], noise(seed)[: n - 1]])


@dataclass(frozen=True)
class VariantKnobs:
    """The parameters the variants of one row take."""

    cap: float
    sink_logit: float
    sink_tokens: int
    window: int
    s: float
    train_length: int


#: The knobs (VariantKnobs fields) each method reads: a method's weights change only with these.
METHOD_KNOBS: dict[str, tuple[str, ...]] = {
    "softmax": (), "softmax_one": (), "sink": ("sink_logit",), "sink_tokens": ("sink_tokens", "window"),
    "softcap": ("cap",), "ssmax": ("s",), "logn": ("train_length",),
}


def variant_weight(method: str, x: np.ndarray, k: VariantKnobs) -> np.ndarray:
    """One method's weights for the row ``x`` (already scaled)."""
    if method == "softmax":
        return compute.softmax(x)
    if method == "softmax_one":
        return compute.softmax_one(x)
    if method == "sink":
        return compute.softmax_with_sink(x, k.sink_logit)
    if method == "sink_tokens":
        return compute.sink_tokens_softmax(x, k.sink_tokens, k.window)
    if method == "softcap":
        return compute.softmax(compute.softcap(x, k.cap))
    if method == "ssmax":
        return compute.ssmax(x, k.s)
    if method == "logn":
        return compute.logn_softmax(x, k.train_length)
    raise KeyError(method)


def variant_weights(x: np.ndarray, k: VariantKnobs) -> dict[str, np.ndarray]:
    """Every method's weights for the row ``x`` (already scaled), by method name."""
    return {m: variant_weight(m, x, k) for m in METHODS}


def shown_indices(x: np.ndarray) -> np.ndarray:
    """The positions the bars show: every one of a short row, else the BARS_SHOWN largest, in row order."""
    if x.size <= BARS_SHOWN:
        return np.arange(x.size)
    key = np.where(np.isnan(x), -np.inf, x)
    return np.sort(np.argpartition(-key, BARS_SHOWN - 1)[:BARS_SHOWN])


@dataclass(frozen=True)
class RowResult:
    labels: tuple[str, ...]  # of the whole row
    logits: np.ndarray  # scale * scores
    weights: dict[str, np.ndarray]  # method -> the whole row's weights
    shown: np.ndarray  # the positions the bars show
    selected: tuple[str, ...]  # softmax and the variants switched on, in METHODS order

    @property
    def n(self) -> int:
        return int(self.logits.size)

    def total(self, method: str) -> float:
        """The row sum of a method's weights over the whole row (softmax₁ and the sink: below 1)."""
        return float(np.sum(self.weights[method]))

    @property
    def sink_share(self) -> float:
        """The gpt-oss sink's share: 1 minus its row sum."""
        return 1.0 - self.total("sink")

    def entropy(self, method: str) -> float:
        return float(compute.entropy(self.weights[method]))


def scaled(values: np.ndarray, scale: float) -> np.ndarray:
    """The row's logits: ``scale * values`` (an overflow to ±inf is what the row then holds)."""
    with np.errstate(all="ignore"):
        return scale * values


def row_result(values: np.ndarray, labels: tuple[str, ...], knobs: VariantKnobs, scale: float,
               selected: tuple[str, ...]) -> RowResult:
    x = scaled(values, scale)
    return RowResult(labels, x, variant_weights(x, knobs), shown_indices(x), selected)


@dataclass(frozen=True)
class LengthResult:
    """The largest weight and the entropy of needle-among-noise rows against their length n."""

    n: np.ndarray
    top: dict[str, np.ndarray]  # method -> largest weight per n
    entropy: dict[str, np.ndarray]  # method -> entropy (nats) per n
    needle: float
    scale: float

    @property
    def log_n(self) -> np.ndarray:
        """ln n: the uniform row's entropy, the most any row of n can have."""
        return np.log(self.n.astype(np.float64))


def length_rows(needle: float, seed: int, scale: float) -> tuple[np.ndarray, ...]:
    """The Length tab's rows: ``scale`` times the synthetic row of each length in LENGTHS."""
    return tuple(scale * synthetic_row(int(n), needle, seed) for n in LENGTHS)


def length_curve(method: str, xs: tuple[np.ndarray, ...], s: float, train_length: int,
                 softmax_curve: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One method's largest weight and entropy over the rows ``xs`` (of :func:`length_rows`).

    softmax reads neither knob, SSMax only ``s``, log-n only ``train_length``:
    the model keeps each curve until its own inputs change.  A row no
    longer than the training length is plain softmax under log-n (its
    factor is exactly 1, and ``1.0 * x`` is ``x``), so with ``softmax_curve``
    (softmax's curve over the same rows) log-n copies those entries.
    """
    top, ent = np.empty(len(xs)), np.empty(len(xs))
    for i, x in enumerate(xs):
        if method == "logn" and softmax_curve is not None and x.size <= train_length:
            top[i], ent[i] = softmax_curve[0][i], softmax_curve[1][i]
            continue
        if method == "softmax":
            w = compute.softmax(x)
        elif method == "ssmax":
            w = compute.ssmax(x, s)
        else:
            w = compute.logn_softmax(x, train_length)
        top[i] = w.max()
        ent[i] = compute.entropy(w)
    return top, ent


def length_result(needle: float, seed: int, scale: float, s: float, train_length: int) -> LengthResult:
    xs = length_rows(needle, seed, scale)
    curves = {m: length_curve(m, xs, s, train_length) for m in LENGTH_METHODS}
    return LengthResult(LENGTHS, {m: c[0] for m, c in curves.items()}, {m: c[1] for m, c in curves.items()},
                        needle, scale)


@dataclass(frozen=True)
class SoftcapResult:
    cap: float
    x: np.ndarray
    capped: np.ndarray  # cap * tanh(x / cap)
    clipped: np.ndarray  # hard clipping to [-cap, cap]
    grad: np.ndarray  # d softcap / dx
    clip_grad: np.ndarray  # 1 inside, 0 outside
    logits: np.ndarray  # the row (scaled)
    capped_logits: np.ndarray
    before: np.ndarray  # softmax(logits)
    after: np.ndarray  # softmax(softcap(logits))
    shown: np.ndarray


def softcap_result(logits: np.ndarray, cap: float) -> SoftcapResult:
    x = SOFTCAP_X
    capped_logits = compute.softcap(logits, cap)
    return SoftcapResult(
        cap=cap, x=x, capped=compute.softcap(x, cap), clipped=np.clip(x, -cap, cap),
        grad=compute.softcap_grad(x, cap), clip_grad=(np.abs(x) < cap).astype(np.float64),
        logits=logits, capped_logits=capped_logits, before=compute.softmax(logits),
        after=compute.softmax(capped_logits), shown=shown_indices(logits))


def logn_factor(n: int, train_length: int) -> float:
    """Qwen's factor for the query at position n (the last of a row of n): compute.logn_scale's last entry."""
    return float(compute.logn_scale(n, train_length)[-1]) if n >= 1 else 1.0
