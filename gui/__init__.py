"""Softmax Lab's desktop front end.

``gui.model`` holds the Qt-free state objects (one per view, plus the shared
score row and the session file); everything else in this package is Qt.
Importing ``gui`` itself imports no Qt, so the models stay usable headless.
"""

__version__ = "0.1.0"
