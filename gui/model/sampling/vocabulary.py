"""Where the Sampling view's logit row comes from: a Zipf-like synthetic row, the score row, a file or a model.

A :class:`Vocabulary` is one logit row with its labels, compared by its
``key`` (what it was made from), so the model's caches can tell when it
changed.  :func:`load_logits` reads a ``.npy``/``.npz`` without ever
unpickling and raises :class:`LoadError` saying what is wrong.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

import compute
from gui.model.normal_stream import NormalStream
from gui.model.npfile import LoadError, open_numpy
from gui.model.texts import tr
from resources import RESOURCES

SOURCES = ("zipf", "scores", "file", "model")
MIN_V, MAX_V = 2, 200_000


def words() -> tuple[str, ...]:
    text = (RESOURCES / "vocab_words.json").read_text(encoding="utf-8")
    return tuple(json.loads(text))


_WORDS: tuple[str, ...] | None = None


def word_labels(logits: np.ndarray) -> dict[int, str]:
    """Readable labels for the most probable tokens: the k-th most probable gets the k-th word."""
    return _ranked_words(logits)[0]


def _ranked_words(logits: np.ndarray) -> tuple[dict[int, str], np.ndarray]:
    """:func:`word_labels` and the ids it labels (the largest logits, largest first)."""
    global _WORDS
    if _WORDS is None:
        _WORDS = words()
    k = min(len(_WORDS), logits.size)
    if k < logits.size:
        # -logits in this thread's reused buffer when it fits (the same numbers: the same partition)
        neg = _zipf_buffers(logits.size)[1] if logits.size <= MAX_V else np.empty(logits.size)
        np.negative(logits, out=neg)
        top = np.argpartition(neg, k - 1)[:k]
    else:
        top = np.arange(logits.size)
    top = top[np.argsort(-logits[top], kind="stable")]
    top.flags.writeable = False
    return {int(i): _WORDS[r] for r, i in enumerate(top)}, top


def load_logits(path: str | os.PathLike) -> np.ndarray:
    """Read a 1-D float logit row from a ``.npy`` (or a .npz holding ``logits``), never unpickling.

    Reads through the shared safe reader (:mod:`gui.model.npfile`): regular
    files only, the header checked (MIN_V to MAX_V logits) before any data is
    read.  Raises LoadError naming the file, what is wrong and what was expected.
    """
    expected = tr("sampling.file.expected", low=MIN_V, high=f"{MAX_V:,}")
    with open_numpy(path, expected=expected) as f:
        where = f.where
        name = None
        if f.kind == "npz":
            if "logits" not in f.names:
                found = ", ".join(f.names[:12]) + (", ..." if len(f.names) > 12 else "") or tr("error.npfile.nothing")
                raise LoadError(tr("sampling.file.missing", where=where, found=found, expected=expected))
            name = "logits"
        head = f.header(name)
        if head.dtype.kind not in "fiu":
            raise LoadError(tr("sampling.file.dtype", where=where, dtype=head.dtype, expected=expected))
        shape = head.shape
        if len(shape) == 2 and 1 in shape:
            shape = (head.count,)
        if len(shape) != 1 or not MIN_V <= head.count <= MAX_V:
            raise LoadError(tr("sampling.file.shape", where=where, shape=head.shape, expected=expected))
        a = np.asarray(f.read(name, max_bytes=head.nbytes), dtype=np.float64).reshape(-1)
    if np.isnan(a).any() or (a == np.inf).any():
        raise LoadError(tr("sampling.file.not_finite", where=where))
    if not np.isfinite(a).any():
        raise LoadError(tr("sampling.file.all_minus_inf", where=where))
    return a


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """One logit row and its labels (an identity: compared by ``key``)."""

    logits: np.ndarray
    labels: dict[int, str]  # readable labels of some tokens; others are "#id"
    key: tuple
    #: ids of some of the largest logits (read-only), where the most probable tokens are looked for first
    #: (rowmath.top_ids_among checks that they hold them); None: not known
    ranked: np.ndarray | None = None

    def label(self, i: int) -> str:
        return self.labels.get(int(i), f"#{int(i)}")


def score_vocabulary(values: np.ndarray, labels: tuple[str, ...], key: tuple) -> Vocabulary:
    """The score row as a vocabulary; refuses NaN and a row that is -inf everywhere (ValueError)."""
    if np.isnan(values).any():
        raise ValueError(tr("sampling.scores.nan"))
    if not np.isfinite(values).any():
        raise ValueError(tr("sampling.scores.all_minus_inf"))
    return Vocabulary(values, dict(enumerate(labels)), key)


def file_vocabulary(logits: np.ndarray, key: tuple) -> Vocabulary:
    labels, top = _ranked_words(logits)
    return Vocabulary(logits, labels, key, top)


#: compute.zipf_logits' defaults (exponent, noise), which the synthetic vocabulary uses.
ZIPF_EXPONENT, ZIPF_NOISE = 1.1, 0.1
_zipf_table: tuple[np.ndarray, np.ndarray] = (np.empty(0), np.empty(0))
#: The noise of the last seed's vocabularies: its first MAX_V normals, and its state every 4,096 of them.
_ZIPF_NORMALS = NormalStream(MAX_V, every=4096)


def zipf_logits(v: int, seed: int) -> np.ndarray:
    """``compute.zipf_logits(v, seed=seed)``, bit for bit, with its rank terms kept between calls.

    zipf_logits takes ``-exponent * log(rank)`` and its ``exp`` for the ranks
    1..v, elementwise, and sums the exps: the first v entries of the same
    terms made once for every rank up to MAX_V are the same numbers (and
    their sum, over the same v numbers in the same order, the same sum).  The
    seeded noise is the seed's first v normals (kept: :class:`NormalStream`);
    only the shuffle (which depends on the seed and on v) is made for each V.
    """
    global _zipf_table
    if not isinstance(v, (int, np.integer)) or v < 1 or not isinstance(seed, (int, np.integer)) or seed < 0:
        return compute.zipf_logits(v, seed=seed)  # refused there (or made there), with its message
    base, expo = _zipf_table
    if v > base.size:
        base = -ZIPF_EXPONENT * np.log(np.arange(1, max(v, MAX_V) + 1, dtype=np.float64))
        expo = np.exp(base)
        _zipf_table = (base, expo)  # one assignment: another thread sees the old pair or the new one
    # the seed's first v normals are kept (a new V draws only normals not drawn yet), and the shuffle
    # takes a generator in the state the seed's one has after them (1.8 ms of draws a step at V = 150,000)
    if v <= _ZIPF_NORMALS.capacity:
        normals = _ZIPF_NORMALS.first(seed, v)  # the same draws as standard_normal(v)
        rng = _ZIPF_NORMALS.generator_after(seed, v)
    else:  # past MAX_V (not a V of the slider): drawn here
        rng = np.random.default_rng(seed)
        normals = rng.standard_normal(v)
    # the row before its shuffle, the noise and the shuffled ids in this thread's reused buffers (a new
    # row's pages cost about 1 ms each at V = 200,000); only the shuffled row itself is new
    logits, noise, ids = _zipf_buffers(v)
    np.subtract(base[:v], np.log(expo[:v].sum()), out=logits)  # the terms less the log of their sum
    np.multiply(normals, ZIPF_NOISE, out=noise)  # noise * ZIPF_NOISE, as noise *= ZIPF_NOISE gives
    logits += noise
    np.copyto(ids, _arange(v))
    rng.shuffle(ids)  # rng.permutation(v) is np.arange(v) shuffled: the same draws, the same order
    return logits[ids]


_zipf_local = threading.local()
_aranges: np.ndarray = np.arange(0)


def _arange(v: int) -> np.ndarray:
    """``np.arange(v)`` (int64) as the first v entries of one read-only table."""
    global _aranges
    table = _aranges
    if table.size < v:
        table = np.arange(max(v, MAX_V), dtype=np.int64)
        table.flags.writeable = False
        _aranges = table
    return table[:v]


def _zipf_buffers(v: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """This thread's buffers of v float64, v float64 and v int64 (the first v entries of longer ones)."""
    bufs = getattr(_zipf_local, "bufs", None)
    if bufs is None or bufs[0].size < v:
        n = max(v, MAX_V)  # once for every V of the slider (pages never written are never mapped)
        bufs = _zipf_local.bufs = (np.empty(n), np.empty(n), np.empty(n, dtype=np.int64))
    return bufs[0][:v], bufs[1][:v], bufs[2][:v]


def zipf_vocabulary(v: int, seed: int, key: tuple) -> Vocabulary:
    logits = zipf_logits(v, seed)
    labels, top = _ranked_words(logits)
    return Vocabulary(logits, labels, key, top)


class TokenLabels(Mapping):
    """Every token's label, read from a tuple of token strings (no dict of a whole vocabulary is built)."""

    def __init__(self, tokens: Sequence[str]):
        self._tokens = tokens

    def __getitem__(self, i: int) -> str:
        i = int(i)
        if not 0 <= i < len(self._tokens):
            raise KeyError(i)
        return self._tokens[i]

    def __iter__(self):
        return iter(range(len(self._tokens)))

    def __len__(self) -> int:
        return len(self._tokens)


def model_vocabulary(logits: np.ndarray, tokens: Sequence[str], key: tuple) -> Vocabulary:
    """A real model's next-token logits, each token labelled with its readable string (``llm.readable``)."""
    return Vocabulary(logits, TokenLabels(tokens), key)
