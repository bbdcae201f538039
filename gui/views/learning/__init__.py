"""The Learning view (a package: view, train and calibrate plots, the other tabs' plots)."""

from gui.views.learning.view import LearningView

__all__ = ["LearningView"]
