"""The attention panels of the Variants view: ALiBi, sigmoid attention, QK-norm.

Each takes seeded random queries and keys (standard normal) and returns
what its panels draw; pure functions, cached by the model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import compute

#: ALiBi: tokens and head size of the random q, k.
ALIBI_N = 16
ALIBI_D = 16
#: Sigmoid attention: head size; the row-sum curve's lengths and how many queries it averages.
SIGMOID_D = 16
SIGMOID_CURVE_N = np.unique(np.geomspace(4, 4096, 25).round().astype(np.int64))
SIGMOID_CURVE_QUERIES = 16
#: QK-norm: tokens; the input scales of the curves; histogram bins.
QK_N = 64
QK_SCALES = np.geomspace(0.1, 100.0, 25)
QK_BINS = 60
#: The QK-norm curves take this many input scales at a time (5 x 64 x 64 floats: 160 kB, in the cache).
SCALE_BLOCK = 5
#: QK-norm's eps (compute.qk_norm's default).
QK_EPS = 1e-6


def random_qk(n: int, d: int, seed: int, salt: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded standard normal q and k, ``(n, d)`` each (``salt`` keeps the panels' draws apart)."""
    rng = np.random.default_rng([seed, salt])
    return rng.normal(size=(n, d)), rng.normal(size=(n, d))


@dataclass(frozen=True)
class AlibiResult:
    heads: int
    head: int  # 1-based, clamped to heads
    slopes: np.ndarray  # (heads,)
    bias: np.ndarray  # (heads, n, n): -slope * |i - j|
    scores: np.ndarray  # q k^T / sqrt(d)
    plain: np.ndarray  # softmax(scores)
    biased: np.ndarray  # softmax(scores + bias of the head shown)

    @property
    def head_bias(self) -> np.ndarray:
        return self.bias[self.head - 1]

    @property
    def slope(self) -> float:
        return float(self.slopes[self.head - 1])


def alibi_result(heads: int, head: int, seed: int) -> AlibiResult:
    q, k = random_qk(ALIBI_N, ALIBI_D, seed, 1)
    scores = compute.attention_scores(q, k)
    bias = compute.alibi_bias(ALIBI_N, heads)
    head = min(max(head, 1), heads)
    return AlibiResult(heads, head, compute.alibi_slopes(heads), bias, scores, compute.softmax(scores),
                       compute.softmax(scores + bias[head - 1]))


@dataclass(frozen=True)
class SigmoidResult:
    n: int
    sigmoid: np.ndarray  # (n, n) sigmoid weights, b = -log n
    softmax: np.ndarray  # (n, n) softmax weights of the same q, k
    curve_n: np.ndarray
    curve_sum: np.ndarray  # mean row sum of the sigmoid weights, b = -log n
    curve_sum_b0: np.ndarray  # the same without the bias (b = 0)

    @property
    def sigmoid_sums(self) -> np.ndarray:
        return self.sigmoid.sum(axis=-1)

    @property
    def softmax_sums(self) -> np.ndarray:
        return self.softmax.sum(axis=-1)


def sigmoid_curves(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean row sums of sigmoid attention against n, with b = -log n and with b = 0.

    SIGMOID_CURVE_QUERIES queries against the first n of 4096 keys: one
    score matrix, whose first n columns are the scores of n keys (what
    :func:`compute.sigmoid_attention` computes for them, without a matmul per n).
    """
    top = int(SIGMOID_CURVE_N[-1])
    q, k = random_qk(top, SIGMOID_D, seed, 3)
    scores = compute.attention_scores(q[:SIGMOID_CURVE_QUERIES], k)
    with_bias, without = np.empty(SIGMOID_CURVE_N.size), np.empty(SIGMOID_CURVE_N.size)
    for i, n in enumerate(SIGMOID_CURVE_N):
        part = scores[:, :n]
        with_bias[i] = compute.sigmoid(part - math.log(n)).sum(axis=-1).mean()
        without[i] = compute.sigmoid(part).sum(axis=-1).mean()
    return with_bias, without


def sigmoid_result(n: int, seed: int, curves: tuple[np.ndarray, np.ndarray]) -> SigmoidResult:
    q, k = random_qk(n, SIGMOID_D, seed, 2)
    v = np.zeros((n, 1))
    sig, _ = compute.sigmoid_attention(q, k, v)
    soft, _ = compute.attention(q, k, v)
    return SigmoidResult(n, sig, soft, SIGMOID_CURVE_N, *curves)


@dataclass(frozen=True)
class QkResult:
    d: int
    scale: float
    gain: float
    plain: np.ndarray  # (n, n) logits q k^T / sqrt(d) of the scaled inputs
    normed: np.ndarray  # the same after RMS QK-norm with the gain
    edges: np.ndarray  # the histogram's bin edges (shared)
    plain_counts: np.ndarray
    normed_counts: np.ndarray
    scales: np.ndarray
    plain_max: np.ndarray  # largest |logit| against the input scale
    normed_max: np.ndarray
    plain_entropy: np.ndarray  # mean attention entropy (nats) against the input scale
    normed_entropy: np.ndarray

    @property
    def bound(self) -> float:
        """RMS-normalised q and k have norm sqrt(d) * gain: |logit| <= sqrt(d) * gain²."""
        return math.sqrt(self.d) * self.gain**2


def _logits(q: np.ndarray, k: np.ndarray, gain: float | None) -> np.ndarray:
    if gain is not None:
        q, k = compute.qk_norm(q, "rms", gain, QK_EPS), compute.qk_norm(k, "rms", gain, QK_EPS)
    return compute.attention_scores(q, k)


def qk_inputs(d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """QK-norm's random q and k, ``(QK_N, d)`` each."""
    return random_qk(QK_N, d, seed, 4)


def qk_product(qk: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``q k^T`` of :func:`qk_inputs`' q and k, unscaled (what :func:`qk_basis` and, at c = 1,
    :func:`qk_plain_logits` are made of)."""
    q, k = qk
    return q @ k.T


def qk_basis(d: int, seed: int, qk: tuple[np.ndarray, np.ndarray] | None = None,
             product: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What every input scale's logits are made of: ``q k^T / sqrt(d)`` and the rows' mean squares of q, k
    (``qk``: :func:`qk_inputs` of d and seed, if already drawn; ``product``: their :func:`qk_product`)."""
    q, k = qk or qk_inputs(d, seed)
    return ((q @ k.T) if product is None else product) / math.sqrt(d), np.mean(q * q, axis=-1), np.mean(k * k, axis=-1)


def weights_entropy(p: np.ndarray) -> np.ndarray:
    """:func:`compute.entropy` of the rows of ``p`` (along the last axis), bit for bit, for weights.

    For ``p >= 0`` (softmax's output) the same terms as compute's: ``-(p * log p)``
    where ``p > 0`` and +0.0 where ``p == 0``, summed along the same contiguous
    last axis; only the log skips the zeros (``where=``) instead of fixing the
    NaN of ``0 * log 0`` afterwards (about a quarter of the time).  Anything
    else (a negative, NaN, not C-contiguous float64) goes to compute.entropy.
    """
    p = np.asarray(p)
    if p.dtype != np.float64 or p.ndim == 0 or not p.flags.c_contiguous or not (p >= 0).all():
        return compute.entropy(p)
    pos = p > 0
    terms = np.zeros_like(p)
    with np.errstate(all="ignore"):
        np.log(p, out=terms, where=pos)
        terms *= p
        np.negative(terms, out=terms, where=pos)
    return terms.sum(axis=-1)


def _softmax_mean_entropy(logits: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """``weights_entropy(compute.softmax(logits)).mean(axis=-1)``, bit for bit, overwriting ``logits``.

    For a fresh float64 stack ``(scales, rows, n)`` of finite logits: the operations
    of compute's softmax for finite rows at T = 1 (the row maximum subtracted, ``exp``,
    divided by the row's pairwise sum), in place, then :func:`weights_entropy`'s
    terms (the log only where ``p > 0``; every ``p`` is positive unless some
    underflowed) in ``scratch`` (``logits``' shape), and the mean over the rows.
    Without compute's checks, copies and output array it is about a quarter of
    the time (``exp`` and ``log`` are the rest).  A row whose maximum is not finite
    (an overflowed product) goes to compute's own softmax and entropy.
    """
    m = np.maximum.reduce(logits, axis=-1, keepdims=True)
    if not np.isfinite(m).all():
        return weights_entropy(compute.softmax(logits)).mean(axis=-1)
    with np.errstate(all="ignore"):
        np.subtract(logits, m, out=logits)
        np.exp(logits, out=logits)
        np.divide(logits, np.add.reduce(logits, axis=-1, keepdims=True), out=logits)
        p, terms = logits, scratch
        pos = p > 0
        if pos.all():
            np.log(p, out=terms)
            terms *= p
            np.negative(terms, out=terms)
        else:
            terms.fill(0.0)
            np.log(p, out=terms, where=pos)
            terms *= p
            np.negative(terms, out=terms, where=pos)
    return np.add.reduce(terms, axis=-1).mean(axis=-1)


def _scale_curves(logits_of: Callable[[slice], np.ndarray], top_of: Callable[[slice], np.ndarray] | None = None,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The largest |logit| and the mean attention entropy of each ``logits[i]`` (one per c of QK_SCALES).

    ``logits_of(s)`` gives a fresh stack of the scales ``QK_SCALES[s]``
    (overwritten here); they are taken SCALE_BLOCK at a time, so each block
    stays in the cache through its softmax and entropy (rows are independent:
    the same bits as one call per c, or one over the whole stack).
    ``top_of(s)``, if given, is the largest |logit| of those scales worked out
    without the stack.
    """
    top, ent = np.empty(QK_SCALES.size), np.empty(QK_SCALES.size)
    scratch = np.empty((SCALE_BLOCK, QK_N, QK_N))
    for i in range(0, QK_SCALES.size, SCALE_BLOCK):
        s = slice(i, i + SCALE_BLOCK)
        logits = logits_of(s)
        top[s] = np.abs(logits).max(axis=(1, 2)) if top_of is None else top_of(s)
        ent[s] = _softmax_mean_entropy(logits, scratch[: logits.shape[0]].reshape(logits.shape))
    return top, ent


def qk_plain_curves(d: int, seed: int, basis: tuple[np.ndarray, ...] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Without QK-norm (no gain): largest |logit| and mean entropy against the input scale c."""
    raw = (basis or qk_basis(d, seed))[0]
    squares = (QK_SCALES * QK_SCALES)[:, None, None]
    # |c² r| rounds as c² |r| does, and rounding keeps order: the largest |c² r| is c² times the largest |r|
    top = np.abs(raw).max()
    return _scale_curves(lambda s: squares[s] * raw, lambda s: squares[s, 0, 0] * top)


def qk_normed_curves(d: int, gain: float, seed: int, basis: tuple[np.ndarray, ...] | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """With RMS QK-norm and ``gain``: largest |logit| and mean entropy against the input scale c."""
    raw, mq, mk = basis or qk_basis(d, seed)
    c = QK_SCALES[:, None]
    rq, rk = c / np.sqrt(c * c * mq + QK_EPS), c / np.sqrt(c * c * mk + QK_EPS)  # (scales, rows)
    return _scale_curves(lambda s: gain * gain * rq[s, :, None] * raw * rk[s, None, :])


def qk_curves(d: int, gain: float, seed: int) -> tuple[np.ndarray, ...]:
    """Largest |logit| and mean attention entropy against the input scale c, without and with QK-norm:
    (plain max, normed max, plain entropy, normed entropy).

    One product ``q k^T`` serves every c: scaling both inputs by c scales the
    plain logits by c², and RMS-normalising row i of ``c q`` multiplies it
    by ``c / sqrt(c² mean(q_i²) + eps)``, so the normalised logits are the
    product with those factors on its rows and columns (what
    :func:`compute.qk_norm` then :func:`compute.attention_scores` give, to
    rounding).
    """
    basis = qk_basis(d, seed)
    plain, normed = qk_plain_curves(d, seed, basis), qk_normed_curves(d, gain, seed, basis)
    return plain[0], normed[0], plain[1], normed[1]


def qk_plain_logits(d: int, scale: float, seed: int, qk: tuple[np.ndarray, np.ndarray] | None = None,
                    product: np.ndarray | None = None) -> np.ndarray:
    """The logits of the scaled inputs without QK-norm (``qk``: :func:`qk_inputs`, if already drawn).

    At c = 1 the scaled inputs are q and k themselves (``1.0 * x`` is ``x``), so
    with their ``product`` (:func:`qk_product`, the same matmul) these are that
    product times 1/sqrt(d), as :func:`compute.attention_scores` scales it: no
    second product."""
    if scale == 1.0 and product is not None and d > 1:
        out = product.copy()
        out *= np.float64(1.0 / math.sqrt(d))
        return out
    q, k = qk or qk_inputs(d, seed)
    return _logits(scale * q, scale * k, None)


def qk_result(d: int, scale: float, gain: float, seed: int, curves: tuple[np.ndarray, ...],
              qk: tuple[np.ndarray, np.ndarray] | None = None, plain: np.ndarray | None = None) -> QkResult:
    """QK-norm's panels at one input scale; ``qk`` (:func:`qk_inputs`) and ``plain``
    (:func:`qk_plain_logits`) of the same d, scale and seed may be passed in, already computed."""
    q, k = qk or qk_inputs(d, seed)
    plain = qk_plain_logits(d, scale, seed, (q, k)) if plain is None else plain
    normed = _logits(scale * q, scale * k, gain)
    top = max(float(np.abs(plain).max()), float(np.abs(normed).max()), 1e-12)
    edges = np.linspace(-top, top, QK_BINS + 1)
    plain_counts, _ = np.histogram(plain, edges)
    normed_counts, _ = np.histogram(normed, edges)
    return QkResult(d, scale, gain, plain, normed, edges, plain_counts, normed_counts, QK_SCALES, *curves)
