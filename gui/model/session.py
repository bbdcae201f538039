"""Session files: JSON holding the scores, every view's parameters and the user's other work.

A session holds the score row (labels and values), every parameter of every
view (``views``), each view's extra state (``state``: what the user typed or
edited that is not a parameter, such as the attention view's sentence and
Q/K/V tables) and the view that was shown.  Non-finite scores are written as
the strings "inf", "-inf" and "nan" so the file stays standard JSON.
Loading checks the whole file before anything is applied, so a bad file
changes nothing.  Version 1 files (no ``state``; a ``seed`` that nothing
read) still open.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui.model.base import ViewModel
from gui.model.files import write_text_atomic
from gui.model.scores import Score, ScoreRow

FORMAT = "softmax-lab-session"
VERSION = 2


class SessionError(ValueError):
    """A session file that cannot be read; the message says why."""


def _encode_float(v: float) -> float | str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _decode_float(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise SessionError(f"{where}: expected a number, got {v!r}")
    if isinstance(v, str) and v.strip().lower() not in ("inf", "-inf", "+inf", "nan"):
        raise SessionError(f"{where}: expected a number, got {v!r}")
    return float(v)


@dataclass
class Session:
    """Everything needed to reopen the exact state of the lab."""

    scores: tuple[Score, ...]
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    current_view: str | None = None
    #: view name -> that view's extra state (see ViewModel.extra_state)
    state: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def capture(cls, row: ScoreRow, models: dict[str, ViewModel], current_view=None) -> Session:
        return cls(
            scores=row.entries,
            views={name: m.to_dict() for name, m in models.items()},
            current_view=current_view,
            state={name: extra for name, m in models.items() if (extra := m.extra_state())},
        )

    def apply(self, row: ScoreRow, models: dict[str, ViewModel]) -> list[str]:
        """Apply to live objects; returns what had to be skipped, one line each.

        A file that is not a session was refused by :meth:`from_json`.  Here,
        one parameter that no longer fits (renamed, out of a changed range, a
        view that no longer exists) is skipped and reported, keeping its
        current value, so the scores and everything else in the file are not
        lost with it.
        """
        skipped = []
        extras = {}
        for name, state in self.state.items():  # checked whole before anything is applied
            model = models.get(name)
            if model is None:
                skipped.append(f"there is no view {name!r}; its saved state was skipped")
                continue
            try:
                extras[name] = model.check_extra_state(state)
            except ValueError as exc:
                skipped.append(f"{exc}; that part of the session was skipped")
        row.set_entries(self.scores)
        for name, checked in extras.items():
            models[name].apply_extra_state(checked)
        for name, values in self.views.items():
            model = models.get(name)
            if model is None:
                skipped.append(f"there is no view {name!r}; its settings were skipped")
                continue
            for key, value in values.items():
                try:
                    model.set_param(key, value)
                except ValueError as exc:
                    skipped.append(f"{name}: {exc}; kept {getattr(model, key, '–')!s}")
        return skipped

    # -- JSON ----------------------------------------------------------------
    def to_json(self) -> str:
        doc = {
            "format": FORMAT,
            "version": VERSION,
            "scores": [{"label": s.label, "value": _encode_float(s.value)} for s in self.scores],
            "views": self.views,
            "state": self.state,
            "current_view": self.current_view,
        }
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Session:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SessionError(f"not a JSON file: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise SessionError("not a Softmax Lab session file")
        version = doc.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise SessionError(f"unsupported session version {version!r}")
        raw_scores = doc.get("scores")
        if not isinstance(raw_scores, list) or not raw_scores:
            raise SessionError("'scores' must be a non-empty list")
        scores = []
        for i, item in enumerate(raw_scores):
            if not isinstance(item, dict) or "value" not in item:
                raise SessionError(f"score {i + 1}: expected {{'label': ..., 'value': ...}}")
            label = item.get("label", f"Token {i + 1}")
            if not isinstance(label, str):
                raise SessionError(f"score {i + 1}: the label must be text")
            scores.append(Score(label, _decode_float(item["value"], f"score {i + 1}")))
        views = doc.get("views", {})
        if not isinstance(views, dict) or not all(
            isinstance(v, dict) for v in views.values()
        ):
            raise SessionError("'views' must map view names to parameters")
        for name, params in views.items():
            for k, v in params.items():
                if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                    raise SessionError(f"{name}.{k}: expected a number or a name, got {v!r}")
        # each view model checks its own values (ranges, names) when the session is applied
        clean_views = {str(name): dict(params) for name, params in views.items()}
        # version 1 also held a "seed" that nothing read: still checked, then ignored
        seed = doc.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SessionError(f"'seed' must be an integer, got {seed!r}")
        state = doc.get("state", {})
        if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
            raise SessionError("'state' must map view names to saved state")
        current = doc.get("current_view")
        if current is not None and not isinstance(current, str):
            raise SessionError("'current_view' must be a view name")
        return cls(tuple(scores), clean_views, current, {str(k): dict(v) for k, v in state.items()})

    def save(self, path: Path | str) -> None:
        write_text_atomic(Path(path), self.to_json())

    @classmethod
    def load(cls, path: Path | str) -> Session:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SessionError(f"cannot read {path}: {exc}") from None
        return cls.from_json(text)
