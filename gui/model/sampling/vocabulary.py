"""Where the Sampling view's logit row comes from: a Zipf-like synthetic row, the score row or a file.

A :class:`Vocabulary` is one logit row with its labels, compared by its
``key`` (what it was made from), so the model's caches can tell when it
changed.  :func:`load_logits` reads a ``.npy``/``.npz`` without ever
unpickling and raises :class:`LoadError` saying what is wrong.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import compute
from resources import RESOURCES

SOURCES = ("zipf", "scores", "file")
MIN_V, MAX_V = 2, 200_000


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


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """One logit row and its labels (an identity: compared by ``key``)."""

    logits: np.ndarray
    labels: dict[int, str]  # readable labels of some tokens; others are "#id"
    key: tuple

    def label(self, i: int) -> str:
        return self.labels.get(int(i), f"#{int(i)}")


def score_vocabulary(values: np.ndarray, labels: tuple[str, ...], key: tuple) -> Vocabulary:
    """The score row as a vocabulary; refuses NaN and a row that is -inf everywhere (ValueError)."""
    if np.isnan(values).any():
        raise ValueError("the score row holds NaN: a token with an undefined score cannot be sampled")
    if not np.isfinite(values).any():
        raise ValueError("every score is -inf: there is nothing to sample")
    return Vocabulary(values, dict(enumerate(labels)), key)


def file_vocabulary(logits: np.ndarray, key: tuple) -> Vocabulary:
    return Vocabulary(logits, word_labels(logits), key)


def zipf_vocabulary(v: int, seed: int, key: tuple) -> Vocabulary:
    logits = compute.zipf_logits(v, seed=seed)
    return Vocabulary(logits, word_labels(logits), key)
