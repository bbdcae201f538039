"""The main window's menu bar: File, Edit, View (theme, explanation, language, backend) and Help.

The window keeps the slots; this module only makes the actions and menus,
and files every action in ``window.actions_by_key`` under its text key (the
keyboard-shortcuts page lists them from the menus themselves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu

import compute
from gui import help as helppages
from gui import theme as themes
from gui.model import texts
from gui.model.texts import tr

if TYPE_CHECKING:
    from gui.app import MainWindow

SK = QKeySequence.StandardKey
#: Shortcuts of the window's own commands (the standard ones come from QKeySequence.StandardKey).
EXPLANATION_SHORTCUT = "Ctrl+E"
SHORTCUTS_SHORTCUT = "Ctrl+/"
LESSONS_SHORTCUT = "F2"


def add_action(window: MainWindow, key: str, slot, shortcut=None) -> QAction:
    """An action with the text ``tr(key)``, filed in ``window.actions_by_key[key]``."""
    action = QAction(tr(key), window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    try:
        action.setToolTip(tr(f"{key}.tooltip"))
    except KeyError:
        pass  # the menu text says it all
    action.triggered.connect(slot)
    window.actions_by_key[key] = action
    return action


def build_menus(window: MainWindow) -> None:
    window.actions_by_key = {}
    bar = window.menuBar()
    _file_menu(window, bar.addMenu(tr("menu.file")))
    _edit_menu(window, bar.addMenu(tr("menu.edit")))
    _view_menu(window, bar.addMenu(tr("menu.view")))
    help_menu = bar.addMenu(tr("menu.help"))
    help_menu.addAction(add_action(window, "action.howto", lambda: helppages.show_howto(window), SK.HelpContents))
    help_menu.addAction(add_action(window, "action.shortcuts", lambda: helppages.show_shortcuts(window),
                                   SHORTCUTS_SHORTCUT))
    help_menu.addAction(add_action(window, "action.lessons", lambda: window.lessons.open(), LESSONS_SHORTCUT))
    help_menu.addSeparator()
    help_menu.addAction(add_action(window, "action.about", window.about))


def _file_menu(window: MainWindow, menu: QMenu) -> None:
    menu.addAction(add_action(window, "action.open_session", window.open_session_dialog, SK.Open))
    menu.addAction(add_action(window, "action.save_session", window.save_session_dialog, SK.Save))
    menu.addSeparator()
    menu.addAction(add_action(window, "action.export_plots", lambda: window.export_dialog(plots=True, arrays=False)))
    menu.addAction(add_action(window, "action.export_arrays", lambda: window.export_dialog(plots=False, arrays=True)))
    menu.addSeparator()
    menu.addAction(add_action(window, "action.quit", window.close, SK.Quit))


def _edit_menu(window: MainWindow, menu: QMenu) -> None:
    undo = window.undo_stack.createUndoAction(window, tr("action.undo"))
    undo.setShortcut(QKeySequence(SK.Undo))
    redo = window.undo_stack.createRedoAction(window, tr("action.redo"))
    redo.setShortcut(QKeySequence(SK.Redo))
    window.actions_by_key["action.undo"], window.actions_by_key["action.redo"] = undo, redo
    menu.addAction(undo)
    menu.addAction(redo)
    menu.addSeparator()
    menu.addAction(add_action(window, "action.copy", lambda: window._clipboard("copy"), SK.Copy))
    menu.addAction(add_action(window, "action.paste", lambda: window._clipboard("paste"), SK.Paste))


def _choices(window: MainWindow, menu: QMenu, prefix: str, names, choose) -> dict[str, QAction]:
    """One checkable, mutually exclusive action per name (``action.PREFIX_NAME``), calling ``choose(name)``."""
    group = QActionGroup(window)
    group.setExclusive(True)
    actions = {}
    for name in names:
        action = add_action(window, f"action.{prefix}_{name}", lambda _=False, n=name: choose(n))
        action.setCheckable(True)
        group.addAction(action)
        menu.addAction(action)
        actions[name] = action
    return actions


def _view_menu(window: MainWindow, menu: QMenu) -> None:
    window.theme_actions = _choices(window, menu, "theme", themes.MODES, window.set_theme)

    menu.addSeparator()
    explanation = add_action(window, "action.explanation", window.set_explanation_shown, EXPLANATION_SHORTCUT)
    explanation.setCheckable(True)
    explanation.setChecked(True)
    menu.addAction(explanation)

    menu.addSeparator()
    window.language_actions = _choices(window, menu.addMenu(tr("menu.language")), "language", texts.LANGUAGES,
                                       window.set_language)

    menu.addSeparator()
    backend_menu = menu.addMenu(tr("menu.backend"))
    backend_menu.setToolTipsVisible(True)
    window.backend_actions = _choices(window, backend_menu, "backend", compute.backends.BACKENDS, window.set_backend)
    backend_menu.aboutToShow.connect(window._sync_backend_actions)
