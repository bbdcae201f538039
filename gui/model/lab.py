"""Everything the user can change, in one Qt-free object."""

from __future__ import annotations

from dataclasses import dataclass, field

from gui.model.base import ViewModel
from gui.model.scores import ScoreRow
from gui.model.session import Session


def _models() -> dict[str, ViewModel]:
    from gui.registry import VIEWS

    return {spec.name: spec.model() for spec in VIEWS}


@dataclass
class Lab:
    """The shared score row and one model per registered view."""

    scores: ScoreRow = field(default_factory=ScoreRow)
    models: dict[str, ViewModel] = field(default_factory=_models)

    def session(self, current_view: str | None = None) -> Session:
        return Session.capture(self.scores, self.models, current_view)

    def restore(self, session: Session) -> list[str]:
        """Apply a session; returns the settings it had to skip (see Session.apply).

        All or nothing: a refused session raises SessionError and changes nothing.
        """
        return session.apply(self.scores, self.models)
