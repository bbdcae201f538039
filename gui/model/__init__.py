"""Qt-free state: the shared score row, per-view parameter models, sessions.

Nothing under ``gui.model`` may import Qt (a test enforces it): widgets read
and write these objects and redraw when their psygnal events fire.
"""

from gui.model.base import ExportArray, Param, ViewModel, param
from gui.model.scores import DEFAULT_SCORES, Score, ScoreRow, parse_score

__all__ = [
    "DEFAULT_SCORES",
    "ExportArray",
    "Param",
    "Score",
    "ScoreRow",
    "ViewModel",
    "param",
    "parse_score",
]
