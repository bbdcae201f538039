"""With Chinese chosen, no English words are left on screen in any view, tab or mode.

The scan reads what the user reads: every visible widget's text and tooltip
(labels, buttons, group boxes, tabs, combo items, table headers), every
menu, and every plot's title, axis labels, legend entries and text items.
Technical names every language keeps (softmax, top-k, float16, NumPy) are
allowed (tests/english_words.py).
"""

import re

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QTabWidget,
    QWidget,
)

from gui import registry
from gui.app import MainWindow
from gui.qt import pg
from gui.widgets.plot import Plot
from tests.english_words import english_words
from tests.gui.test_fit import settle, show_tabs

_TAGS = re.compile(r"<[^<>]*>")


def widget_texts(widget: QWidget) -> list[str]:
    out = [widget.toolTip()]
    if isinstance(widget, (QLabel, QAbstractButton)):
        out.append(widget.text())
    if isinstance(widget, QGroupBox):
        out.append(widget.title())
    if isinstance(widget, QLineEdit):
        out.append(widget.placeholderText())
    if isinstance(widget, QComboBox):
        out += [widget.itemText(i) for i in range(widget.count())]
    if isinstance(widget, QTabWidget):
        out += [widget.tabText(i) for i in range(widget.count())] + [widget.tabToolTip(i) for i in range(widget.count())]
    if isinstance(widget, QAbstractItemView) and widget.model() is not None:
        model = widget.model()
        for orientation, count in ((1, model.columnCount()), (2, model.rowCount() if model.rowCount() < 30 else 0)):
            from PySide6.QtCore import Qt

            o = Qt.Orientation(orientation)
            for i in range(count):
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    value = model.headerData(i, o, role)
                    if isinstance(value, str):
                        out.append(value)
    return out


def plot_texts(plot: Plot) -> list[str]:
    item = plot.getPlotItem()
    out = [item.titleLabel.text]
    for side in ("left", "bottom", "right", "top"):
        axis = item.getAxis(side)
        if axis.isVisible():
            out.append(axis.labelText)
    for scene_item in plot.scene().items():
        if isinstance(scene_item, pg.TextItem) and scene_item.isVisible():
            out.append(scene_item.toPlainText())
        elif isinstance(scene_item, pg.LabelItem) and scene_item.isVisible():
            out.append(scene_item.text)
    return out


def english_on_screen(window: MainWindow, where: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    view = window.views[window.current_name]
    texts = []
    for w in view.findChildren(QWidget):
        if w.isVisibleTo(view):
            texts += widget_texts(w)
    for plot in view.findChildren(Plot):
        if plot.isVisibleTo(view):
            texts += plot_texts(plot)
    # the user's own words are data, not interface: the attention sentence's tokens
    data = {w.lower() for w in window.lab.models["attention"].sentence.split()}
    for text in texts:
        words = [w for w in english_words(_TAGS.sub(" ", text or "")) if w.lower() not in data]
        if words:
            found.setdefault(repr(text[:70]), [where, *words])
    return found


def menu_english(window: MainWindow) -> dict[str, list[str]]:
    found = {}
    # a backend's tooltip quotes why it is unavailable in the driver's own words (CUDA speaks English)
    from_outside = {a.toolTip() for a in window.backend_actions.values() if not a.isEnabled()}
    for menu in window.menuBar().findChildren(QMenu):
        for action in [menu.menuAction(), *menu.actions()]:
            for text in {action.text(), action.toolTip()} - from_outside:
                if english_words(text):
                    found[f"menu: {text!r}"] = english_words(text)
    return found


@pytest.fixture
def chinese_window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("SOFTMAX_LAB_LANG", "zh")
    w = MainWindow(settings_dir=tmp_path / "cfg", restore=False)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_no_english_words_in_any_view_tab_or_mode(chinese_window):
    window = chinese_window
    found = menu_english(window)
    for spec in registry.VIEWS:
        view = window.show_view(spec.name)
        settle(view)
        model = window.lab.models[spec.name]
        states = [("default", None, None)] + [
            (f"{name}={value}", name, value)
            for name, p in model.params().items() if p.kind == "choice" for value in p.choices
        ]
        for where, name, value in states:
            if name is not None:
                model.set_param(name, value)
                settle(view)
            tabs = view.findChildren(QTabWidget)
            for tab_widget in tabs or [None]:
                for i in range(tab_widget.count() if tab_widget else 1):
                    if tab_widget is not None:
                        tab_widget.setCurrentIndex(i)
                        settle(view)
                    found.update(english_on_screen(window, f"{spec.name} {where} tab {i}"))
            if name is not None:
                model.set_param(name, model.params()[name].default)
        show_tabs(view)
    QApplication.processEvents()
    assert not found, f"{len(found)} texts:\n" + "\n".join(f"{k} -> {v}" for k, v in list(found.items())[:80])
