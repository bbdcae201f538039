"""Light and dark themes for the widgets and, explicitly, for the plots.

pyqtgraph draws on black whatever the Qt palette says, so every plot asks
the theme manager for its colours and restyles itself when the theme
changes.  "system" follows the desktop's colour scheme.

The widgets follow a full QPalette built from the theme's ``chrome`` (every
role, every colour group), so nothing is inherited from whichever palette
came before.  Fusion outlines check boxes, radio buttons and group boxes in
a shade of the window colour (invisible on a dark window), so
:class:`ThemedStyle`, a proxy over Fusion, redraws those outlines in the
theme's ``border`` and ``frame`` colours, and pads the items of the view
list.  No style sheets: one set on a widget, or on the application once
widgets exist, freezes the palette of the widgets it polishes, which then no
longer follow a theme change.

Contrast (tests/gui/test_theme.py computes it): text on its background is at
least 4.5:1 in both themes, disabled text at least 3:1 (WCAG exempts
inactive controls from 1.4.3; 3:1 keeps them legible), outlines of controls
and graphical plot colours at least 3:1 (WCAG 1.4.11).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QListWidget, QProxyStyle, QStyle, QToolTip

from gui.model.texts import tr

MODES = ("system", "light", "dark")


@dataclass(frozen=True)
class Chrome:
    """The widget colours of a theme: what :func:`palette` sets the QPalette roles to."""

    window: str  # Window, Button's surroundings
    text: str  # WindowText, Text, ButtonText
    base: str  # Base: the background of entries, lists and tables
    alternate_base: str
    button: str
    selection: str  # Highlight (and Accent): selected items, the view list's current row
    selected_text: str  # HighlightedText
    tooltip: str  # ToolTipBase
    tooltip_text: str  # ToolTipText
    placeholder: str  # PlaceholderText, on Base
    disabled: str  # disabled Text, WindowText, ButtonText
    disabled_base: str
    disabled_selection: str
    link: str
    bright_text: str
    border: str  # outline of check boxes and radio buttons, scroll bar handles (ThemedStyle), 3:1 on Window and Base
    frame: str  # outline of group boxes (ThemedStyle), a quieter line
    bevel: tuple[str, str, str, str, str]  # Light, Midlight, Mid, Dark, Shadow


@dataclass(frozen=True)
class Theme:
    name: str
    background: str  # plots
    foreground: str  # plot text, axis labels, titles
    muted: str  # axis lines, reference lines and their labels
    accent: str  # the current distribution
    secondary: str  # the reference distribution (T = 1); graphics only, never text
    highlight: str  # markers, warnings
    invalid: str  # background of an invalid table cell (NaN, inf, underflow)
    caution: str  # background of a table cell to look at twice (an exact 0, lost digits)
    masked: str  # masked heatmap cells (drawn over the cell at alpha 215)
    series: tuple[str, ...]  # categorical colours (Okabe-Ito based), for several series; also plot text
    chrome: Chrome


LIGHT = Theme(
    name="light", background="#ffffff", foreground="#1d1d1f", muted="#63676e", accent="#1f6fd1",
    secondary="#8b94a1", highlight="#c1400d", invalid="#ffc9c9", caution="#fbe3b0", masked="#5c6068",
    # Okabe-Ito, darkened where needed to read as text on white (4.5:1); sky blue gives way to indigo
    series=("#0072b2", "#9c6c00", "#008662", "#bc4f8b", "#c25600", "#5b5fc7", "#737373"),
    chrome=Chrome(
        window="#efefef", text="#1d1d1f", base="#ffffff", alternate_base="#f5f5f5", button="#efefef",
        selection="#2a6cc2", selected_text="#ffffff", tooltip="#ffffdc", tooltip_text="#1d1d1f",
        placeholder="#6b6f76", disabled="#7f838a", disabled_base="#efefef", disabled_selection="#8e9297",
        link="#1f5fb4", bright_text="#ffffff", border="#7f838a", frame="#b4b7bc",
        bevel=("#ffffff", "#cacaca", "#b8b8b8", "#9f9f9f", "#767676"),
    ),
)
DARK = Theme(
    name="dark", background="#1e1f22", foreground="#e8e8ea", muted="#9ba1a9", accent="#5aa9ff",
    secondary="#6c737c", highlight="#ff8a4c", invalid="#7a2630", caution="#5c4412", masked="#666a71",
    series=("#56b4e9", "#e69f00", "#2ec4a0", "#e08cc0", "#ff7f3f", "#a9ccf0", "#b0b0b0"),
    chrome=Chrome(
        window="#2b2d31", text="#e8e8ea", base="#232428", alternate_base="#2b2d31", button="#3c3f45",
        selection="#2f65b8", selected_text="#ffffff", tooltip="#3a3c42", tooltip_text="#e8e8ea",
        placeholder="#8e9299", disabled="#8a8e95", disabled_base="#27282c", disabled_selection="#4a4d54",
        link="#5aa9ff", bright_text="#ff6b6b", border="#868a91", frame="#4d5057",
        bevel=("#45474d", "#3a3c42", "#3c3f45", "#18191b", "#101113"),
    ),
)


def colour(theme: Theme, role: str | int) -> str:
    """A theme colour by role name ("accent", "secondary", ...) or series index."""
    if isinstance(role, int):
        return theme.series[role % len(theme.series)]
    return getattr(theme, role)


def _luminance(c: QColor) -> float:
    """WCAG 2.x relative luminance of an opaque colour."""

    def linear(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF())


def text_on(background: QColor | str) -> str:
    """Black or white, whichever contrasts more with ``background``: at least 4.58:1 on any colour.

    For numbers written on colour-mapped cells, whose colour no theme knows.
    """
    lum = _luminance(QColor(background))
    return "#000000" if (lum + 0.05) ** 2 > 0.05 * 1.05 else "#ffffff"


def palette(theme: Theme) -> QPalette:
    """The widgets' palette: every role of every colour group, from ``theme.chrome``."""
    c = theme.chrome
    R = QPalette.ColorRole
    light, midlight, mid, dark, shadow = c.bevel
    roles = {
        R.Window: c.window, R.WindowText: c.text, R.Base: c.base, R.AlternateBase: c.alternate_base,
        R.Text: c.text, R.Button: c.button, R.ButtonText: c.text, R.BrightText: c.bright_text,
        R.Highlight: c.selection, R.HighlightedText: c.selected_text, R.Accent: c.selection,
        R.ToolTipBase: c.tooltip, R.ToolTipText: c.tooltip_text, R.PlaceholderText: c.placeholder,
        R.Link: c.link, R.LinkVisited: c.link, R.Light: light, R.Midlight: midlight, R.Mid: mid,
        R.Dark: dark, R.Shadow: shadow,
    }
    disabled = {
        R.WindowText: c.disabled, R.Text: c.disabled, R.ButtonText: c.disabled, R.PlaceholderText: c.disabled,
        R.Base: c.disabled_base, R.Highlight: c.disabled_selection, R.Accent: c.disabled_selection,
    }
    p = QPalette()
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled):
        for role, value in roles.items():
            p.setColor(group, role, QColor(value))
    for role, value in disabled.items():
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(value))
    return p


#: Padding of a QListWidget's items (the view list), in pixels: across, up and down.
LIST_PADDING = (8, 6)

_PE = QStyle.PrimitiveElement


class ThemedStyle(QProxyStyle):
    """Fusion, with outlines that show on both themes.

    Fusion draws the outline of check boxes and radio buttons in the window
    colour darkened by 40% and the group box frame from a fixed grey image:
    on a dark window neither shows.  This style draws them again in the
    theme's ``border`` (indicators, also in item views and menus; the
    handles of scroll bars) and ``frame`` (group boxes) colours and pads the items of list widgets
    (the view list; combo box pop-ups are list views, not list widgets).
    Everything else is Fusion's.
    """

    def __init__(self, theme: Theme = LIGHT):
        super().__init__("Fusion")
        self.theme = theme

    def drawPrimitive(self, element, option, painter, widget=None) -> None:  # noqa: N802 - Qt's name
        if element == _PE.PE_FrameGroupBox:
            self._group_frame(option, painter)
            return
        super().drawPrimitive(element, option, painter, widget)
        if element in (_PE.PE_IndicatorCheckBox, _PE.PE_IndicatorRadioButton):
            self._indicator_outline(element, option, painter)

    def drawComplexControl(self, control, option, painter, widget=None) -> None:  # noqa: N802 - Qt's name
        super().drawComplexControl(control, option, painter, widget)
        if control == QStyle.ComplexControl.CC_ScrollBar:
            self._scroll_handle(option, painter, widget)

    def _scroll_handle(self, option, painter: QPainter, widget) -> None:
        """The scroll bar's handle, filled in the border colour (Fusion's is 1.1:1 on its groove in light)."""
        rect = self.subControlRect(QStyle.ComplexControl.CC_ScrollBar, option,
                                   QStyle.SubControl.SC_ScrollBarSlider, widget)
        if rect.width() < 4 or rect.height() < 4:
            return
        pressed = (option.state & QStyle.StateFlag.State_Sunken
                   and option.activeSubControls & QStyle.SubControl.SC_ScrollBarSlider)
        if not option.state & QStyle.StateFlag.State_Enabled:
            colour = option.palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        else:
            colour = QColor(self.theme.chrome.selection if pressed else self.theme.chrome.border)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(QRectF(rect).adjusted(2.5, 2.5, -2.5, -2.5), 3, 3)
        painter.restore()

    def sizeFromContents(self, kind, option, size, widget=None):  # noqa: N802 - Qt's name
        size = super().sizeFromContents(kind, option, size, widget)
        if kind == QStyle.ContentsType.CT_ItemViewItem and isinstance(widget, QListWidget):
            across, down = LIST_PADDING
            size = QSize(size.width() + 2 * across, size.height() + 2 * down)
        return size

    def subElementRect(self, element, option, widget=None):  # noqa: N802 - Qt's name
        rect = super().subElementRect(element, option, widget)
        if element == QStyle.SubElement.SE_ItemViewItemText and isinstance(widget, QListWidget):
            rect = rect.adjusted(LIST_PADDING[0], 0, 0, 0)
        return rect

    def _pen(self, colour: str, option) -> QPen:
        enabled = bool(option.state & QStyle.StateFlag.State_Enabled)
        pen = QPen(QColor(colour) if enabled else option.palette.color(QPalette.ColorGroup.Disabled,
                                                                      QPalette.ColorRole.Text))
        pen.setWidth(1)
        return pen

    def _indicator_outline(self, element, option, painter: QPainter) -> None:
        rect = QRect(option.rect)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(self._pen(self.theme.chrome.border, option))
        if element == _PE.PE_IndicatorRadioButton:
            # Fusion's circle: centred one pixel down and right of the rectangle's centre
            radius = (rect.width() + (rect.width() + 1) % 2) / 2.0 - 1
            centre = rect.center()
            painter.drawEllipse(QPointF(centre.x() + 1, centre.y() + 1), radius, radius)
        else:
            painter.translate(0.5, 0.5)
            painter.drawRect(rect.adjusted(0, 0, -1, -1))
        painter.restore()

    def _group_frame(self, option, painter: QPainter) -> None:
        # option.rect is the frame's rectangle (below the title); Fusion's image leaves its top row empty
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(self._pen(self.theme.chrome.frame, option))
        painter.translate(0.5, 0.5)
        painter.drawRoundedRect(QRect(option.rect).adjusted(0, 1, -1, -1), 3, 3)
        painter.restore()


class ThemeManager(QObject):
    """Holds the chosen mode and the resolved theme; emits ``changed``."""

    changed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self._mode = "system"
        self._theme = LIGHT
        self._style: ThemedStyle | None = None
        self._styled_app: QApplication | None = None
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
            raise ValueError(tr("error.theme.mode", modes=", ".join(MODES), mode=mode))
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
            self._install_style(app)
            self._style.theme = self._theme
            pal = palette(self._theme)
            app.setPalette(pal)
            QToolTip.setPalette(pal)
        self.changed.emit(self._theme)

    def _install_style(self, app: QApplication) -> None:
        """Once per application: the themed Fusion style.

        Setting a style resets the application palette, so this runs before
        the palette is set.
        """
        if self._styled_app is app:
            return
        self._styled_app = app
        self._style = ThemedStyle(self._theme)
        app.setStyle(self._style)


_manager: ThemeManager | None = None


def manager() -> ThemeManager:
    """The application's theme manager (created with the first call)."""
    global _manager
    if _manager is None:
        _manager = ThemeManager()
    return _manager


def current() -> Theme:
    return manager().theme
