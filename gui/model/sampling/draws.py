"""Seeded draws from the filtered distribution and their chi-square test, as one pure generator.

:func:`draw_steps` is the job function of the Sampling view: a generator
over an immutable :class:`DrawInputs` snapshot that yields its progress as
a fraction in 0..1 and returns the :class:`DrawResult` (the window runs it
in a :class:`gui.widgets.jobs.Job`; a cancel takes effect at its next
``yield``).  :func:`compute_draws` drains the same generator on the calling
thread (small draws, exports).  :func:`needs_worker` says which draws are
too big for the GUI thread.
"""

from __future__ import annotations

import functools
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import compute
from gui.model.base import drain
from gui.model.sampling.vocabulary import Vocabulary

#: min_expected of the chi-square test: bins expected below it are pooled.
MIN_EXPECTED = 5.0
#: Draws that take more work than this (draws x candidate tokens for Gumbel-max,
#: draws for the inverse CDF) run in the background, with a progress bar and Cancel.
SYNC_GUMBEL_WORK = 2_000_000
SYNC_DRAWS = 200_000


@dataclass(frozen=True, eq=False)
class DrawInputs:
    """Everything a set of draws depends on (an immutable snapshot; ``key`` identifies it)."""

    vocab: Vocabulary
    knobs: dict[str, Any]
    n: int
    seed: int
    method: str
    #: ``compute.filter_probs(vocab.logits, **knobs)`` when already made (the model's result has it); not in the key
    filtered: np.ndarray | None = None
    #: ``np.flatnonzero(filtered > 0)`` when already made with ``filtered``; not in the key
    support: np.ndarray | None = None

    @property
    def key(self) -> tuple:
        return (self.vocab.key, tuple(sorted(self.knobs.items())), self.n, self.seed, self.method)


@dataclass(frozen=True, eq=False)
class DrawResult:
    inputs: DrawInputs
    draws: np.ndarray  # (n,) token ids
    counts: np.ndarray  # (V,) observed counts
    filtered: np.ndarray  # (V,) the filtered probabilities drawn from
    chi2: float
    dof: int
    p_value: float

    @functools.cached_property
    def expected(self) -> np.ndarray:
        """(V,) n * filtered probabilities (made when first asked for: the view needs the tokens shown only)."""
        return self.inputs.n * self.filtered


def needs_worker(inputs: DrawInputs, kept: int) -> bool:
    """Whether these draws are too much work for the GUI thread (``kept``: tokens left by the knobs)."""
    if inputs.method == "gumbel_max":
        return inputs.n * kept > SYNC_GUMBEL_WORK
    return inputs.n > SYNC_DRAWS


def _fractions(steps: Iterator[tuple[int, int]]) -> Generator[float, None, Any]:
    """Relay ``(done, total)`` steps as fractions; return the steps' own return value."""
    while True:
        try:
            done, total = next(steps)
        except StopIteration as stop:
            return stop.value
        yield done / total if total else 1.0


def sample_support(filtered: np.ndarray, n: int, seed: int, support: np.ndarray | None = None) -> np.ndarray:
    """``compute.sample_probs(filtered, n, seed)``, bit for bit, drawn over the tokens of p > 0 only.

    sample_probs cuts [0, 1) at the running sum of the row; a zero adds
    exactly nothing to it, so the tokens of p > 0, drawn from alone, get the
    same cuts, the same uniforms and the same shuffle, and their ids map back
    through the support (ascending, like the row).  After top-k that is a
    few dozen tokens instead of V.  ``support`` is ``np.flatnonzero(filtered > 0)``
    when already made.
    """
    if support is None:
        support = np.flatnonzero(filtered > 0)
    if support.size == filtered.size or support.size == 0:  # nothing to skip (or sample_probs refuses it)
        return compute.sample_probs(filtered, n, seed)
    if not (filtered >= 0).all():
        return compute.sample_probs(filtered, n, seed)  # refused there, with its message
    return support[compute.sample_probs(filtered[support], n, seed)]


def draw_steps(inputs: DrawInputs) -> Generator[float, None, DrawResult]:
    """Draw ``n`` tokens and test them against the filtered distribution (pure; thread-safe).

    Yields progress fractions (after each chunk of Gumbel-max draws; once,
    1.0, for the inverse CDF) and returns the DrawResult.
    """
    logits = inputs.vocab.logits
    filtered = inputs.filtered
    if filtered is None:
        filtered = compute.filter_probs(logits, **inputs.knobs)
    support = inputs.support
    if support is None or inputs.filtered is None:
        support = np.flatnonzero(filtered > 0)  # the tokens that can be drawn, ascending (as filtered > 0 picks them)
    if inputs.method == "gumbel_max":
        draws = yield from _fractions(compute.gumbel_max_steps(logits, inputs.n, inputs.seed, **inputs.knobs))
    elif filtered.dtype == np.float64:  # the row sample() would filter again: filter once
        draws = sample_support(filtered, inputs.n, inputs.seed, support)
        yield 1.0
    else:
        draws = compute.sample(logits, inputs.n, inputs.seed, **inputs.knobs)
        yield 1.0
    counts = np.bincount(draws, minlength=logits.size)
    # (n * filtered)[support], elementwise: the same products at the support alone
    stat, dof, p = compute.chi_square_test(counts[support], inputs.n * filtered[support], min_expected=MIN_EXPECTED)
    return DrawResult(inputs, draws, counts, filtered, float(stat), int(dof), float(p))


def compute_draws(inputs: DrawInputs) -> DrawResult:
    """:func:`draw_steps` run to its end on the calling thread."""
    return drain(draw_steps(inputs))
