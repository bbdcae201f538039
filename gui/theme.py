"""Light and dark themes for the widgets and, explicitly, for the plots.

pyqtgraph draws on black whatever the Qt palette says, so every plot asks
the theme manager for its colours and restyles itself when the theme
changes.  "system" follows the desktop's colour scheme.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

MODES = ("system", "light", "dark")


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    foreground: str
    muted: str
    accent: str  # the current distribution
    secondary: str  # the reference distribution (T = 1)
    highlight: str  # markers
    invalid: str  # background of an invalid table cell
    series: tuple[str, ...] = ()  # categorical colours (Okabe-Ito based), for several series


LIGHT = Theme("light", "#ffffff", "#1d1d1f", "#6b6f76", "#1f6fd1", "#a4abb5", "#d9480f", "#ffc9c9",
              ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#7f7f7f"))
DARK = Theme("dark", "#1e1f22", "#e8e8ea", "#9ba1a9", "#5aa9ff", "#6c737c", "#ff8a4c", "#7a2630",
             ("#56B4E9", "#E69F00", "#2EC4A0", "#E08CC0", "#FF7F3F", "#A9CCF0", "#B0B0B0"))


def colour(theme: Theme, role: str | int) -> str:
    """A theme colour by role name ("accent", "secondary", ...) or series index."""
    if isinstance(role, int):
        return theme.series[role % len(theme.series)]
    return getattr(theme, role)


def _palette(theme: Theme) -> QPalette:
    if theme.name == "light":
        return QApplication.style().standardPalette()
    p = QPalette()
    base, window, text = QColor("#232428"), QColor("#2b2d31"), QColor(theme.foreground)
    disabled = QColor("#80848b")
    for role, color in (
        (QPalette.ColorRole.Window, window),
        (QPalette.ColorRole.WindowText, text),
        (QPalette.ColorRole.Base, base),
        (QPalette.ColorRole.AlternateBase, window),
        (QPalette.ColorRole.ToolTipBase, QColor("#3a3c42")),
        (QPalette.ColorRole.ToolTipText, text),
        (QPalette.ColorRole.PlaceholderText, disabled),
        (QPalette.ColorRole.Text, text),
        (QPalette.ColorRole.Button, window),
        (QPalette.ColorRole.ButtonText, text),
        (QPalette.ColorRole.BrightText, QColor("#ff6b6b")),
        (QPalette.ColorRole.Link, QColor(theme.accent)),
        (QPalette.ColorRole.Highlight, QColor("#2f65b8")),
        (QPalette.ColorRole.HighlightedText, QColor("#ffffff")),
        (QPalette.ColorRole.Mid, QColor("#3c3f45")),
        (QPalette.ColorRole.Dark, QColor("#18191b")),
        (QPalette.ColorRole.Light, QColor("#45474d")),
    ):
        p.setColor(role, color)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return p


class ThemeManager(QObject):
    """Holds the chosen mode and the resolved theme; emits ``changed``."""

    changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self._mode = "system"
        self._theme = LIGHT
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(self._system_changed)

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def theme(self) -> Theme:
        return self._theme

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"theme must be one of {', '.join(MODES)}, got {mode!r}")
        self._mode = mode
        self._apply()

    def _system_changed(self, *_args) -> None:
        if self._mode == "system":
            self._apply()

    def _apply(self) -> None:
        if self._mode == "system":
            dark = QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark
        else:
            dark = self._mode == "dark"
        self._theme = DARK if dark else LIGHT
        app = QApplication.instance()
        if app is not None:
            app.setPalette(_palette(self._theme))
        self.changed.emit(self._theme)


_manager: ThemeManager | None = None


def manager() -> ThemeManager:
    """The application's theme manager (created with the first call)."""
    global _manager
    if _manager is None:
        _manager = ThemeManager()
    return _manager


def current() -> Theme:
    return manager().theme
