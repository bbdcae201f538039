"""Session files: JSON holding the scores, every view's parameters and the user's other work.

A session holds the score row (labels and values), every parameter of every
view (``views``), each view's extra state (``state``: what the user typed or
edited that is not a parameter, such as the attention view's sentence and
Q/K/V tables) and the view that was shown.  Non-finite scores are written as
the strings "inf", "-inf" and "nan" so the file stays standard JSON.
Version 1 files (no ``state``; a ``seed`` that nothing read) still open.

A session is all or nothing.  Loading reads a regular file of at most
MAX_BYTES, parses it (nesting at most MAX_DEPTH deep, every number within a
float's range) and :meth:`Session.apply` checks everything (the scores, every
parameter against its Param, each view's extra state, each data file read in
full by its view's loader) before it changes anything.  What happens to what
does not fit:

* a file that is not a session, is damaged, or names a data file that is
  there but cannot be used (truncated, corrupt, of the wrong shape, over a
  view's limits, not a regular file) is refused whole: SessionError, nothing
  changes;
* one setting that no longer fits (renamed, out of its range, a view that no
  longer exists, extra state that no longer validates) and a data file that
  is no longer there (moved or deleted) are skipped and reported, one line
  each, while the rest of the session loads.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui.model import npfile
from gui.model.base import ViewModel
from gui.model.files import write_text_atomic
from gui.model.scores import Score, ScoreRow
from gui.model.texts import tr

FORMAT = "softmax-lab-session"
VERSION = 2
#: A session file larger than this is refused (a session with 200,000 scores is about 10 MB).
MAX_BYTES = 64 * 1024**2
#: Containers nested deeper than this are refused (a session needs 7 levels).
MAX_DEPTH = 32
#: What a model's checks can raise for a value that does not fit (huge integers raise OverflowError).
_DOES_NOT_FIT = (ValueError, TypeError, OverflowError)


class SessionError(ValueError):
    """A session file that cannot be read or used; the message says why (one line)."""


def _encode_float(v: float) -> float | str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for one-line messages."""
    text = repr(value) if not isinstance(value, (dict, list)) else f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _decode_float(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise SessionError(tr("error.session.not_a_number", where=where, value=_short(v)))
    if isinstance(v, str) and v.strip().lower() not in ("inf", "-inf", "+inf", "nan"):
        raise SessionError(tr("error.session.not_a_number", where=where, value=_short(v)))
    return float(v)


def _check_tree(doc: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH and integers beyond a float's range (without recursing)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise SessionError(tr("error.session.too_deep", depth=MAX_DEPTH, needed=7))
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
        elif isinstance(node, int) and not isinstance(node, bool):
            try:
                float(node)
            except OverflowError:
                raise SessionError(tr("error.session.huge_integer", digits=len(str(abs(node))))) from None


@dataclass
class _Plan:
    """A checked session: what to apply, in order, and what was skipped (nothing is applied yet)."""

    files: list[tuple[ViewModel, str, Any]] = field(default_factory=list)
    extras: list[tuple[ViewModel, dict[str, Any]]] = field(default_factory=list)
    params: list[tuple[str, ViewModel, str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


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

    # -- applying: check everything, then change things ----------------------------------------
    def check(self, row: ScoreRow, models: dict[str, ViewModel]) -> _Plan:
        """Check the whole session against live objects without changing them.

        Raises SessionError for what refuses the session (see the module
        docstring); returns the plan :meth:`apply` carries out.
        """
        plan = _Plan()
        try:
            type(row)().set_entries(self.scores)  # whatever the row refuses, on a scratch row
        except _DOES_NOT_FIT as exc:
            raise SessionError(tr("error.session.scores", error=exc)) from None
        for name, state in self.state.items():
            model = models.get(name)
            if model is None:
                plan.skipped.append(tr("error.session.no_view_state", view=repr(name)))
                continue
            try:
                plan.extras.append((model, model.check_extra_state(state)))
            except _DOES_NOT_FIT as exc:
                plan.skipped.append(tr("error.session.state_skipped", error=exc))
        for name, values in self.views.items():
            model = models.get(name)
            if model is None:
                plan.skipped.append(tr("error.session.no_view_settings", view=repr(name)))
                continue
            specs = model.params()
            for key, value in values.items():
                spec = specs.get(key)
                try:
                    if spec is None:
                        raise ValueError(tr("error.param.unknown", view=name, name=repr(key)))
                    checked = spec.check(value)
                except _DOES_NOT_FIT as exc:
                    plan.skipped.append(tr("error.session.kept", view=name, error=exc, value=getattr(model, key, "–")))
                    continue
                if spec.kind == "path" and checked:
                    if self._check_file(name, model, key, checked, plan):
                        plan.files.append((model, key, checked))
                else:
                    plan.params.append((name, model, key, checked))
        return plan

    @staticmethod
    def _check_file(name: str, model: ViewModel, key: str, path: str, plan: _Plan) -> bool:
        """Read ``path`` in full with the view's own loader, on a scratch model; False if it is gone."""
        try:
            type(model)().set_param(key, path)
        except npfile.MissingFile as exc:
            plan.skipped.append(tr("error.session.file_skipped", view=name, error=exc))
            return False
        except (*_DOES_NOT_FIT, MemoryError, OSError) as exc:
            raise SessionError(tr("error.session.view_error", view=name, error=exc)) from None
        return True

    def apply(self, row: ScoreRow, models: dict[str, ViewModel]) -> list[str]:
        """Check the whole session (:meth:`check`), then apply it; returns what was skipped, one line each.

        A refused session raises SessionError and changes nothing.  Data
        files are applied first (each was read in full by the check; it is
        read again here), then the scores, the extra state and the other
        parameters in the order saved.  A parameter the model still refuses
        in combination with the others (a size the machine cannot hold) is
        skipped and reported, keeping its current value.
        """
        plan = self.check(row, models)
        for model, key, path in plan.files:
            try:
                model.set_param(key, path)
            except (*_DOES_NOT_FIT, MemoryError, OSError) as exc:  # changed since the check
                raise SessionError(tr("error.session.view_error", view=model.name, error=exc)) from None
        row.set_entries(self.scores)
        for model, checked in plan.extras:
            model.apply_extra_state(checked)
        for name, model, key, value in plan.params:
            try:
                model.set_param(key, value)
            except _DOES_NOT_FIT as exc:
                plan.skipped.append(tr("error.session.kept", view=name, error=exc, value=getattr(model, key, "–")))
        return plan.skipped

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
        """Parse and check a session's text; SessionError (one line) says what is wrong."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SessionError(tr("error.session.not_json", error=exc)) from None
        except ValueError as exc:  # the interpreter's limit on the digits of an integer
            raise SessionError(tr("error.session.long_number", error=str(exc).split(":")[0])) from None
        except RecursionError:
            raise SessionError(tr("error.session.too_deep_to_read")) from None
        _check_tree(doc)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise SessionError(tr("error.session.not_session"))
        version = doc.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= VERSION:
            raise SessionError(tr("error.session.version", version=_short(version)))
        raw_scores = doc.get("scores")
        if not isinstance(raw_scores, list) or not raw_scores:
            raise SessionError(tr("error.session.scores_list"))
        scores = []
        for i, item in enumerate(raw_scores):
            if not isinstance(item, dict) or "value" not in item:
                raise SessionError(tr("error.session.score_item", n=i + 1))
            label = item.get("label", tr("label.token_default", n=i + 1))
            if not isinstance(label, str):
                raise SessionError(tr("error.session.score_label", n=i + 1))
            scores.append(Score(label, _decode_float(item["value"], tr("error.session.score_n", n=i + 1))))
        views = doc.get("views", {})
        if not isinstance(views, dict) or not all(
            isinstance(v, dict) for v in views.values()
        ):
            raise SessionError(tr("error.session.views_map"))
        for name, params in views.items():
            for k, v in params.items():
                if isinstance(v, bool) or not isinstance(v, (int, float, str)):
                    raise SessionError(tr("error.session.param_value", where=f"{name}.{k}", value=_short(v)))
        # each view model checks its own values (ranges, names, files) before the session is applied
        clean_views = {str(name): dict(params) for name, params in views.items()}
        # version 1 also held a "seed" that nothing read: still checked, then ignored
        seed = doc.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SessionError(tr("error.session.seed", value=_short(seed)))
        state = doc.get("state", {})
        if not isinstance(state, dict) or not all(isinstance(v, dict) for v in state.values()):
            raise SessionError(tr("error.session.state_map"))
        current = doc.get("current_view")
        if current is not None and not isinstance(current, str):
            raise SessionError(tr("error.session.current_view"))
        return cls(tuple(scores), clean_views, current, {str(k): dict(v) for k, v in state.items()})

    def save(self, path: Path | str) -> None:
        write_text_atomic(Path(path), self.to_json())

    @classmethod
    def load(cls, path: Path | str) -> Session:
        """Read and parse a session file (a regular file of at most MAX_BYTES); SessionError if not."""
        try:
            text = npfile.read_regular(path, MAX_BYTES, where=str(path)).decode("utf-8")
        except npfile.LoadError as exc:
            raise SessionError(str(exc)) from None
        except UnicodeDecodeError as exc:
            raise SessionError(tr("error.session.not_utf8", path=path, reason=exc.reason, byte=exc.start)) from None
        return cls.from_json(text)
