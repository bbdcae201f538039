"""View > Language: the interface switches between English and Chinese at run time.

Nothing the user made is lost (the models keep it; the views are rebuilt
from them), the choice is remembered, the first launch follows the saved
choice, and ``--lang`` sets the language of a headless export's figures.
"""

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication, QLabel

from gui import language, registry
from gui.app import MainWindow
from gui.help import plain
from gui.model import texts
from gui.model.texts import tr


def settle(view=None):
    for _ in range(3):
        QApplication.processEvents()
    if view is not None:
        view.flush()


def in_lang(lang, key, **fmt):
    """``tr(key)`` as it reads in ``lang``, whatever the language now."""
    before = texts._chosen
    texts.set_language(lang)
    try:
        return tr(key, **fmt)
    finally:
        texts.set_language(before)


def menu_titles(window):
    return [a.text() for a in window.menuBar().actions()]


def label_texts(view):
    return {w.text() for w in view.findChildren(QLabel) if w.isVisibleTo(view) and w.text()}


def test_switching_language_rebuilds_menus_list_and_view_and_keeps_every_choice(window):
    view = window.show_view("sampling")
    settle(view)
    view.tabs.setCurrentIndex(2)
    window.lab.scores.set_values([5.2, 3.1, 1.8])
    window.lab.models["calculator"].temperature = 0.5
    window.lab.models["sampling"].top_k = 7
    before_en = label_texts(view)

    window.set_language("zh")
    settle()
    assert texts.language() == "zh"
    assert menu_titles(window) == [in_lang("zh", k) for k in ("menu.file", "menu.edit", "menu.view", "menu.help")]
    assert window.nav.item(0).text() == in_lang("zh", "view.calculator.title") != in_lang("en", "view.calculator.title")
    assert window.windowTitle() == in_lang("zh", "app.title")
    rebuilt = window.views["sampling"]
    assert rebuilt is not view and window.stack.currentWidget() is rebuilt  # the same view, in Chinese
    assert rebuilt.tabs.currentIndex() == 2
    assert set(window.views) == {"sampling"}  # the others are rebuilt when next shown
    assert label_texts(rebuilt) != before_en
    # everything the user made is still there
    assert window.lab.scores.values.tolist() == [5.2, 3.1, 1.8]
    assert window.lab.models["calculator"].temperature == 0.5
    assert window.lab.models["sampling"].top_k == 7
    assert window.language_actions["zh"].isChecked() and not window.language_actions["en"].isChecked()
    assert window.settings.value("language") == "zh"
    calculator = window.show_view("calculator")
    settle(calculator)
    assert calculator.model.temperature == 0.5

    window.set_language("en")
    settle()
    assert menu_titles(window) == ["&File", "&Edit", "&View", "&Help"]
    assert window.nav.item(0).text() == "Calculator"


def test_the_rebuilt_menus_work_and_hold_no_stale_action(window):
    window.set_language("zh")
    settle()
    names = [plain(a.text()) for a in window.actions_by_key.values()]
    assert len(names) == len(set(window.actions_by_key))
    window.actions_by_key["action.theme_dark"].trigger()
    assert window.theme_actions["dark"].isChecked()
    shown = window.explanation_shown
    assert window.actions_by_key["action.explanation"].isChecked() == shown
    window.actions_by_key["action.explanation"].trigger()  # fold or unfold it, in the rebuilt view too
    assert window.views[window.current_name].explanation_shown == (not shown)
    window.language_actions["en"].trigger()
    settle()
    assert texts.language() == "en"
    assert window.actions_by_key["action.explanation"].isChecked() == (not shown)


def test_an_open_help_dialog_is_reopened_in_the_new_language(window):
    from gui import help as helppages

    dialog = helppages.show_shortcuts(window)
    assert dialog.windowTitle() == in_lang("en", "help.shortcuts.title")
    window.set_language("zh")
    settle()
    reopened = window.shortcuts_dialog
    assert reopened is not dialog and reopened.isVisible()
    assert reopened.windowTitle() == in_lang("zh", "help.shortcuts.title")
    commands = {row[0] for row in reopened.rows()}
    assert plain(in_lang("zh", "action.open_session")) in commands
    reopened.close()


def test_a_saved_language_is_used_at_the_next_launch(qtbot, tmp_path, monkeypatch):
    first = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(first)
    first.set_language("zh")
    first.close()
    texts.set_language(None)
    monkeypatch.delenv("SOFTMAX_LAB_LANG")
    second = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(second)
    assert texts.language() == "zh"
    assert second.nav.item(1).text() == in_lang("zh", "view.temperature.title")
    assert second.language_actions["zh"].isChecked()
    second.close()


def test_without_a_cjk_font_the_window_says_so_once(window, monkeypatch):
    monkeypatch.setattr(language, "cjk_family", lambda: None)
    monkeypatch.setattr(language, "_warned", False)
    window.set_language("zh")
    assert window.statusBar().currentMessage() == in_lang("zh", "language.no_cjk_font")
    shown = []
    monkeypatch.setattr(window.statusBar(), "showMessage", lambda text, *a: shown.append(text))
    window.set_language("en")
    window.set_language("zh")
    assert in_lang("zh", "language.no_cjk_font") not in shown  # once per run


def test_chinese_asks_for_a_cjk_family_after_the_app_font(qapp):
    app = QApplication.instance()
    language.apply_fonts("zh")
    family = language.cjk_family()
    if family is None:
        pytest.skip("no CJK font installed here")
    assert app.font().families()[-1] == family
    language.apply_fonts("en")
    assert family not in app.font().families()


def test_export_with_lang_zh_writes_chinese_titles(tmp_path):
    from gui.entry import main

    assert main(["export", "--view", "calculator", "--lang", "zh", "--out", str(tmp_path)]) == 0
    svg = (tmp_path / "calculator_probs.svg").read_text(encoding="utf-8")
    assert in_lang("zh", "plot.probs.title") in svg
    assert in_lang("en", "plot.probs.title") not in svg
    assert "Noto Sans CJK SC" in svg and "sans-serif" in svg
    assert np.load(tmp_path / "calculator.npz", allow_pickle=False)["probs"].shape == (4,)
    assert texts.language() == "zh"


def test_an_unknown_lang_is_refused_in_one_line(capsys):
    from gui.entry import main

    assert main(["--lang", "fr"]) == 2
    err = capsys.readouterr().err
    assert "fr" in err and "en, zh" in err and err.count("\n") == 1


@pytest.mark.parametrize("name", [spec.name for spec in registry.VIEWS])
def test_every_view_builds_in_chinese(make_view, name):
    texts.set_language("zh")
    view = make_view(name)
    view.flush()
    assert view.explanation.isVisibleTo(view) in (True, False)
    assert any("\u4e00" <= ch <= "\u9fff" for text in label_texts(view) for ch in text), name


def test_a_chinese_menu_text_loses_its_whole_mnemonic():
    from gui.help import plain

    assert plain("文件(&F)") == "文件"
    assert plain("导出图表(&X)…") == "导出图表…"
    assert plain("&File") == "File"
    assert plain("Fish && &Chips") == "Fish & Chips"


def test_qt_s_own_buttons_follow_the_language(qtbot):
    from PySide6.QtWidgets import QDialogButtonBox

    language.apply_fonts("zh")
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    qtbot.addWidget(box)
    zh_text = box.button(QDialogButtonBox.StandardButton.Close).text()
    language.apply_fonts("en")
    box_en = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    qtbot.addWidget(box_en)
    assert box_en.button(QDialogButtonBox.StandardButton.Close).text().replace("&", "") == "Close"
    assert zh_text != box_en.button(QDialogButtonBox.StandardButton.Close).text()
    assert any("\u4e00" <= ch <= "\u9fff" for ch in zh_text)
