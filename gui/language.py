"""Switching the interface language at run time, and the fonts that go with it.

The texts are read with ``tr()`` when a widget is built, so a switch rebuilds
what shows them rather than asking every widget to re-read its labels: the
menus, the view list and the shown view are rebuilt at once (the other views
are dropped and built again when next shown), the open Help dialogs are
reopened, and the Lessons panel re-reads its texts.  Everything the user
made lives in the models, which the rebuilt views read; the view's tab
choices are carried over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QLibraryInfo, QTranslator
from PySide6.QtGui import QActionGroup, QFont, QFontDatabase
from PySide6.QtWidgets import QApplication, QMenuBar, QTabWidget, QWidget

from gui import fonts, registry
from gui.model import texts
from gui.model.texts import tr

if TYPE_CHECKING:
    from gui.app import MainWindow

_warned = False
_base_families: list[str] | None = None
_qt_translator: QTranslator | None = None
#: Qt's own translations (the Close, Cancel, Yes buttons of its dialogs) by language.
QT_CATALOGUES = {"zh": "qtbase_zh_CN"}


def cjk_family() -> str | None:
    """The CJK font family Qt will use for Chinese text, or None when none is installed."""
    return fonts.first_cjk(QFontDatabase.families())


def apply_fonts(lang: str) -> bool:
    """Give the application font a CJK family after its own when ``lang`` is Chinese.

    Returns False when Chinese was asked for and no CJK font is installed.
    """
    global _base_families
    app = QApplication.instance()
    if app is None:
        return True
    font = QFont(app.font())
    if _base_families is None:
        _base_families = list(font.families()) or [font.family()]
    family = cjk_family() if lang == "zh" else None
    wanted = [*_base_families, family] if family else list(_base_families)
    if list(font.families()) != wanted:
        font.setFamilies(wanted)
        app.setFont(font)
    _install_qt_translation(app, lang)
    return lang != "zh" or family is not None


def _install_qt_translation(app: QApplication, lang: str) -> None:
    """Qt's own dialog buttons in ``lang`` (its catalogues ship with PySide6); English needs none."""
    global _qt_translator
    if _qt_translator is not None:
        app.removeTranslator(_qt_translator)
        _qt_translator = None
    catalogue = QT_CATALOGUES.get(lang)
    if catalogue is None:
        return
    translator = QTranslator(app)
    if translator.load(catalogue, QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(translator)
        _qt_translator = translator


def warn_once_without_cjk(window: MainWindow) -> None:
    """Say once per run that Chinese needs a font the system lacks."""
    global _warned
    if texts.language() == "zh" and not apply_fonts("zh") and not _warned:
        _warned = True
        window.statusBar().showMessage(tr("language.no_cjk_font"), 30000)


def tab_choices(view: QWidget) -> list[int]:
    return [tabs.currentIndex() for tabs in view.findChildren(QTabWidget)]


def restore_tab_choices(view: QWidget, choices: list[int]) -> None:
    for tabs, index in zip(view.findChildren(QTabWidget), choices, strict=False):
        if 0 <= index < tabs.count():
            tabs.setCurrentIndex(index)


def switch(window: MainWindow, lang: str) -> None:
    """Show ``window`` in ``lang`` from now on; the choice is remembered."""
    texts.set_language(lang)
    window.settings.setValue("language", lang)
    apply_fonts(lang)
    retranslate(window)
    window.statusBar().showMessage(tr("language.switched", name=tr(f"action.language_{lang}")), 5000)
    warn_once_without_cjk(window)  # after: this line is the one that matters


def retranslate(window: MainWindow) -> None:
    """Rebuild everything in ``window`` that shows texts, keeping every choice the user made."""
    window.setWindowTitle(tr("app.title"))
    for row, spec in enumerate(registry.VIEWS):
        item = window.nav.item(row)
        item.setText(spec.title)
        item.setToolTip(tr(f"view.{spec.name}.tooltip"))
    _rebuild_menus(window)
    window.backend_label.setToolTip(tr("readout.backend.tooltip", min=f"{_gpu_min():,}"))
    current = window.current_name
    for name in list(window.views):
        window.forget_view(name)
    window.stack.setCurrentWidget(window.view(current))
    for attribute in ("shortcuts_dialog", "howto_dialog"):
        _reopen_dialog(window, attribute)
    panel = getattr(window, "lessons", None)
    if panel is not None and hasattr(panel, "retranslate"):
        panel.retranslate()


def _gpu_min() -> int:
    import compute

    return compute.backends.GPU_MIN_ELEMENTS


def _rebuild_menus(window: MainWindow) -> None:
    from gui import menus

    for action in getattr(window, "actions_by_key", {}).values():
        action.deleteLater()
    for group in window.findChildren(QActionGroup):
        group.deleteLater()
    window.setMenuBar(QMenuBar(window))  # Qt deletes the old bar and its menus
    menus.build_menus(window)
    window.sync_actions()
    window._sync_backend_actions()


def _reopen_dialog(window: MainWindow, attribute: str) -> None:
    from gui import help as helppages

    dialog = getattr(window, attribute, None)
    if dialog is None:
        return
    shown = dialog.isVisible()
    dialog.close()
    dialog.deleteLater()
    setattr(window, attribute, None)
    if shown:
        {"shortcuts_dialog": helppages.show_shortcuts, "howto_dialog": helppages.show_howto}[attribute](window)
