"""The Help pages: keyboard shortcuts (read from the window's menus) and how to use the app."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gui.model.texts import tr
from gui.widgets.explanation import explanation_html

#: Separates a submenu from its menu in the shortcuts page ("View › Compute Backend").
MENU_SEPARATOR = " › "


def plain(text: str) -> str:
    """A menu text without its mnemonic: "&File" → "File", "文件(&F)" → "文件" ("&&" is a literal "&")."""
    text = re.sub(r"\s*\(&[^&)]\)", "", text)
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def keys_text(action: QAction) -> str:
    """The action's shortcuts as the platform writes them ("Ctrl+S"), or "" for none."""
    return ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in action.shortcuts())


def menus_by_action(window: QMainWindow) -> dict[QAction, QMenu]:
    """Each menu of the window's menu bar (submenus too), by the action that opens it.

    Found from the menus, not with ``QAction.menu()``: PySide ties the wrapper
    that returns to the action's wrapper, and it dies with it.
    """
    return {menu.menuAction(): menu for menu in window.menuBar().findChildren(QMenu)}


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(command, menu, keys) for every command in the window's menus, in menu order."""
    rows: list[tuple[str, str, str]] = []
    menus = menus_by_action(window)
    # the name the command was made with: Undo's own text grows with the stack ("Undo edit scores")
    names = {action: tr(key) for key, action in getattr(window, "actions_by_key", {}).items()}

    def walk(menu: QMenu, path: list[str]) -> None:
        for action in menu.actions():
            if action.isSeparator() or not action.isVisible():
                continue
            sub = menus.get(action)
            if sub is not None:
                walk(sub, [*path, plain(sub.title())])
            else:
                name = names.get(action, action.text())
                rows.append((plain(name), MENU_SEPARATOR.join(path), keys_text(action)))

    for top in window.menuBar().actions():
        menu = menus.get(top)
        if menu is not None:
            walk(menu, [plain(menu.title())])
    return rows


def fit_to_screen(dialog: QWidget, width: int, height: int) -> None:
    """Resize ``dialog`` to ``width`` × ``height``, or less where its screen is smaller."""
    screen = dialog.screen().availableGeometry()
    dialog.resize(min(width, int(screen.width() * 0.9)), min(height, int(screen.height() * 0.9)))


class ShortcutsDialog(QDialog):
    """Every menu command, its menu and its shortcut, in a read-only table."""

    COLUMNS = ("help.shortcuts.col.command", "help.shortcuts.col.menu", "help.shortcuts.col.keys")

    def __init__(self, window: QMainWindow):
        super().__init__(window)
        self.setObjectName("shortcuts_dialog")
        self.setWindowTitle(tr("help.shortcuts.title"))
        intro = QLabel(tr("help.shortcuts.intro"))
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("shortcuts")
        self.table.setHorizontalHeaderLabels([tr(k) for k in self.COLUMNS])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(False)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.table, 1)
        lay.addWidget(buttons)
        self.refresh(window)
        fit_to_screen(self, 560, 520)

    def refresh(self, window: QMainWindow) -> None:
        rows = shortcut_rows(window)
        self.table.setRowCount(len(rows))
        none = tr("help.shortcuts.none")
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text or none)
                if c == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()

    def rows(self) -> list[tuple[str, ...]]:
        """The table's texts, row by row (for tests)."""
        return [tuple(self.table.item(r, c).text() for c in range(self.table.columnCount()))
                for r in range(self.table.rowCount())]


class HowToDialog(QDialog):
    """A short guide to the window: views, shared scores, plots, undo, sessions, export."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("howto_dialog")
        self.setWindowTitle(tr("help.howto.title"))
        self.browser = QTextBrowser()
        self.browser.setObjectName("howto")
        self.browser.setOpenExternalLinks(False)
        self.browser.setHtml(explanation_html(tr("help.howto.text")))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)
        fit_to_screen(self, 620, 600)


def _show(window: QMainWindow, attribute: str, make) -> QDialog:
    """Show the window's dialog kept in ``attribute``, made the first time; it stays non-modal."""
    dialog = getattr(window, attribute, None)
    if dialog is None:
        dialog = make()
        setattr(window, attribute, dialog)
    elif isinstance(dialog, ShortcutsDialog):
        dialog.refresh(window)
    if dialog.isVisible():  # open behind the window: bring it forward
        dialog.raise_()
        dialog.activateWindow()
    dialog.show()
    return dialog


def show_shortcuts(window: QMainWindow) -> ShortcutsDialog:
    return _show(window, "shortcuts_dialog", lambda: ShortcutsDialog(window))


def show_howto(window: QMainWindow) -> HowToDialog:
    return _show(window, "howto_dialog", lambda: HowToDialog(window))
