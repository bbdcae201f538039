"""The score row shared by every view that shows one row of scores."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from psygnal import evented

from gui.model.texts import tr

#: The most scores the shared row holds (the score table refuses a paste past it).  Every view
#: takes a row this long: the ones with n x n or n-probe work state their own, lower limits.
MAX_SCORES = 10_000

_INF_WORDS = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


def parse_score(text: str) -> tuple[float, str | None]:
    """Read one score typed by a user.

    Returns ``(value, note)``: ``note`` explains a value that needs it
    (``inf``, ``nan``, or a number too large for float64 read as infinity).
    Raises ValueError with a short reason for anything that is not a number.
    Only ``float()`` parses; nothing is evaluated.
    """
    cleaned = text.strip().replace("\u2212", "-").replace("\u221e", "inf")
    if not cleaned:
        raise ValueError(tr("error.score.empty"))
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(tr("error.score.not_number", text=repr(text.strip()))) from None
    lowered = cleaned.lower()
    if math.isnan(value):
        return value, tr("note.score.nan")
    if math.isinf(value):
        if lowered in _INF_WORDS:
            if value > 0:
                return value, tr("note.score.plus_inf")
            return value, tr("note.score.minus_inf")
        return value, tr("note.score.beyond_range", text=cleaned, value="inf" if value > 0 else "-inf")
    return value, None


def _check_length(n: int) -> None:
    if n > MAX_SCORES:
        raise ValueError(tr("error.score.too_many", n=n, limit=MAX_SCORES))


@dataclass(frozen=True)
class Score:
    label: str
    value: float


def default_label(n: int) -> str:
    """The label of the n-th score (from 1) when the user gave none: "Token n" in the current language."""
    return tr("label.token_default", n=n)


def default_scores() -> tuple[Score, ...]:
    """The row every ScoreRow starts with, labelled in the current language."""
    return tuple(Score(default_label(i + 1), v) for i, v in enumerate((2.0, 1.0, 0.5, -1.0)))


#: The default row as labelled when this module was imported (ScoreRow() asks default_scores() each time).
DEFAULT_SCORES: tuple[Score, ...] = default_scores()


@evented
@dataclass
class ScoreRow:
    """Labelled scores. ``entries`` is one field, so a change is one event.

    Every edit goes through a method that replaces the tuple; the table can
    never become empty.
    """

    entries: tuple[Score, ...] = field(default_factory=default_scores)

    def __post_init__(self) -> None:
        if not self.entries:
            raise ValueError(tr("error.score.row_empty"))
        _check_length(len(self.entries))

    # -- reading -----------------------------------------------------------
    @property
    def values(self) -> np.ndarray:
        return np.array([e.value for e in self.entries], dtype=np.float64)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(e.label for e in self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    # -- writing -----------------------------------------------------------
    def set_entries(self, entries: tuple[Score, ...] | list[Score]) -> None:
        entries = tuple(entries)
        if not entries:
            raise ValueError(tr("error.score.table_empty"))
        _check_length(len(entries))
        self.entries = entries

    def set_values(self, values, labels=None) -> None:
        """Replace the whole row; labels default to Token 1..n."""
        values = [float(v) for v in values]
        if labels is None:
            labels = [default_label(i + 1) for i in range(len(values))]
        labels = list(labels)
        if len(labels) != len(values):
            raise ValueError(tr("error.score.labels_count", scores=len(values), labels=len(labels)))
        self.set_entries(tuple(Score(str(lb), v) for lb, v in zip(labels, values)))

    def set_value(self, index: int, value: float) -> None:
        entries = list(self.entries)
        entries[index] = replace(entries[index], value=float(value))
        self.entries = tuple(entries)

    def set_label(self, index: int, label: str) -> None:
        entries = list(self.entries)
        entries[index] = replace(entries[index], label=str(label))
        self.entries = tuple(entries)

    def insert(self, index: int, value: float = 0.0, label: str | None = None) -> None:
        if label is None:
            label = self._fresh_label()
        _check_length(len(self.entries) + 1)
        entries = list(self.entries)
        entries.insert(index, Score(label, float(value)))
        self.entries = tuple(entries)

    def remove(self, indices) -> None:
        drop = set(indices)
        if len(drop) >= len(self.entries):
            raise ValueError(tr("error.score.last_row"))
        self.entries = tuple(e for i, e in enumerate(self.entries) if i not in drop)

    def move(self, index: int, offset: int) -> int:
        """Move one row up (-1) or down (+1); returns its new index."""
        target = index + offset
        if not 0 <= target < len(self.entries):
            return index
        entries = list(self.entries)
        entries[index], entries[target] = entries[target], entries[index]
        self.entries = tuple(entries)
        return target

    def _fresh_label(self) -> str:
        taken = set(self.labels)
        n = len(self.entries) + 1
        while default_label(n) in taken:
            n += 1
        return default_label(n)

    # -- the gap between the top score and the runner-up ------------------
    def top_two(self) -> tuple[int, int] | None:
        """Indices of the largest and second-largest finite scores."""
        v = self.values
        if len(v) < 2 or not np.all(np.isfinite(v)):
            return None
        order = np.argsort(-v, kind="stable")
        return int(order[0]), int(order[1])

    @property
    def gap(self) -> float | None:
        top = self.top_two()
        if top is None:
            return None
        v = self.values
        return float(v[top[0]] - v[top[1]])

    def set_gap(self, gap: float) -> None:
        """Move the top score so it sits ``gap`` above the runner-up."""
        top = self.top_two()
        if top is None:
            raise ValueError(tr("error.score.gap_needs_two"))
        if gap < 0:
            raise ValueError(tr("error.score.gap_negative", gap=f"{gap:g}"))
        self.set_value(top[0], self.values[top[1]] + float(gap))
