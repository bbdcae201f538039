"""Help: the keyboard-shortcuts page (read from the menus), the how-to page, tooltips in users' words."""

import json
import re

import pytest
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from gui import help as helppages
from gui import registry
from gui.model.texts import tr
from resources import RESOURCES

NATIVE = QKeySequence.SequenceFormat.NativeText
SK = QKeySequence.StandardKey
#: What a tooltip must not say: a function of the code ("compute.softmax", "np.log"), a
#: snake_case identifier ("log_softmax", "masked_fill"), a call ("softmax()").  Subscripts
#: of one letter (d_k, s_j) are mathematics, not code.
CODE_NAME = re.compile(r"\bcompute\.\w|\bnp\.\w|\b[A-Za-z]+_[A-Za-z]{2,}\w*|\w\(\)")


def window_menus(window) -> tuple[list[QMenu], dict[QAction, QMenu]]:
    """The menu bar's menus in order (their submenus are reached through their actions)."""
    by_action = {m.menuAction(): m for m in window.menuBar().findChildren(QMenu)}
    return [by_action[a] for a in window.menuBar().actions()], by_action


def menu_actions(window) -> list[QAction]:
    """Every command in the menus (no separators, no submenu entries), walked here independently."""
    out = []
    menus, by_action = window_menus(window)
    menus = list(menus)
    while menus:
        menu = menus.pop(0)
        for action in menu.actions():
            if action in by_action:
                menus.append(by_action[action])
            elif not action.isSeparator():
                out.append(action)
    return out


def close_dialogs(window) -> None:
    for name in ("shortcuts_dialog", "howto_dialog"):
        dialog = getattr(window, name, None)
        if dialog is not None:
            dialog.close()
    QApplication.processEvents()


def test_the_help_menu_holds_the_two_pages(qtbot, window):
    help_menu = window_menus(window)[0][-1]
    texts = [helppages.plain(a.text()) for a in help_menu.actions() if not a.isSeparator()]
    assert texts == ["How to Use Softmax Lab", "Keyboard Shortcuts", "Lessons", "About Softmax Lab"]
    assert window.actions_by_key["action.howto"].shortcut() == QKeySequence(SK.HelpContents)
    window.actions_by_key["action.shortcuts"].trigger()
    window.actions_by_key["action.howto"].trigger()
    try:
        assert window.shortcuts_dialog.isVisible() and window.howto_dialog.isVisible()
        assert not window.shortcuts_dialog.isModal()  # open beside the window while trying keys
        for dialog in (window.shortcuts_dialog, window.howto_dialog):
            screen = dialog.screen().availableGeometry()
            assert dialog.width() <= screen.width() and dialog.height() <= screen.height()
    finally:
        close_dialogs(window)


def test_the_shortcuts_page_lists_every_menu_command_with_its_keys(qtbot, window):
    window.lab.scores.set_value(0, 3.0)  # Undo's text is now "Undo edit scores"; the page says "Undo"
    assert window.actions_by_key["action.undo"].text() != tr("action.undo")
    texts = {a: k for k, a in window.actions_by_key.items()}
    dialog = helppages.show_shortcuts(window)
    try:
        rows = dialog.rows()
        actions = menu_actions(window)
        assert len(rows) == len(actions) >= 15
        by_command = {row[0]: row for row in rows}
        for action in actions:
            command, menu, keys = by_command[helppages.plain(tr(texts[action]))]
            assert keys == (action.shortcut().toString(NATIVE) or tr("help.shortcuts.none")), command
            assert "&" not in command and menu
        # the standard keys, as this platform writes them
        assert by_command["Open Session…"][2] == QKeySequence(SK.Open).toString(NATIVE)
        assert by_command["Undo"][2] == QKeySequence(SK.Undo).toString(NATIVE)
        assert by_command["Show Explanation"][1:] == ("View", QKeySequence("Ctrl+E").toString(NATIVE))
        assert by_command["NumPy (CPU)"][1] == "View › Compute Backend"  # a submenu's path
        assert by_command["Export Plots…"][2] == tr("help.shortcuts.none")
        assert not dialog.table.editTriggers()  # read-only
    finally:
        close_dialogs(window)


def test_the_shortcuts_page_is_read_from_the_actions_not_typed(qtbot, window):
    """A new command, or a changed shortcut, shows up the next time the page opens."""
    extra = QAction("Zoom &In", window)
    extra.setShortcut(QKeySequence(SK.ZoomIn))
    window_menus(window)[0][2].addAction(extra)
    window.actions_by_key["action.export_plots"].setShortcut(QKeySequence("Ctrl+Shift+P"))
    helppages.show_shortcuts(window).close()
    dialog = helppages.show_shortcuts(window)  # the same dialog, refreshed
    try:
        by_command = {row[0]: row for row in dialog.rows()}
        assert by_command["Zoom In"] == ("Zoom In", "View", QKeySequence(SK.ZoomIn).toString(NATIVE))
        assert by_command["Export Plots…"][2] == QKeySequence("Ctrl+Shift+P").toString(NATIVE)
    finally:
        close_dialogs(window)


def test_the_howto_page_names_menus_that_exist(qtbot, window):
    text = tr("help.howto.text")
    assert text.count("### ") >= 4
    dialog = helppages.show_howto(window)
    try:
        shown = dialog.browser.toPlainText()
        assert "Pick a view" in shown and "###" not in shown
        items = {helppages.plain(action.text()) for action in menu_actions(window)}
        menu_titles = {helppages.plain(a.text()) for a in window.menuBar().actions()}
        references = re.findall(r"<b>([^<›]+) › ([^<]+)</b>", text)  # menu paths are set in bold
        assert len(references) >= 5
        for menu, item in references:
            assert menu in menu_titles
            assert any(name.rstrip("…") == item for name in items), f"{menu} › {item}"
        assert "softmax-lab export" in text
    finally:
        close_dialogs(window)


def test_the_code_name_check_catches_what_it_is_for():
    for bad in ("compute.log_softmax: c·s − LSE", "np.log(softmax(c·s))", "masked_fill", "call softmax() here"):
        assert CODE_NAME.search(bad), bad
    for fine in ("softmax(QKᵀ/√d_k)V", "∂α_i/∂s_j", "log(softmax(c·s))", "e.g. 1/√d_k"):
        assert not CODE_NAME.search(fine), fine


def tooltip_texts() -> dict[str, str]:
    out = {}
    for path in sorted((RESOURCES / "texts" / "en").glob("*.json")):
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            if key.endswith(".tooltip") or key.endswith("tooltip_head"):
                out[f"{path.name}:{key}"] = value
    return out


def test_tooltip_texts_name_no_code():
    texts = tooltip_texts()
    assert len(texts) > 100
    offences = {k: v for k, v in texts.items() if CODE_NAME.search(v)}
    assert offences == {}


@pytest.mark.parametrize("spec", registry.VIEWS, ids=lambda s: s.name)
def test_the_tooltips_on_screen_name_no_code(qtbot, window, spec):
    view = window.show_view(spec.name)
    view.flush()
    QApplication.processEvents()
    tips = {w.toolTip() for w in view.findChildren(QWidget) if w.toolTip()}
    tips |= {a.toolTip() for a in window.findChildren(QAction)}
    tips |= {window.nav.item(i).toolTip() for i in range(window.nav.count())}
    assert len(tips) > 5
    assert sorted(t for t in tips if CODE_NAME.search(t)) == []
